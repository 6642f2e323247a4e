"""The library of cards: read once, read again when a card changes."""

import json
import os
from pathlib import Path

from charmemory.adapters.library import Library
from charmemory.adapters.workspace import Workspace


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
