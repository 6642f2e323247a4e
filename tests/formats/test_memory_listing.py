from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from charmemory.formats.memory_file import (
    parse_memory_file,
    stray_tag_lines,
)
from charmemory.formats.memory_ids import (
    list_bullets,
)
from charmemory.formats.memory_listing import (
    FileListing,
    ListedBlock,
    decode_listing,
    encode_listing,
    list_memory_file,
    list_memory_text,
)
from tests.formats.test_memory_file import _ANY_TEXT, _documents

TEXT = (
    "# Mira\n"
    '<memory chat="c1" date="2026-02-01 10:00">\n'
    "- Mira keeps a compass.\n"
    "a note a person typed\r\n"
    "- Mira keeps a compass.\n"
    "</memory>\n"
    "<memory chat='c2'>\n"
)
DIGEST = "d" * 64


def test_a_listing_holds_each_blocks_memories_with_their_ids_and_notes() -> None:
    file = parse_memory_file(TEXT)
    listing = list_memory_file(file)
    refs = list_bullets(file)
    assert listing.blocks == (
        ListedBlock(
            "c1",
            "2026-02-01 10:00",
            tuple(ref.memory_id for ref in refs),
            ("Mira keeps a compass.", "Mira keeps a compass."),
            ("a note a person typed",),
        ),
    )
    assert listing.warning is not None and "line(s) 7" in listing.warning


def test_a_listing_reads_back_only_for_the_digest_it_was_kept_with() -> None:
    listing = list_memory_file(parse_memory_file(TEXT))
    kept = encode_listing(listing, DIGEST)
    assert decode_listing(kept, DIGEST) == listing
    assert decode_listing(kept, "e" * 64) is None


def test_an_empty_listing_reads_back() -> None:
    listing = FileListing(())
    assert decode_listing(encode_listing(listing, DIGEST), DIGEST) == listing


def test_a_damaged_or_foreign_listing_is_not_read() -> None:
    kept = encode_listing(list_memory_file(parse_memory_file(TEXT)), DIGEST)
    header, _, body = kept.partition(b"\n")
    damaged = (
        kept[: len(kept) // 2],  # torn
        header + b"\n" + body.replace(b"compass", b"sextant"),  # still JSON, other text
        header.replace(b'"format": 1', b'"format": 0') + b"\n" + body,
        b"\xff\xfe not json",
        b"",
        body,
    )
    for data in damaged:
        assert decode_listing(data, DIGEST) is None, data


# ---- listing from the text alone --------------------------------------------------------

# Files around bodies the quick way must not take for plain bullets, one oddity each.
TRICKY = [
    "",
    "\ufeff",
    "no tags at all\n- a bullet outside any block\n",
    '<memory chat="c">\n- a\n</memory>',  # no final newline
    '<memory chat="c">\r\n- a\r\n- b\r\n</memory>\r\n',
    "<memory>\r\n- a\r\n* b\r\n</memory>\r\n",
    "<memory>\r\n- a\n- b\r\n</memory>\r\n",
    "<memory>\n- a\r\n- b\n</memory>\n",
    "<memory>\r\n- trailing space \r\n</memory>\r\n",
    "<memory>\r\n- two  spaces\r\n</memory>\r\n",
    "<memory>\r\n- a\rb\r\n</memory>\r\n",
    "<memory>\r\n- wrapped\r\n  onto the next line\r\n</memory>\r\n",
    '\ufeff<memory chat="c">\n- a\n</memory>\n<memory>\n',
    "<memory>\n</memory>\n<memory>\n\n</memory>\n",
    "<memory>\n- dash\n* star\n</memory>\n",
    "<memory>\n* star\n- dash\n</memory>\n",
    "<memory>\n-  two spaces\n</memory>\n",
    "<memory>\n- two  spaces\n</memory>\n",
    "<memory>\n- trailing space \n</memory>\n",
    "<memory>\n-\tafter a tab\n</memory>\n",
    "<memory>\n- a\tb\n</memory>\n",
    "<memory>\n- wrapped\n  onto the next line\n</memory>\n",
    "<memory>\n- wrapped\n\tby a tab\n</memory>\n",
    "<memory>\n- a\n\n  indented after a blank\n</memory>\n",
    "<memory>\n- a\na note\n</memory>\n",
    "<memory>\n- a\n   \n</memory>\n",
    "<memory>\n  - indented bullet\n</memory>\n",
    "<memory>\n- \n</memory>\n",
    "<memory>\n-  \n</memory>\n",
    "<memory>\n-\n</memory>\n",
    "<memory>\n- x\u00a0y\n</memory>\n",
    "<memory>\n- x\u2028y\n</memory>\n",
    "<memory>\n- x\x85y\n</memory>\n",
    "<memory>\n- x\ry\n</memory>\n",
    "<memory>\n- \x00\u202ez\n</memory>\n",
    "<memory>\n- zero\u200bwidth\n</memory>\n",
    "<memory>\n- a <memory> in text\n</memory>\n",
    "<memory>\n- < /memory here\n</memory>\n",
    "<memory>\n- 1 < 2\n</memory>\n",
    "<memory>\n<memory>\n- a\n</memory>\n</memory>\n</memory>\n<memory>\n",
    "  <MEMORY chat='x' >  \n- a\n  </Memory >\t\n<memory\n- b\n</memory x>\n",
    '<memory chat="a &amp; &quot;b&quot; &#60; &#x3e;" date="d>e" chat="second">\n- a\n</memory>\n',
    "<memory chat=\"unbalanced date='x>\n- a\n</memory>\n<memory a=1 b = '2'>\n- b\n</memory>\n",
    '<memory chat="c">\n- same\n- same\n</memory>\n<memory chat="c">\n- same\n</memory>\n'
    '<memory chat="d">\n- same\n</memory>\n<memory chat="c" date="">\n- same\n</memory>\n',
    "text <memory>\n- a\n</memory> trailing\n",
    "<memory chat=\"</memory>\" date='<memory>'>\n- a\n</memory>\n",
    "  </memory> <memory>\n<memory> </memory>\n<memory>\n- a\n</MEMORY>\n",
    "<memory>\n- a\n</memory>\n" * 3 + "<memory>\n- tail without newline",
    "\n\n<memory>\n- a\n</memory>\n\n</memory>\n\n<memory>\n</memory>\n",
]

# Lines of a block body, each plain or odd in one way.
_BODY_LINES = st.sampled_from(
    [
        "- plain",
        "* star",
        "- plain",
        "-  two",
        "- a  b",
        "- end ",
        "-\ttab",
        "- a\tb",
        "  wrap",
        "\twrap",
        "",
        "   ",
        "note",
        "  - indented",
        "- ",
        "-",
        "- x\u00a0y",
        "- x\x85y",
        "- x\ry",
        "- \x00z",
        "- 1 < 2",
        "- <memory",
        "- ünï 森",
    ]
)


@st.composite
def _blocks(draw: st.DrawFn) -> str:
    """Blocks of plain and odd lines, some with the same attributes as others."""
    blocks = []
    for _ in range(draw(st.integers(1, 5))):
        opening = draw(st.sampled_from(['<memory chat="a">', '<memory chat="b" date="d">']))
        lines = draw(st.lists(_BODY_LINES, max_size=6))
        newline = draw(st.sampled_from(["\n", "\n", "\r\n"]))
        blocks.append(newline.join([opening, *lines, "</memory>"]) + newline)
    return "".join(blocks)


@pytest.mark.parametrize("text", TRICKY)
def test_listing_the_text_gives_what_listing_the_parsed_file_gives(text: str) -> None:
    assert_lists_as_parsed(text)


@settings(max_examples=300, deadline=None)
@given(_ANY_TEXT)
def test_any_text_lists_as_its_parsed_file(text: str) -> None:
    assert_lists_as_parsed(text)


@settings(max_examples=200, deadline=None)
@given(_documents())
def test_generated_documents_list_as_their_parsed_files(document: tuple) -> None:
    assert_lists_as_parsed(document[0])


@settings(max_examples=300, deadline=None)
@given(_blocks())
def test_blocks_of_odd_lines_list_as_their_parsed_files(text: str) -> None:
    assert_lists_as_parsed(text)


def assert_lists_as_parsed(text: str) -> None:
    parsed = parse_memory_file(text)
    listed = list_memory_text(text)
    if listed is None:  # only a file with no tag line is left to the full parse
        assert not parsed.blocks and not stray_tag_lines(parsed)
    else:
        assert listed == list_memory_file(parsed)
