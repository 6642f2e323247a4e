from charmemory.core.block_merging import MERGED_BLOCK_CHARS, block_to_extend
from charmemory.formats.memory_file import (
    parse_memory_file,
)

FILE = parse_memory_file(
    '<memory chat="a" date="d1">\n- A one.\n</memory>\n\n'
    '<memory chat="b" date="d2">\n- B one.\n- B two.\n</memory>\n\n'
    '<memory chat="a" date="d3">\n- A two.\nA note.\n</memory>\n\n'
    '<memory chat="pinned" date="d4">\n- Pinned.\n</memory>\n'
)


def test_a_chats_new_memories_go_to_its_last_block_wherever_it_is() -> None:
    assert block_to_extend(FILE, "a", ["A three."], max_bullets=8) == 2
    assert block_to_extend(FILE, "b", ["B three."], max_bullets=8) == 1


def test_a_chat_without_a_block_gets_a_new_one() -> None:
    assert block_to_extend(FILE, "c", ["C one."], max_bullets=8) is None


def test_a_block_at_the_bullet_cap_is_left_as_it_is() -> None:
    assert block_to_extend(FILE, "b", ["B three."], max_bullets=3) == 1
    assert block_to_extend(FILE, "b", ["B three.", "B four."], max_bullets=3) is None


def test_a_block_that_would_outgrow_the_size_limit_is_left_as_it_is() -> None:
    long = "x" * (MERGED_BLOCK_CHARS // 2)

    assert block_to_extend(FILE, "a", [long], max_bullets=8) == 2
    assert block_to_extend(FILE, "a", [long, long], max_bullets=8) is None
