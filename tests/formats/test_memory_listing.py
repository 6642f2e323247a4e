from __future__ import annotations

from charmemory.formats.memory_file import list_bullets, parse_memory_file
from charmemory.formats.memory_listing import (
    FileListing,
    ListedBlock,
    decode_listing,
    encode_listing,
    list_memory_file,
)

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
