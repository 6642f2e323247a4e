"""The library of cards: read once, read again when a card changes."""

import json
import os
from pathlib import Path

import pytest

from charmemory.adapters.library import Library
from charmemory.adapters.workspace import Workspace
from charmemory.errors import NameTakenError


def write_card(path: Path, name: str) -> None:
    card = {"spec": "chara_card_v2", "spec_version": "2.0", "data": {"name": name}}
    path.write_text(json.dumps(card), encoding="utf-8")


def test_a_card_changed_on_disk_is_read_again(tmp_path: Path) -> None:
    ws = Workspace.create(tmp_path / "ws")
    path = ws.characters_dir / "Ann.json"
    write_card(path, "Ann")
    library = Library(ws)
    assert [c.name for c in library.characters()] == ["Ann"]

    write_card(path, "Ann Marie")
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))

    assert [c.name for c in library.characters()] == ["Ann Marie"]


def test_importing_over_a_different_file_of_the_same_name_writes_nothing(tmp_path: Path) -> None:
    ws = Workspace.create(tmp_path / "ws")
    library = Library(ws)
    first, second = tmp_path / "a" / "Ann.json", tmp_path / "b" / "Ann.json"
    for path, name in ((first, "Ann"), (second, "Ann Marie")):
        path.parent.mkdir()
        write_card(path, name)
    library.import_file(first)

    with pytest.raises(NameTakenError, match="already exists with other content"):
        library.import_file(second)

    assert (ws.characters_dir / "Ann.json").read_bytes() == first.read_bytes()
    assert library.import_file(first).unchanged  # the same file again is no conflict
