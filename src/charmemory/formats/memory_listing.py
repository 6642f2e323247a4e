"""A memory file as it is listed: each block's chat, date, memories (id and text) and notes.

Most of listing a large file is parsing it and hashing its memory ids, so a listing
can be kept as JSON and read back while the file is unchanged: `encode_listing`
writes it with the digest of the file it came from, and `decode_listing` gives it
back only for that digest, and only when it is whole (its checksum holds) and of
this `LISTING_FORMAT`.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

from charmemory.formats.memory_file import MemoryFile, memory_ids, stray_tag_warning

# Change it whenever parsing or `memory_id` would list the same bytes differently:
# listings kept in an older format are then read again from their files.
LISTING_FORMAT = 1


@dataclass(frozen=True, slots=True)
class ListedBlock:
    chat: str
    date: str
    ids: tuple[str, ...]
    texts: tuple[str, ...]  # the memories' texts, in the order of `ids`
    notes: tuple[str, ...]  # the block's lines that are not memories, without line endings


@dataclass(frozen=True)
class FileListing:
    blocks: tuple[ListedBlock, ...]
    warning: str | None = None  # about the file's shape (a tag without its pair)


def list_memory_file(file: MemoryFile) -> FileListing:
    blocks = tuple(
        ListedBlock(
            block.chat,
            block.date,
            tuple(block_ids),
            tuple(bullet.text for bullet in block.bullets),
            tuple(note.raw.rstrip("\r\n") for note in block.notes),
        )
        for block, block_ids in zip(file.blocks, memory_ids(file), strict=True)
    )
    return FileListing(blocks, stray_tag_warning(file))


def encode_listing(listing: FileListing, digest: str) -> bytes:
    """``listing`` as JSON after a header line naming the file's ``digest`` and the
    body's own checksum (so a damaged body is never read as a listing)."""
    body = json.dumps(
        [listing.warning, [[b.chat, b.date, b.ids, b.texts, b.notes] for b in listing.blocks]],
        ensure_ascii=False,
    ).encode("utf-8")
    header = {"format": LISTING_FORMAT, "digest": digest, "body": _checksum(body)}
    return json.dumps(header).encode("ascii") + b"\n" + body


def decode_listing(data: bytes, digest: str) -> FileListing | None:
    """The listing in ``data`` if it lists the file whose digest is ``digest``, else None.

    Anything else (another digest or format, a torn or damaged document) is None too:
    the caller lists the file again.
    """
    header, _, body = data.partition(b"\n")
    try:
        expected = {"format": LISTING_FORMAT, "digest": digest, "body": _checksum(body)}
        if json.loads(header) != expected:
            return None
        warning, blocks = json.loads(body)
    except ValueError:  # JSONDecodeError and UnicodeDecodeError included
        return None
    return FileListing(
        tuple(
            ListedBlock(chat, date, tuple(ids), tuple(texts), tuple(notes))
            for chat, date, ids, texts, notes in blocks
        ),
        warning,
    )


def _checksum(body: bytes) -> str:
    return hashlib.sha256(body).hexdigest()
