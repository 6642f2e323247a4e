import pytest

from charmemory.core.consolidation_answer import (
    ProposedBlock,
    UnusableConsolidationError,
    read_consolidation,
)
from charmemory.core.consolidation_plan import SourceBlock

CHUNK = [
    SourceBlock(4, "a", "2026-02-15 10:42", ("Mira owns a compass.",)),
    SourceBlock(6, "b", "2026-03-01 09:00", ("Mira owns a brass compass.", "Alex sings.")),
]


def test_blocks_name_their_sources_by_the_ids_sent() -> None:
    answer = (
        "Here you go:\n```\n"
        '<memory sources="1, 2">\n- Mira owns a brass compass.\n</memory>\n'
        '<memory sources="B2">\n- Alex sings.\n</memory>\n```\n'
    )
    assert read_consolidation(answer, CHUNK) == [
        ProposedBlock((4, 6), ("Mira owns a brass compass.",)),
        ProposedBlock((6,), ("Alex sings.",)),
    ]


def test_one_block_sent_needs_no_sources_attribute() -> None:
    answer = "<memory>\n- Mira owns a brass compass.\n</memory>\n"
    assert read_consolidation(answer, CHUNK[:1]) == [
        ProposedBlock((4,), ("Mira owns a brass compass.",))
    ]


def test_a_plain_answer_replaces_exactly_the_blocks_sent() -> None:
    answer = (
        "<memory>\n- Mira owns a brass compass.\n</memory>\n\n"
        "<memory>\n- Alex sings sea shanties.\n* Mira hates fog.\n</memory>\n"
    )

    proposed = read_consolidation(answer, CHUNK)

    assert proposed == [
        # It shares a memory with the second block sent: it comes from that one.
        ProposedBlock((6,), ("Mira owns a brass compass.",), named_sources=False),
        # It shares none: it comes from every block sent.
        ProposedBlock((4, 6), ("Alex sings sea shanties.", "Mira hates fog."), named_sources=False),
    ]


def test_a_plain_answer_block_copied_from_one_block_comes_from_that_block() -> None:
    answer = "<memory>\n- Alex sings.\n- Mira owns a brass compass!\n</memory>\n"
    chunk = [*CHUNK, SourceBlock(9, "c", "2026-03-02 09:00", ("Alex sings.",))]

    assert read_consolidation(answer, chunk[1:])[0].sources == (6, 9)
    assert read_consolidation(answer, chunk[::2])[0].sources == (9,)


def test_a_memory_far_longer_than_the_limit_and_than_any_sent_is_refused() -> None:
    long_sent = [SourceBlock(4, "a", "d", ("x" * 900, "Alex sings."))]
    answer = '<memory sources="1">\n- ' + "y" * 900 + "\n</memory>\n"

    assert read_consolidation(answer, long_sent, max_bullet_chars=500)[0].bullets == ("y" * 900,)
    with pytest.raises(UnusableConsolidationError, match="memory of 901 characters"):
        read_consolidation(answer.replace("- y", "- yy"), long_sent, max_bullet_chars=500)


@pytest.mark.parametrize(
    ("answer", "finish_reason", "reason"),
    [
        ('<memory sources="1">\n- Mira owns', "length", "cut off at its length limit"),
        ('<memory sources="1">\n- Mira owns a compass.\n', "stop", "line 1 is never closed"),
        ('<memory sources="1,2">\nMira:\n- Alex sings.\n</memory>\n', None, 'not a "- "'),
        ('<memory sources="1,3">\n- Alex sings.\n</memory>\n', None, "source '3'"),
        (
            '<memory sources="1">\n- A.\n</memory>\n<memory>\n- B.\n</memory>\n',
            None,
            r"block 2 .* \(no sources attribute\) though other blocks do",
        ),
        ('<memory sources="1">\n- A.\n</memory>\n- Forgotten.\n', None, "outside any"),
        ("I cannot help with that.", None, "holds no memories"),
        ('<memory sources="1,2">\n</memory>\n', None, "holds no memories"),
    ],
)
def test_unusable_answers_are_rejected_with_the_reason(
    answer: str, finish_reason: str | None, reason: str
) -> None:
    with pytest.raises(UnusableConsolidationError, match=reason) as caught:
        read_consolidation(answer, CHUNK, finish_reason=finish_reason)
    assert "nothing was changed" in str(caught.value)
