"""Reading the model's scene memory, and every way an answer can fail to be one."""

import pytest

from charmemory.core.books.answer import (
    BadKeywordsError,
    MalformedJsonError,
    MissingFieldError,
    NoJsonError,
    SceneAnswer,
    SceneAnswerError,
    TruncatedAnswerError,
    UnbalancedJsonError,
    parse_scene_answer,
)

GOOD = '{"title": "Dawn", "content": "- Mira sailed.", "keywords": ["dawn", " docks ", "", "dawn"]}'
EXPECTED = SceneAnswer("Dawn", "- Mira sailed.", ("dawn", "docks"))


@pytest.mark.parametrize(
    "text",
    [
        GOOD,
        f"```json\n{GOOD}\n```",
        f"Here is the memory you asked for:\n\n{GOOD}\n\nI hope it helps.",
        f"<think>The scene is about {{dawn}}.</think>\n{GOOD}",
        f"<thinking>hm</thinking>```\n{GOOD}\n```",
        GOOD.replace('"dawn"]', '"dawn",]'),  # a trailing comma
        '{"title": "Dawn", "summary": "- Mira sailed.", "keywords": ["dawn", "docks"]}',
    ],
)
def test_the_memory_is_found_inside_whatever_surrounds_it(text: str) -> None:
    assert parse_scene_answer(text) == EXPECTED


@pytest.mark.parametrize(
    ("text", "finish", "error", "message", "recoverable"),
    [
        ("I cannot summarise this scene.", None, NoJsonError, "holds no JSON object", True),
        ("", None, NoJsonError, "holds no JSON object", True),
        ('{"title": "Dawn", "content": "- Mira sa', None, UnbalancedJsonError, "cut off", False),
        ('{"title": "Dawn" "content": 1}', None, MalformedJsonError, "does not parse", True),
        ('{"content": "x", "keywords": []}', None, MissingFieldError, "no title", True),
        ('{"title": "T", "keywords": []}', None, MissingFieldError, "no content", True),
        (
            '{"title": "T", "content": "  ", "keywords": []}',
            None,
            MissingFieldError,
            "no content",
            True,
        ),
        ('["a", "b"]', None, MissingFieldError, "a list, not an object", True),
        ('{"title": "T", "content": "x"}', None, BadKeywordsError, "not missing", True),
        (
            '{"title": "T", "content": "x", "keywords": "a, b"}',
            None,
            BadKeywordsError,
            "not a str",
            True,
        ),
        (
            '{"title": "T", "content": "x", "keywords": ["a", 3]}',
            None,
            BadKeywordsError,
            "all be text",
            True,
        ),
        (
            '{"title": "Dawn", "content": "- Mira sa',
            "length",
            TruncatedAnswerError,
            "length limit",
            False,
        ),
    ],
)
def test_each_failure_has_its_own_error(
    text: str, finish: str | None, error: type[SceneAnswerError], message: str, recoverable: bool
) -> None:
    with pytest.raises(error, match=message) as raised:
        parse_scene_answer(text, finish_reason=finish)
    assert raised.value.recoverable is recoverable
    assert "\n" not in str(raised.value)


def test_a_complete_answer_stopped_at_the_limit_is_still_read() -> None:
    assert parse_scene_answer(GOOD, finish_reason="length") == EXPECTED
