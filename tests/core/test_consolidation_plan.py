from collections.abc import Sequence

import pytest

from charmemory.core.consolidation_plan import (
    Fits,
    SourceBlock,
    parse_block_indices,
    plan_chunks,
    select_blocks,
)
from charmemory.errors import ConfigError, NotFoundError
from charmemory.formats.memory_file import (
    parse_memory_file,
)

SPACED_CHAT = 'Mira - 2026-02-15@10h00m00s123ms "the storm"'
FILE = parse_memory_file(
    "# Notes typed by hand\n\n"
    f'<memory chat="{SPACED_CHAT.replace(chr(34), "&quot;")}" date="2026-02-15 10:42">\n'
    "- Mira owns a brass compass.\n- Alex is from Cinderfall.\n</memory>\n\n"
    '<memory chat="pinned" date="2026-02-20 08:00">\n</memory>\n\n'
    '<memory chat="Mira - 2026-03-01@09h00m00s000ms" date="2026-03-01 09:00">\n'
    "- Mira fears deep water.\n</memory>\n"
)


def test_block_indices_accept_lists_and_inclusive_ranges() -> None:
    assert parse_block_indices("0, 2,5-7") == [0, 2, 5, 6, 7]


@pytest.mark.parametrize("text", ["", "a", "3-1", "1,,2", "-2"])
def test_malformed_block_indices_are_refused(text: str) -> None:
    with pytest.raises(ConfigError):
        parse_block_indices(text)


def test_every_block_with_memories_is_selected_by_default() -> None:
    assert [block.index for block in select_blocks(FILE)] == [0, 2]


def test_blocks_are_selected_by_index_and_by_a_chat_id_with_spaces_and_at_signs() -> None:
    by_chat = select_blocks(FILE, chats=[SPACED_CHAT])
    assert [(b.index, b.chat) for b in by_chat] == [(0, SPACED_CHAT)]
    both = select_blocks(FILE, indices=[2], chats=[SPACED_CHAT])
    assert [b.index for b in both] == [0, 2]
    assert both[0].bullets == ("Mira owns a brass compass.", "Alex is from Cinderfall.")


def test_an_unknown_block_or_chat_is_named_in_the_error() -> None:
    with pytest.raises(NotFoundError, match=r"block 7 does not exist .*0 to 2"):
        select_blocks(FILE, indices=[7])
    with pytest.raises(NotFoundError, match="chat 'Nobody'"):
        select_blocks(FILE, chats=["Nobody"])


def block(index: int, *bullets: str) -> SourceBlock:
    return SourceBlock(index, "chat", "2026-02-15 10:42", bullets)


def under(limit: int) -> Fits:
    """A budget counting bullet characters."""

    def fits(chunk: Sequence[SourceBlock]) -> bool:
        return sum(len(text) for b in chunk for text in b.bullets) <= limit

    return fits


def test_blocks_are_packed_in_order_into_chunks_that_fit() -> None:
    blocks = [block(0, "a" * 4), block(1, "b" * 4), block(2, "c" * 4)]
    chunks = plan_chunks(blocks, under(8))
    assert [[b.index for b in chunk] for chunk in chunks] == [[0, 1], [2]]


def test_a_block_too_big_for_one_call_is_cut_between_bullets() -> None:
    big = block(3, "a" * 4, "b" * 4, "c" * 4, "d" * 4, "e" * 4)
    chunks = plan_chunks([big], under(8))
    assert [chunk[0].bullets for chunk in chunks] == [
        ("a" * 4, "b" * 4),
        ("c" * 4, "d" * 4),
        ("e" * 4,),
    ]
    assert {b.index for chunk in chunks for b in chunk} == {3}


def test_a_single_memory_longer_than_the_budget_is_refused() -> None:
    with pytest.raises(ConfigError, match="too long for the context budget"):
        plan_chunks([block(0, "short", "x" * 20)], under(8))
