"""PNG chunk splitting and joining on real bytes."""

from __future__ import annotations

import string
import struct
import zlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from charmemory.errors import FormatError
from charmemory.formats.png_chunks import (
    PNG_SIGNATURE,
    Chunk,
    Png,
    read_png,
    text_chunk,
    text_chunk_keyword,
    text_chunk_text,
)
from tests.support.sillytavern_samples import sillytavern_sample


def tiny_png(*extra: Chunk) -> bytes:
    """A valid 1x1 grey PNG, with `extra` chunks placed before IEND."""
    ihdr = Chunk.build(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 0, 0, 0, 0))
    idat = Chunk.build(b"IDAT", zlib.compress(b"\x00\x80"))
    return Png((ihdr, idat, *extra, Chunk.build(b"IEND", b""))).to_bytes()


def with_bad_crc(chunk: Chunk) -> Chunk:
    return Chunk(chunk.type, chunk.data, chunk.crc ^ 0xFFFF)


def test_reads_the_chunks_of_a_real_card_and_writes_the_same_bytes():
    original = sillytavern_sample("default_Seraphina.png").read_bytes()

    png = read_png(original)

    assert [c.type for c in png.chunks] == [b"IHDR", b"IDAT", b"tEXt", b"tEXt", b"IEND"]
    assert all(c.crc_ok for c in png.chunks)
    assert png.to_bytes() == original


def test_a_chunk_with_a_bad_crc_is_kept_byte_for_byte():
    idat = Chunk.build(b"IDAT", zlib.compress(b"\x00\x80"))
    data = tiny_png(with_bad_crc(Chunk.build(b"tIME", b"\x07\xe8\x01\x02\x03\x04\x05")))
    data = data.replace(idat.to_bytes(), with_bad_crc(idat).to_bytes())

    png = read_png(data)

    assert [c.crc_ok for c in png.chunks] == [True, False, False, True]
    assert png.to_bytes() == data


def test_bytes_after_iend_are_kept():
    data = tiny_png() + b"appended by some other tool"

    png = read_png(data)

    assert png.trailer == b"appended by some other tool"
    assert png.to_bytes() == data


def test_not_a_png_names_the_source():
    with pytest.raises(FormatError, match=r"^card\.png: not a PNG file"):
        read_png(b"GIF89a....", source="card.png")


@pytest.mark.parametrize("cut", [9, 20, 33, 40, -5, -12])
def test_a_truncated_png_is_a_format_error(cut: int):
    data = tiny_png()

    with pytest.raises(FormatError, match="truncated"):
        read_png(data[:cut], source="cut.png")


def test_a_chunk_type_that_is_not_letters_is_a_format_error():
    data = PNG_SIGNATURE + struct.pack(">I", 0) + b"\x00\x01\x02\x03" + b"\x00" * 4

    with pytest.raises(FormatError, match="bad chunk header"):
        read_png(data)


def test_text_chunk_keeps_keyword_and_latin1_text():
    chunk = text_chunk("Comment", "café ÿ")

    assert chunk.type == b"tEXt"
    assert chunk.crc_ok
    assert text_chunk_keyword(chunk) == "Comment"
    assert text_chunk_text(chunk) == "café ÿ"
    assert text_chunk_keyword(Chunk.build(b"iTXt", b"chara\x00\x00\x00\x00\x00x")) is None


def test_text_chunk_text_refuses_a_bad_crc_or_a_missing_separator():
    with pytest.raises(FormatError, match="bad CRC"):
        text_chunk_text(with_bad_crc(text_chunk("chara", "abc")), source="x.png")
    with pytest.raises(FormatError, match="no NUL separator"):
        text_chunk_text(Chunk.build(b"tEXt", b"chara"))


chunk_types = (
    st.text(alphabet=string.ascii_letters, min_size=4, max_size=4)
    .map(str.encode)
    .filter(lambda t: t != b"IEND")
)
chunks = st.builds(Chunk.build, chunk_types, st.binary(max_size=64))


@settings(max_examples=150)
@given(st.lists(chunks, max_size=6), st.binary(max_size=16))
def test_any_chunk_list_survives_write_then_read(body: list[Chunk], trailer: bytes):
    png = Png((*body, Chunk.build(b"IEND", b"")), trailer)

    assert read_png(png.to_bytes()) == png


@settings(max_examples=200)
@given(st.binary(max_size=80))
def test_any_bytes_after_the_signature_read_or_raise_format_error(tail: bytes):
    try:
        png = read_png(PNG_SIGNATURE + tail)
    except FormatError:
        return
    assert png.chunks[-1].type == b"IEND"
