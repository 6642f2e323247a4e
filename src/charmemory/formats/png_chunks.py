"""PNG files as a list of chunks: read and write them without touching pixels.

A PNG is an 8-byte signature followed by chunks (4-byte big-endian length,
4-byte type, data, 4-byte CRC-32 over type and data). Character cards live in
`tEXt` chunks, so this module only needs to split and join chunks; it never
decodes image data. Chunks keep their stored CRC, so a chunk we do not touch is
written back byte-for-byte even when its CRC is wrong.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass

from charmemory.errors import FormatError

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_HEADER = struct.Struct(">I4s")
_CRC = struct.Struct(">I")
# The PNG spec caps chunk lengths at 2**31 - 1.
_MAX_CHUNK_LENGTH = 2**31 - 1


@dataclass(frozen=True)
class Chunk:
    """One PNG chunk as stored: its CRC is the one read, not a recomputed one."""

    type: bytes
    data: bytes
    crc: int

    @classmethod
    def build(cls, chunk_type: bytes, data: bytes) -> Chunk:
        """A new chunk with a correct CRC."""
        return cls(chunk_type, data, zlib.crc32(chunk_type + data))

    @property
    def crc_ok(self) -> bool:
        return zlib.crc32(self.type + self.data) == self.crc

    def to_bytes(self) -> bytes:
        return _HEADER.pack(len(self.data), self.type) + self.data + _CRC.pack(self.crc)


@dataclass(frozen=True)
class Png:
    """A PNG file split into chunks, plus any bytes found after `IEND`."""

    chunks: tuple[Chunk, ...]
    trailer: bytes = b""

    def to_bytes(self) -> bytes:
        return b"".join([PNG_SIGNATURE, *(c.to_bytes() for c in self.chunks), self.trailer])


def is_png(data: bytes) -> bool:
    return data.startswith(PNG_SIGNATURE)


def read_png(data: bytes, *, source: str | None = None) -> Png:
    """Split a PNG into chunks; structural damage is a FormatError, bad CRCs are kept."""
    if not is_png(data):
        raise FormatError("not a PNG file (bad signature)", source=source)
    chunks: list[Chunk] = []
    offset = len(PNG_SIGNATURE)
    while True:
        if offset + _HEADER.size > len(data):
            raise FormatError(f"PNG truncated at byte {offset}: no IEND chunk", source=source)
        length, chunk_type = _HEADER.unpack_from(data, offset)
        if length > _MAX_CHUNK_LENGTH or not chunk_type.isascii() or not chunk_type.isalpha():
            raise FormatError(f"PNG corrupt: bad chunk header at byte {offset}", source=source)
        start = offset + _HEADER.size
        end = start + length
        if end + _CRC.size > len(data):
            name = chunk_type.decode("ascii")
            raise FormatError(f"PNG truncated inside chunk {name} at byte {offset}", source=source)
        (crc,) = _CRC.unpack_from(data, end)
        chunks.append(Chunk(chunk_type, data[start:end], crc))
        offset = end + _CRC.size
        if chunk_type == b"IEND":
            return Png(tuple(chunks), data[offset:])


def text_chunk(keyword: str, text: str) -> Chunk:
    """A `tEXt` chunk: Latin-1 keyword, NUL, Latin-1 text."""
    return Chunk.build(b"tEXt", keyword.encode("latin-1") + b"\0" + text.encode("latin-1"))


def text_chunk_keyword(chunk: Chunk) -> str | None:
    """The keyword of a `tEXt` chunk, or None for any other chunk."""
    if chunk.type != b"tEXt":
        return None
    return chunk.data.split(b"\0", 1)[0].decode("latin-1")


def text_chunk_text(chunk: Chunk, *, source: str | None = None) -> str:
    """The text of a `tEXt` chunk, checked like a chunk we depend on must be."""
    keyword = text_chunk_keyword(chunk)
    if not chunk.crc_ok:
        raise FormatError(f"PNG chunk tEXt {keyword!r} has a bad CRC", source=source)
    _, separator, text = chunk.data.partition(b"\0")
    if not separator:
        raise FormatError(f"PNG chunk tEXt {keyword!r} has no NUL separator", source=source)
    return text.decode("latin-1")
