"""Memory ids stay what they always were, however they are computed."""

import hashlib
import json

from hypothesis import given
from hypothesis import strategies as st

from charmemory.formats.memory_file import (
    build_block,
    parse_memory_file,
)
from charmemory.formats.memory_ids import (
    list_bullets,
    memory_id,
    memory_ids,
)

# Text that UTF-8 can carry (lone surrogates cannot be written to a file).
TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)


def defined_id(attributes: list[tuple[str, str]], text: str, occurrence: int) -> str:
    """The definition ids were published with: sha1 of the JSON of the three, cut to 12."""
    payload = json.dumps([sorted(attributes), text, occurrence], ensure_ascii=False)
    return hashlib.sha1(payload.encode("utf-8")).hexdigest()[:12]


@given(
    st.lists(st.tuples(st.from_regex(r"[a-z]{1,5}", fullmatch=True), TEXT)),
    TEXT,
    st.integers(0, 99),
)
def test_an_id_is_the_hash_of_its_json(
    attributes: list[tuple[str, str]], text: str, occurrence: int
) -> None:
    assert memory_id(attributes, text, occurrence) == defined_id(attributes, text, occurrence)


def test_listing_ids_count_repeats_under_the_same_attributes() -> None:
    blocks = [
        build_block("chat a", "2026-02-01 10:00", ['Mira "sails" ✓', "Mira hates fog."]),
        build_block("chat a", "2026-02-01 10:00", ["Mira hates fog."]),
        build_block("chat b", "2026-02-01 10:00", ["Mira hates fog."]),
    ]
    file = parse_memory_file("\n".join(block.render() for block in blocks))
    attributes = [("chat", "chat a"), ("date", "2026-02-01 10:00")]
    other = [("chat", "chat b"), ("date", "2026-02-01 10:00")]
    expected = [
        [defined_id(attributes, 'Mira "sails" ✓', 0), defined_id(attributes, "Mira hates fog.", 0)],
        [defined_id(attributes, "Mira hates fog.", 1)],
        [defined_id(other, "Mira hates fog.", 0)],
    ]
    assert memory_ids(file) == expected
    assert [ref.memory_id for ref in list_bullets(file)] == [i for ids in expected for i in ids]


@given(
    st.lists(
        st.tuples(
            st.sampled_from([("chat a", "d1"), ("chat a", "d2"), ("chat b", "d1")]),
            st.lists(st.sampled_from(["Mira sails.", "Mira hates fog.", '"Fog" ✓']), max_size=4),
        ),
        max_size=6,
    )
)
def test_copies_are_counted_within_a_block_and_across_blocks_of_the_same_attributes(
    blocks: list[tuple[tuple[str, str], list[str]]],
) -> None:
    file = parse_memory_file(
        "".join(build_block(chat, date, texts).render() for (chat, date), texts in blocks)
    )
    seen: dict[tuple[tuple[str, str], str], int] = {}
    expected = []
    for (chat, date), texts in blocks:
        attributes = [("chat", chat), ("date", date)]
        block_ids = []
        for text in texts:
            occurrence = seen.get(((chat, date), text), 0)
            seen[((chat, date), text)] = occurrence + 1
            block_ids.append(defined_id(attributes, text, occurrence))
        expected.append(block_ids)
    assert memory_ids(file) == expected
