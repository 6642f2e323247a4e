"""Nothing named by a user, a file or the database leads outside the workspace.

Every path built from a name goes through `Workspace.inside`, which resolves it
first: `..` parts and symlinked folders are refused wherever they come in.
"""

import json
from pathlib import Path

import pytest

from charmemory.adapters.library import Library
from charmemory.adapters.lorebooks import Lorebooks
from charmemory.adapters.memory_files import MemoryFiles
from charmemory.adapters.workspace import Workspace
from charmemory.errors import UnsafePathError
from charmemory.formats.lorebook import parse_lorebook
from charmemory.formats.memory_file import (
    parse_memory_file,
)
from tests.support.extraction_fixtures import CHARACTER, alternating, line, make_workspace

MEMORIES = '<memory chat="c" date="2026-01-01 10:00">\n- Mira owns a compass.\n</memory>\n'


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    return make_workspace(tmp_path / "ws")


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "secret.md").write_text(MEMORIES, encoding="utf-8")
    return folder


@pytest.mark.parametrize(
    "parts",
    [("..", "outside", "secret.md"), ("user/../../outside/secret.md",), ("a", "..", "..", "x")],
)
def test_dot_dot_parts_are_refused(ws: Workspace, parts: tuple[str, ...]) -> None:
    with pytest.raises(UnsafePathError, match="outside"):
        ws.inside(ws.root, *parts)


def test_a_symlinked_folder_leading_out_is_refused(ws: Workspace, outside: Path) -> None:
    (ws.files_dir / "shared").symlink_to(outside, target_is_directory=True)
    with pytest.raises(UnsafePathError):
        ws.inside(ws.files_dir, "shared", "secret.md")
    with pytest.raises(UnsafePathError):
        ws.inside(ws.root, "user/files/shared/secret.md")


def test_paths_that_stay_inside_are_resolved_and_allowed(ws: Workspace) -> None:
    (ws.files_dir / "alias").symlink_to(ws.files_dir, target_is_directory=True)
    assert ws.inside(ws.root, "user", "..", "user", "files", "a.md") == ws.files_dir / "a.md"
    assert ws.inside(ws.files_dir, "alias", "a.md") == ws.files_dir / "a.md"


@pytest.mark.parametrize(
    "file", ["../outside/secret.md", "user/files/../../../outside/secret.md", "/etc/passwd"]
)
def test_memory_files_by_relative_path_stay_inside(ws: Workspace, outside: Path, file: str) -> None:
    files = MemoryFiles(ws)
    with pytest.raises(UnsafePathError):
        files.path_of(file)
    with pytest.raises(UnsafePathError):
        files.load(file)


def test_a_memory_file_through_a_symlinked_folder_is_neither_read_nor_written(
    ws: Workspace, outside: Path
) -> None:
    (ws.files_dir / "shared").symlink_to(outside, target_is_directory=True)
    (ws.files_dir / "Mira-memories.md").symlink_to(outside / "secret.md")
    files = MemoryFiles(ws)
    for file in ("user/files/shared/secret.md", "user/files/Mira-memories.md"):
        with pytest.raises(UnsafePathError):
            files.load(file)
    # A preview or a journal entry names its file by relative path too: saving
    # over one that leads out is refused before anything is written.
    loaded = files.load("user/files/own.md")
    escaped = type(loaded)("user/files/shared/secret.md", loaded.memories, loaded.version)
    with pytest.raises(UnsafePathError):
        files.save(escaped, parse_memory_file(MEMORIES + MEMORIES))
    assert (outside / "secret.md").read_text(encoding="utf-8") == MEMORIES


def test_an_import_into_a_symlinked_chats_folder_is_refused(
    ws: Workspace, outside: Path, tmp_path: Path
) -> None:
    (ws.chats_dir / CHARACTER).symlink_to(outside, target_is_directory=True)
    chat = tmp_path / f"{CHARACTER} - 2026-02-15@10h00m00s123ms.jsonl"
    header = {"user_name": "Alex", "character_name": CHARACTER, "chat_metadata": {}}
    chat.write_text("\n".join(line(m) for m in [header, *alternating(2)]), encoding="utf-8")
    with pytest.raises(UnsafePathError):
        Library(ws).import_file(chat)
    assert sorted(p.name for p in outside.iterdir()) == ["secret.md"]


def test_a_card_named_dot_dot_cannot_send_its_chats_out(
    ws: Workspace, outside: Path, tmp_path: Path
) -> None:
    card = json.loads((ws.characters_dir / f"{CHARACTER}.json").read_text(encoding="utf-8"))
    (ws.characters_dir / "...json").write_text(json.dumps(card), encoding="utf-8")
    chat = tmp_path / "walk.jsonl"
    header = {"user_name": "Alex", "character_name": CHARACTER, "chat_metadata": {}}
    chat.write_text("\n".join(line(m) for m in [header, *alternating(2)]), encoding="utf-8")
    with pytest.raises(UnsafePathError):
        Library(ws).import_file(chat, character="..")
    assert not (ws.root / "walk.jsonl").exists()


@pytest.mark.parametrize("name", ["../../outside/secret", "../chats/x", "/etc/passwd"])
def test_a_lorebook_named_with_dot_dot_is_neither_read_nor_written(
    ws: Workspace, outside: Path, name: str
) -> None:
    (outside / "secret.json").write_text('{"entries": {}}', encoding="utf-8")
    books = Lorebooks(ws)
    with pytest.raises(UnsafePathError):
        books.load(name)
    with pytest.raises(UnsafePathError):
        books.version(name)
    with pytest.raises(UnsafePathError):
        books.save(name, parse_lorebook('{"entries": {}}'), expected="x")
