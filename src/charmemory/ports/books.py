"""Memory books: the lorebooks they are, written together or not at all, and profiles.

Every change to memory books goes through one transaction: it locks the books
(and the chat, when the chat changes too) in a fixed order, reads them as they
are, lets the caller change them, and writes every file or none. A process
killed half-way leaves a journal that the next start finishes. Each book
written gets a durable version, so an undo can bring any earlier one back.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from charmemory.core.memory_history import Version
from charmemory.formats.chat import Chat
from charmemory.formats.lorebook import Lorebook
from charmemory.ports.workspace import ChatRef, FileVersion, LoadedChat


@dataclass(frozen=True)
class LoadedBook:
    """A book as read; `version.digest` is None when no book of that name exists yet."""

    name: str
    book: Lorebook
    version: FileVersion

    @property
    def exists(self) -> bool:
        return self.version.digest is not None


@runtime_checkable
class BookStore(Protocol):
    """The workspace's lorebooks (`worlds/<name>.json`) and their recorded versions."""

    def names(self) -> list[str]: ...

    def load(self, name: str) -> LoadedBook:
        """The book as it is now (an empty, not yet existing book when there is none)."""
        ...

    def versions(self, name: str) -> list[Version]: ...

    def version_bytes(self, name: str, number: int) -> bytes | None: ...

    def require_writable(self, what: str) -> None: ...


class BookWrite(Protocol):
    """One transaction's books and chat, as they are while its locks are held."""

    def book(self, name: str) -> LoadedBook: ...

    def chat(self) -> LoadedChat: ...

    def save(self, name: str, book: Lorebook) -> None:
        """Write ``book`` as ``name`` when the transaction commits (creating it if new)."""
        ...

    def restore(self, name: str, data: bytes | None, *, restores: int | None = None) -> None:
        """Put exactly ``data`` back as ``name`` (None: no such file) when it commits;
        ``restores`` names the version an undo brings back."""
        ...

    def save_chat(self, chat: Chat) -> None: ...


@runtime_checkable
class BookTransactions(Protocol):
    def open(
        self,
        books: Sequence[str],
        chat: ChatRef | None = None,
        *,
        cause: str,
        detail: str = "",
    ) -> AbstractContextManager[BookWrite]:
        """Lock ``books`` (and ``chat``) and commit what the block saved when it ends;
        an exception in the block writes nothing."""
        ...

    def recover(self) -> list[str]:
        """Finish what a killed process left half-written; says what was finished."""
        ...


@runtime_checkable
class ProfileRepository(Protocol):
    """Scene memory profiles by name, as JSON objects; one may be the default."""

    def all(self) -> list[dict[str, Any]]: ...

    def get(self, name: str) -> dict[str, Any] | None: ...

    def put(self, name: str, data: dict[str, Any]) -> None: ...

    def delete(self, name: str) -> bool: ...

    def default_name(self) -> str | None: ...

    def set_default(self, name: str) -> None: ...
