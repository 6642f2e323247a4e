from __future__ import annotations

import pytest
from hypothesis import given, settings

from charmemory.formats.memory_file import list_bullets, parse_memory_file, stray_tag_lines
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

# Bodies the quick way must not take for plain bullets, and files around them.
TRICKY = [
    "",
    "\ufeff",
    "no tags at all\n- a bullet outside any block\n",
    '<memory chat="c">\n- a\n</memory>',  # no final newline
    '<memory chat="c">\r\n- a\r\n- b\r\n</memory>\r\n',
    '\ufeff<memory chat="c">\n- a\n</memory>\n<memory>\n',
    "<memory>\n</memory>\n<memory>\n\n</memory>\n",
    "<memory>\n* star\n- dash\n*  two spaces\n-\tafter a tab\n</memory>\n",
    "<memory>\n- wrapped\n  onto the next line\n\tand a tab\n- next\n</memory>\n",
    "<memory>\n- a\n\n  indented after a blank\nnote\n   \n- b \n</memory>\n",
    "<memory>\n  - indented bullet\n- \n-  \n- x\u00a0y\n- x\u2028y\n- \x00\u202ez\n</memory>\n",
    "<memory>\n- a <memory> in text\n- < /memory here\n- 1 < 2\n</memory>\n",
    "<memory>\n- trailing space \n- a  b\n- a\x85b\n- a\rb\n</memory>\n",
    "<memory>\n<memory>\n- a\n</memory>\n</memory>\n</memory>\n<memory>\n",
    "  <MEMORY chat='x' >  \n- a\n  </Memory >\t\n<memory\n- b\n</memory x>\n",
    '<memory chat="a &amp; &quot;b&quot; &#60; &#x3e;" date="d>e" chat="second">\n- a\n</memory>\n',
    "<memory chat=\"unbalanced date='x>\n- a\n</memory>\n<memory a=1 b = '2'>\n- b\n</memory>\n",
    '<memory chat="c">\n- same\n- same\n</memory>\n<memory chat="c">\n- same\n</memory>\n'
    '<memory chat="d">\n- same\n</memory>\n<memory chat="c" date="">\n- same\n</memory>\n',
    "text <memory>\n- a\n</memory> trailing\n",
    "<memory>\n- a\n</memory>\n" * 3 + "<memory>\n- tail without newline",
    "\n\n<memory>\n- a\n</memory>\n\n</memory>\n\n<memory>\n</memory>\n",
]


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


def assert_lists_as_parsed(text: str) -> None:
    parsed = parse_memory_file(text)
    listed = list_memory_text(text)
    if listed is None:  # only a file with no tag line is left to the full parse
        assert not parsed.blocks and not stray_tag_lines(parsed)
    else:
        assert listed == list_memory_file(parsed)
