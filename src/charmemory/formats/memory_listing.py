"""A memory file as it is listed: each block's chat, date, memories (id and text) and notes.

Most of listing a large file is parsing it and hashing its memory ids. `list_memory_text`
lists a file's text without building its `MemoryFile` (the values an edit needs), and
a listing can be kept as JSON and read back while the file is unchanged:
`encode_listing` writes it with the digest of the file it came from, and
`decode_listing` gives it back only for that digest, and only when it is whole (its
checksum holds) and of this `LISTING_FORMAT`.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass

from charmemory.formats.memory_file import (
    BOM,
    Attributes,
    MemoryBlock,
    MemoryFile,
    attribute,
    block_entries,
    is_closing_line,
    opening_attributes,
    stray_lines_warning,
    stray_tag_warning,
)
from charmemory.formats.memory_ids import (
    ids_of_blocks,
    memory_ids,
)

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
            _notes(block),
        )
        for block, block_ids in zip(file.blocks, memory_ids(file), strict=True)
    )
    return FileListing(blocks, stray_tag_warning(file))


def _notes(block: MemoryBlock) -> tuple[str, ...]:
    return tuple(note.raw.rstrip("\r\n") for note in block.notes)


# Where a tag line may be: every one holds this.
_TAG_HINT = re.compile("</?memory", re.IGNORECASE)
# A body of one-line bullets only, by line ending. With nothing to clean in them (see
# `_is_clean`), each bullet's text is its line without the marker.
_BULLET_LINES = {
    "\n": re.compile(r"(?:[-*] [^\n]+\n)*"),
    "\r\n": re.compile(r"(?:[-*] [^\r\n]+\r\n)*"),
}


def list_memory_text(text: str) -> FileListing | None:
    """``list_memory_file(parse_memory_file(text))``, read from the text alone.

    Only the tag lines are looked for and only bodies that are not plain bullets are
    parsed line by line, which makes listing a large file several times faster. None
    when ``text`` holds no tag line: it may be in a legacy layout (parse it whole).
    """
    content = text.removeprefix(BOM)
    tags = list(_tag_lines(content))
    if not tags:
        return None
    found: list[tuple[Attributes, str]] = []  # each block's attributes and body
    stray: list[int] = []
    line, counted = 1, 0  # the 1-based number of the line starting at offset `counted`
    i = 0
    while i < len(tags):
        start, end, attributes = tags[i]
        if attributes is not None and i + 1 < len(tags) and tags[i + 1][2] is None:
            found.append((attributes, content[end : tags[i + 1][0]]))
            i += 2
            continue
        line += content.count("\n", counted, start)
        counted = start
        stray.append(line)
        i += 1
    bodies = [_read_body(attributes, body) for attributes, body in found]
    ids = ids_of_blocks(
        (attributes, texts) for (attributes, _), (texts, _) in zip(found, bodies, strict=True)
    )
    blocks = tuple(
        ListedBlock(
            attribute(attributes, "chat") or "",
            attribute(attributes, "date") or "",
            tuple(block_ids),
            tuple(texts),
            notes,
        )
        for (attributes, _), (texts, notes), block_ids in zip(found, bodies, ids, strict=True)
    )
    return FileListing(blocks, stray_lines_warning(stray))


def _tag_lines(text: str) -> Iterator[tuple[int, int, Attributes | None]]:
    """(start, end, attributes) of each tag line in file order; a closing one has None."""
    position = 0
    while (hint := _TAG_HINT.search(text, position)) is not None:
        start = text.rfind("\n", 0, hint.start()) + 1
        end = text.find("\n", hint.end()) + 1 or len(text)
        line = text[start:end]
        # A line's first "<memory" or "</memory" is its tag's, if it is a tag line.
        if hint[0][1] == "/":
            if is_closing_line(line):
                yield start, end, None
        elif (attributes := opening_attributes(line)) is not None:
            yield start, end, attributes
        position = end


def _read_body(attributes: Attributes, body: str) -> tuple[list[str], tuple[str, ...]]:
    """A block body's bullet texts and notes."""
    if not body:
        return [], ()
    newline = "\r\n" if body.endswith("\r\n") else "\n"
    if _BULLET_LINES[newline].fullmatch(body) and _is_clean(body, newline):
        lines = body[: -len(newline)]
        if body[0] == "-" and f"{newline}* " not in body:
            return lines[2:].split(f"{newline}- "), ()
        return [line[2:] for line in lines.split(newline)], ()
    block = MemoryBlock(attributes, block_entries(body))
    return [bullet.text for bullet in block.bullets], _notes(block)


def _is_clean(body: str, newline: str) -> bool:
    """Whether cleaning (`memory_file.clean_memory_text`) would leave the text of every
    bullet line in ``body`` as it is: printable, no "<", no runs or ends of spaces."""
    return (
        "<" not in body
        and "  " not in body
        and f" {newline}" not in body
        and body.replace(newline, "").isprintable()
    )


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
