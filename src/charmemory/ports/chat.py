"""What the chat engine needs besides chats: lorebooks, kept generations, a token count."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from charmemory.core.chat.diagnostics import GenerationRecord
    from charmemory.formats.lorebook import Lorebook


@runtime_checkable
class LorebookStore(Protocol):
    """The workspace's World Info books (`worlds/<name>.json`), by name."""

    def names(self) -> list[str]: ...

    def load(self, name: str) -> Lorebook | None:
        """The book, or None when there is no book of that name."""
        ...

    def version(self, name: str) -> str | None:
        """The digest of the book as it is now (None: no such book)."""
        ...

    def save(self, name: str, book: Lorebook, *, expected: str | None) -> str:
        """Write the book if it still is version `expected` (StaleVersionError otherwise)."""
        ...


@runtime_checkable
class GenerationLog(Protocol):
    """What each generation was given, the last few per chat (see `chat.diagnostics_kept`)."""

    def record(self, record: GenerationRecord, *, keep: int) -> int:
        """Keep ``record``; returns its number in its chat (1, 2, ...)."""
        ...

    def last(self, character: str, chat: str, count: int = 1) -> list[GenerationRecord]:
        """The newest ``count`` records of a chat, newest first."""
        ...

    def get(self, character: str, chat: str, number: int) -> GenerationRecord | None: ...


class TokenCounter(Protocol):
    """How many tokens a text costs the chat model (an estimate where no tokenizer is known)."""

    def __call__(self, text: str) -> int: ...
