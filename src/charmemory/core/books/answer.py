"""Reading the model's scene memory: `{"title", "content", "keywords": [...]}`.

The answer is asked for as JSON following `SCENE_SCHEMA`, but a model may still
wrap it in a code fence, add prose around it or think aloud first: the JSON is
found inside all that. What cannot be read fails with one clear line naming
what went wrong: no JSON at all, JSON cut off (unbalanced), JSON that does not
parse, a missing field, bad keywords, or an answer stopped by the length limit.
The first four are worth asking again (`recoverable`); an answer cut short
would be cut short again until the response length is raised.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from charmemory.errors import CharMemoryError

SCENE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "title": {"type": "string", "description": "A short title for the scene"},
        "content": {"type": "string", "description": "The memory of the scene"},
        "keywords": {
            "type": "array",
            "items": {"type": "string"},
            "description": "Words that should bring the memory back",
        },
    },
    "required": ["title", "content", "keywords"],
    "additionalProperties": False,
}
SCHEMA_NAME = "scene_memory"

_REASONING = re.compile(r"<(think|thinking|reasoning)>.*?</\1>", re.IGNORECASE | re.DOTALL)
_FENCE = re.compile(r"```[\w-]*\s*(.*?)```", re.DOTALL)
_TRAILING_COMMA = re.compile(r",(\s*[}\]])")
_INVISIBLE = re.compile(r"[\u200b-\u200d\u2060\ufeff]")
# STMB also accepts these names for the content.
_CONTENT_FIELDS = ("content", "summary", "memory_content")
_SNIPPET = 80


@dataclass(frozen=True)
class SceneAnswer:
    title: str
    content: str
    keywords: tuple[str, ...]


class SceneAnswerError(CharMemoryError):
    """The answer could not be read as a scene memory."""

    recoverable = True

    def __init__(self, message: str, raw: str = ""):
        super().__init__(message)
        self.raw = raw


class NoJsonError(SceneAnswerError):
    pass


class UnbalancedJsonError(SceneAnswerError):
    recoverable = False


class MalformedJsonError(SceneAnswerError):
    pass


class MissingFieldError(SceneAnswerError):
    pass


class BadKeywordsError(SceneAnswerError):
    pass


class TruncatedAnswerError(SceneAnswerError):
    recoverable = False


def parse_scene_answer(text: str, *, finish_reason: str | None = None) -> SceneAnswer:
    """The scene memory in ``text``, or the error that says what is wrong with it."""
    cleaned = _INVISIBLE.sub("", _REASONING.sub("", text.replace("\r\n", "\n"))).strip()
    field_error: SceneAnswerError | None = None
    for candidate in _candidates(cleaned):
        parsed = _loads(candidate)
        if parsed is _UNPARSED:
            continue
        try:
            return _answer(parsed, cleaned)
        except SceneAnswerError as error:
            field_error = field_error or error
    if finish_reason == "length":
        raise TruncatedAnswerError(
            "the answer was cut off by the response length limit before its JSON ended; "
            "raise model.max_tokens",
            cleaned,
        )
    if field_error is not None:
        raise field_error
    if "{" not in cleaned:
        raise NoJsonError(
            f"the answer holds no JSON object (it began: {_snippet(cleaned)!r})", cleaned
        )
    if _unbalanced(cleaned):
        raise UnbalancedJsonError(
            "the answer's JSON is cut off (its braces or quotes do not close); "
            "raise model.max_tokens",
            cleaned,
        )
    raise MalformedJsonError(
        f"the answer's JSON does not parse (it began: {_snippet(cleaned)!r})", cleaned
    )


_UNPARSED = object()


def _candidates(text: str) -> list[str]:
    found = [block.strip() for block in _FENCE.findall(text)]
    found.append(text)
    balanced = _balanced_object(text)
    if balanced:
        found.append(balanced)
    return list(dict.fromkeys(found))


def _loads(candidate: str) -> Any:
    for attempt in (candidate, _TRAILING_COMMA.sub(r"\1", candidate)):
        try:
            return json.loads(attempt)
        except ValueError:
            continue
    return _UNPARSED


def _answer(parsed: Any, raw: str) -> SceneAnswer:
    if not isinstance(parsed, dict):
        raise MissingFieldError(
            f"the answer's JSON is a {type(parsed).__name__}, not an object with title, "
            "content and keywords",
            raw,
        )
    content = next(
        (parsed[name] for name in _CONTENT_FIELDS if isinstance(parsed.get(name), str)), None
    )
    if content is None or not content.strip():
        raise MissingFieldError('the answer has no content (its JSON lacks "content")', raw)
    title = parsed.get("title")
    if not isinstance(title, str) or not title.strip():
        raise MissingFieldError('the answer has no title (its JSON lacks "title")', raw)
    keywords = parsed.get("keywords")
    if not isinstance(keywords, list):
        shown = "missing" if keywords is None else f"a {type(keywords).__name__}"
        raise BadKeywordsError(f"the answer's keywords must be a list of words, not {shown}", raw)
    if not all(isinstance(word, str) for word in keywords):
        raise BadKeywordsError("the answer's keywords must all be text", raw)
    words = [word.strip() for word in keywords if word.strip()]
    return SceneAnswer(title.strip(), content.strip(), tuple(dict.fromkeys(words)))


def _balanced_object(text: str) -> str | None:
    start = text.find("{")
    if start < 0:
        return None
    depth, in_string, escaped = 0, False, False
    for index in range(start, len(text)):
        char = text[index]
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                return text[start : index + 1]
    return None


def _unbalanced(text: str) -> bool:
    depth, in_string, escaped = 0, False, False
    for char in text[text.find("{") :]:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "{[":
            depth += 1
        elif char in "}]":
            depth -= 1
    return in_string or depth > 0


def _snippet(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= _SNIPPET else flat[:_SNIPPET] + "..."
