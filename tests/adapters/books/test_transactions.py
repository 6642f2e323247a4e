"""Memory-book writes are all or nothing: across books and the chat, across a kill -9."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from charmemory.adapters.books.files import BookFiles
from charmemory.adapters.books.transactions import BookTransactions
from charmemory.adapters.library import Library
from charmemory.adapters.workspace import Workspace
from charmemory.errors import CharMemoryError, ConflictError
from charmemory.formats.lorebook import Lorebook
from tests.support.extraction_fixtures import CHARACTER, alternating, make_workspace, write_chat

BOOKS = ("Group", "Alice", "Bob")
SRC = Path(__file__).resolve().parents[3] / "src"
ROOT = Path(__file__).resolve().parents[3]

WRITER = """
import os, signal, sys
from pathlib import Path
from charmemory.adapters.books.files import BookFiles
from charmemory.adapters.books.transactions import BookTransactions
from charmemory.adapters.library import Library
from charmemory.adapters.workspace import Workspace

root, kill_at = Path(sys.argv[1]), sys.argv[2]

def checkpoint(step):
    if step == kill_at:
        os.kill(os.getpid(), signal.SIGKILL)

ws = Workspace.open(root)
library = Library(ws)
ref = library.chat(library.character("Mira"))
transactions = BookTransactions(ws, BookFiles(ws), library.load_chat, checkpoint=checkpoint)
with transactions.open(["Group", "Alice", "Bob"], ref, cause="scene memory") as write:
    for name in ("Group", "Alice", "Bob"):
        book = write.book(name).book
        book.add(f"{name} remembers the storm.", ["storm"], comment="002 - The Storm")
        write.save(name, book)
    chat = write.chat().chat
    chat.header.set_metadata("STMemoryBooks", {"highestMemoryProcessed": 5})
    write.save_chat(chat)
"""


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    ws = make_workspace(tmp_path / "ws")
    write_chat(ws, alternating(8))
    for name in BOOKS:
        book = Lorebook()
        book.add(f"{name} remembers the harbour.", ["harbour"], comment="001 - The Harbour")
        (ws.worlds_dir / f"{name}.json").write_text(book.render(), encoding="utf-8")
    return ws


def transactions(ws: Workspace) -> BookTransactions:
    library = Library(ws)
    return BookTransactions(ws, BookFiles(ws), library.load_chat)


def state(ws: Workspace) -> dict[str, str]:
    files = {name: (ws.worlds_dir / f"{name}.json").read_text(encoding="utf-8") for name in BOOKS}
    [chat] = (ws.chats_dir / CHARACTER).glob("*.jsonl")
    files["chat"] = chat.read_text(encoding="utf-8")
    return files


def written(files: dict[str, str]) -> list[bool]:
    return [
        *("The Storm" in files[name] for name in BOOKS),
        "highestMemoryProcessed" in files["chat"],
    ]


def test_books_and_chat_are_written_together_and_versioned(ws: Workspace) -> None:
    library = Library(ws)
    ref = library.chat(library.character(CHARACTER))
    with transactions(ws).open(BOOKS, ref, cause="scene memory", detail="5-8") as write:
        for name in BOOKS:
            book = write.book(name).book
            book.add("New.", ["new"], comment="002 - The Storm")
            write.save(name, book)
        chat = write.chat().chat
        chat.header.set_metadata("STMemoryBooks", {"highestMemoryProcessed": 5})
        write.save_chat(chat)
    assert written(state(ws)) == [True, True, True, True]
    files = BookFiles(ws)
    versions = files.versions("Group")
    assert [(v.number, v.cause) for v in versions] == [(1, "found"), (2, "scene memory")]
    assert ws.db.execute("SELECT COUNT(*) FROM book_transactions").fetchone()[0] == 0


def test_an_error_inside_writes_nothing(ws: Workspace) -> None:
    before = state(ws)
    with (
        pytest.raises(CharMemoryError, match="the model refused"),
        transactions(ws).open(BOOKS, cause="scene memory") as write,
    ):
        book = write.book("Group").book
        book.add("New.", ["new"])
        write.save("Group", book)
        raise CharMemoryError("the model refused")
    assert state(ws) == before


def test_a_book_edited_by_hand_meanwhile_stops_the_whole_write(ws: Workspace) -> None:
    before = state(ws)
    with (
        pytest.raises(ConflictError, match=r"Bob\.json changed on disk"),
        transactions(ws).open(BOOKS, cause="scene memory") as write,
    ):
        for name in BOOKS:
            book = write.book(name).book
            book.add("New.", ["new"])
            write.save(name, book)
        (ws.worlds_dir / "Bob.json").write_text('{"entries": {}}', encoding="utf-8")
    assert state(ws)["Group"] == before["Group"] and state(ws)["Alice"] == before["Alice"]


def test_only_locked_books_can_be_written(ws: Workspace) -> None:
    with (
        pytest.raises(CharMemoryError, match="'Bob' was not locked"),
        transactions(ws).open(["Group"], cause="edit") as write,
    ):
        write.book("Bob")


def test_a_hand_edit_before_a_write_is_kept_as_its_own_version(ws: Workspace) -> None:
    with transactions(ws).open(["Group"], cause="edit") as write:
        book = write.book("Group").book
        book.add("One.", [])
        write.save("Group", book)
    (ws.worlds_dir / "Group.json").write_text('{"entries": {}}', encoding="utf-8")
    with transactions(ws).open(["Group"], cause="clip") as write:
        book = write.book("Group").book
        book.add("Two.", [])
        write.save("Group", book)
    causes = [v.cause for v in BookFiles(ws).versions("Group")]
    assert causes == ["found", "edit", "outside edit", "clip"]
    assert BookFiles(ws).version_bytes("Group", 3) == b'{"entries": {}}'


def run_writer(root: Path, kill_at: str) -> int:
    env = {**os.environ, "PYTHONPATH": f"{SRC}{os.pathsep}{ROOT}"}
    done = subprocess.run(
        [sys.executable, "-c", WRITER, str(root), kill_at],
        env=env,
        capture_output=True,
        timeout=120,
    )
    assert done.returncode in (0, -9), done.stderr.decode()
    return done.returncode


@pytest.mark.parametrize(
    ("kill_at", "expected"),
    [
        ("locked", False),
        ("journaled", True),
        ("wrote 1", True),
        ("wrote 2", True),
        ("wrote 3", True),
        ("wrote 4", True),
        ("committed", True),
    ],
)
def test_a_write_killed_at_any_step_is_all_or_nothing_after_restart(
    ws: Workspace, kill_at: str, expected: bool
) -> None:
    before = state(ws)
    ws.close()
    assert run_writer(ws.root, kill_at) == -9
    if expected and kill_at != "committed":
        on_disk = written(state(ws))
        assert on_disk != [True] * 4 or kill_at == "wrote 4"  # left half-done (or just done)
    reopened = Workspace.open(ws.root)
    assert reopened.db  # opening the database finishes what the killed writer left
    after = state(reopened)
    assert written(after) == [expected] * 4
    if not expected:
        assert after == before
    pending = reopened.db.execute("SELECT COUNT(*) FROM book_transactions").fetchone()[0]
    assert pending == 0
    causes = [v.cause for v in BookFiles(reopened).versions("Group")]
    assert causes == (["found", "scene memory"] if expected else [])
    if expected and kill_at != "committed":
        [chat] = reopened.chats_dir.glob("*/*.jsonl")
        assert reopened.recovered == [
            "an interrupted scene memory was completed (worlds/Group.json, worlds/Alice.json, "
            f"worlds/Bob.json, chats/{CHARACTER}/{chat.name})"
        ]


def test_a_file_changed_after_the_kill_rolls_the_others_back(ws: Workspace) -> None:
    before = state(ws)
    ws.close()
    run_writer(ws.root, "wrote 2")
    (ws.worlds_dir / "Bob.json").write_text('{"entries": {}}', encoding="utf-8")
    reopened = Workspace.open(ws.root)
    assert reopened.db
    after = state(reopened)
    assert after["Group"] == before["Group"] and after["Alice"] == before["Alice"]
    assert after["chat"] == before["chat"] and after["Bob"] == '{"entries": {}}'
    assert reopened.recovered[0].startswith("an interrupted scene memory was undone")
