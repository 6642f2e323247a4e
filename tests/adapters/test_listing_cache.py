"""Kept listings of memory files: used for the bytes they came from, never trusted otherwise."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

import charmemory.adapters.memory_files as memory_files_module
from charmemory.adapters.memory_files import MemoryFiles
from charmemory.adapters.workspace import Workspace
from charmemory.formats.memory_file import (
    parse_memory_file,
)
from charmemory.formats.memory_ids import (
    list_bullets,
)

FILE = "user/files/Mira-memories.md"
FIRST = '<memory chat="c1" date="2026-02-01 10:00">\n- Mira keeps a compass.\n</memory>\n'
SECOND = '<memory chat="c1" date="2026-02-01 10:00">\n- Mira lost the compass.\n</memory>\n'


@pytest.fixture
def ws(tmp_path: Path) -> Iterator[Workspace]:
    ws = Workspace.create(tmp_path / "ws")
    yield ws
    ws.close()


def write(ws: Workspace, text: str) -> None:
    path = ws.root / FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def texts(files: MemoryFiles) -> list[str]:
    return [text for block in files.listing(FILE).listing.blocks for text in block.texts]


def kept_listings(ws: Workspace) -> list[Path]:
    return sorted((ws.state_dir / "listings").glob("*.json"))


def refuse_to_parse(monkeypatch: pytest.MonkeyPatch) -> None:
    def refused(*_: object) -> None:
        raise AssertionError("the file was listed again")

    monkeypatch.setattr(memory_files_module, "list_memory_file", refused)


def test_an_unchanged_file_is_listed_from_what_was_kept(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(ws, FIRST)
    first = MemoryFiles(ws).listing(FILE)
    refuse_to_parse(monkeypatch)
    again = MemoryFiles(ws).listing(FILE)
    assert again == first
    assert again.listing.blocks[0].ids == (list_bullets(parse_memory_file(FIRST))[0].memory_id,)


def test_a_file_changed_since_is_listed_again(ws: Workspace) -> None:
    write(ws, FIRST)
    files = MemoryFiles(ws)
    assert texts(files) == ["Mira keeps a compass."]
    write(ws, SECOND)  # outside charmemory
    assert texts(files) == ["Mira lost the compass."]
    loaded = files.load(FILE)
    files.save(loaded, parse_memory_file(FIRST), cause="edit")
    assert texts(files) == ["Mira keeps a compass."]
    assert len(kept_listings(ws)) == 1


@pytest.mark.parametrize(
    "damage",
    [
        lambda data: data[: len(data) // 2],  # as a write cut short would leave it
        lambda data: data.replace(b"keeps", b"loses"),
        lambda data: b"",
        lambda data: b"\x00" * len(data),
    ],
)
def test_a_damaged_kept_listing_is_ignored_and_rebuilt(
    ws: Workspace, damage: Callable[[bytes], bytes]
) -> None:
    write(ws, FIRST)
    MemoryFiles(ws).listing(FILE)
    [kept] = kept_listings(ws)
    good = kept.read_bytes()
    kept.write_bytes(damage(good))
    assert texts(MemoryFiles(ws)) == ["Mira keeps a compass."]
    assert kept.read_bytes() == good


def test_a_listing_that_cannot_be_kept_is_still_given(ws: Workspace) -> None:
    (ws.state_dir / "listings").write_text("not a folder")
    write(ws, FIRST)
    assert texts(MemoryFiles(ws)) == ["Mira keeps a compass."]


def test_a_missing_file_lists_empty_and_keeps_nothing(ws: Workspace) -> None:
    listed = MemoryFiles(ws).listing(FILE)
    assert not listed.exists
    assert listed.listing.blocks == ()
    assert kept_listings(ws) == []
