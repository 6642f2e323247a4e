"""Writing memory books (and the chat they came from) all together or not at all.

`BookTransactions.open` locks every file it is given in one fixed order, reads
them as they are, and hands them to the caller; what the caller saves is
journalled, written (each file atomically) and versioned when the block ends
(see `journal.py`). An exception inside the block writes nothing. A
`checkpoint` hook is called at each step (`locked`, `journaled`, `wrote N`,
`committed`), so a test can kill the process exactly there.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from datetime import UTC, datetime
from pathlib import Path

from charmemory.adapters.atomic_file import read_versioned
from charmemory.adapters.books.files import BookFiles
from charmemory.adapters.books.journal import (
    FileChange,
    ordered_locks,
    record_done,
    record_intent,
    recover_pending,
    write_change,
)
from charmemory.adapters.workspace import Workspace
from charmemory.errors import CharMemoryError, ConflictError
from charmemory.formats.chat import Chat
from charmemory.formats.lorebook import Lorebook
from charmemory.ports import ChatRef, LoadedBook, LoadedChat

Checkpoint = Callable[[str], None]


class BookTransactions:
    def __init__(
        self,
        workspace: Workspace,
        files: BookFiles,
        load_chat: Callable[[ChatRef], LoadedChat],
        *,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        checkpoint: Checkpoint | None = None,
    ):
        self._ws = workspace
        self._files = files
        self._load_chat = load_chat
        self._clock = clock
        self._checkpoint = checkpoint or (lambda step: None)

    @contextmanager
    def open(
        self,
        books: Sequence[str],
        chat: ChatRef | None = None,
        *,
        cause: str,
        detail: str = "",
    ) -> Iterator[_Write]:
        self._files.require_writable("write lorebooks")
        names = list(dict.fromkeys(books))
        paths = [self._files.path_of(name) for name in names]
        with ExitStack() as stack:
            ordered_locks(self._ws.locks, [*paths, *([chat.path] if chat else [])], stack)
            self._checkpoint("locked")
            write = _Write(self._files, self._load_chat, names, chat)
            yield write
            self._commit(write.changes(self._ws.root), cause, detail)

    def recover(self) -> list[str]:
        return recover_pending(self._ws.db, self._ws.root, self._ws.locks)

    def _commit(self, changes: list[FileChange], cause: str, detail: str) -> None:
        if not changes:
            return
        conn, history = self._ws.db, self._files.history
        txn = record_intent(conn, history, changes, cause=cause, detail=detail, now=self._clock())
        self._checkpoint("journaled")
        for number, change in enumerate(changes, start=1):
            write_change(self._ws.root, change)
            self._checkpoint(f"wrote {number}")
        record_done(conn, history, txn, changes, cause=cause, detail=detail)
        self._checkpoint("committed")


class _Write:
    """The books and chat of one open transaction, and what it will write."""

    def __init__(
        self,
        files: BookFiles,
        load_chat: Callable[[ChatRef], LoadedChat],
        names: list[str],
        chat: ChatRef | None,
    ):
        self._files = files
        self._load_chat = load_chat
        self._names = names
        self._chat_ref = chat
        self._books: dict[str, LoadedBook] = {}
        self._chat: LoadedChat | None = None
        self._book_data: dict[str, bytes | None] = {}
        self._restores: dict[str, int] = {}
        self._chat_data: bytes | None = None

    def book(self, name: str) -> LoadedBook:
        name = self._locked(name)
        if name not in self._books:
            self._books[name] = self._files.load(name)
        return self._books[name]

    def chat(self) -> LoadedChat:
        if self._chat_ref is None:
            raise CharMemoryError("this change was not opened with a chat")
        if self._chat is None:
            self._chat = self._load_chat(self._chat_ref)
        return self._chat

    def save(self, name: str, book: Lorebook) -> None:
        self.book(name)
        self._book_data[self._locked(name)] = book.render().encode("utf-8")

    def restore(self, name: str, data: bytes | None, *, restores: int | None = None) -> None:
        self.book(name)
        name = self._locked(name)
        self._book_data[name] = data
        if restores is not None:
            self._restores[name] = restores

    def save_chat(self, chat: Chat) -> None:
        self.chat()
        self._chat_data = chat.render().encode("utf-8")

    def changes(self, root: Path) -> list[FileChange]:
        """What will be written, each file checked to hold what this transaction read."""
        changes = []
        for name, after in self._book_data.items():
            loaded = self._books[name]
            before = _unchanged_since(loaded.version.path, loaded.version.digest)
            if before != after:
                relative = loaded.version.path.relative_to(root).as_posix()
                changes.append(FileChange(relative, before, after, True, self._restores.get(name)))
        if self._chat is not None and self._chat_data is not None:
            path = self._chat.ref.path
            before = _unchanged_since(path, self._chat.version.digest)
            if before != self._chat_data:
                relative = path.resolve().relative_to(root).as_posix()
                changes.append(FileChange(relative, before, self._chat_data, versioned=False))
        return changes

    def _locked(self, name: str) -> str:
        name = name.strip().removesuffix(".json")
        if name not in self._names:
            raise CharMemoryError(f"book {name!r} was not locked for this change")
        return name


def _unchanged_since(path: Path, digest: str | None) -> bytes | None:
    """The file's bytes, refused if they are not what was read (an editor saved meanwhile)."""
    read = read_versioned(path)
    if read.version.digest != digest:
        raise ConflictError(
            f"{path.name} changed on disk while it was being updated; nothing was written"
        )
    return read.data
