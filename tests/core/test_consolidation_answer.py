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


@pytest.mark.parametrize(
    ("answer", "finish_reason", "reason"),
    [
        ('<memory sources="1">\n- Mira owns', "length", "cut off at its length limit"),
        ('<memory sources="1">\n- Mira owns a compass.\n', "stop", "line 1 is never closed"),
        ('<memory sources="1,2">\n* Mira\n- Alex sings.\n</memory>\n', None, 'not a "- "'),
        ('<memory sources="1,3">\n- Alex sings.\n</memory>\n', None, "source '3'"),
        ("<memory>\n- Alex sings.\n</memory>\n", None, "no sources attribute"),
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
