"""Where each chat's extraction stands, with the journal of appends in flight."""

from __future__ import annotations

from collections.abc import Iterable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol, runtime_checkable


@dataclass(frozen=True)
class ChatState:
    character: str
    chat: str
    watermark: int = -1
    last_run_at: datetime | None = None


@dataclass(frozen=True)
class PendingAppend:
    id: int
    character: str
    chat: str
    file: str
    block: str
    first_idx: int
    last_idx: int
    fingerprints: dict[int, str]


@dataclass(frozen=True)
class ExtractedBlock:
    """A block extraction wrote into a memory file, and the messages it came from
    (position: fingerprint), so undoing it can make those messages unprocessed again."""

    character: str
    chat: str
    file: str
    block: str  # the block as written; it is in the file while the file holds it
    fingerprints: dict[int, str]


ExtractionSnapshot = dict[str, dict[str, object]]


@runtime_checkable
class ExtractionStateStore(Protocol):
    """Where each chat's extraction stands, with the journal of appends in flight."""

    def exclusive(self, character: str, chat: str) -> AbstractContextManager[None]:
        """Held while one process extracts from a chat."""
        ...

    def chat(self, character: str, chat: str) -> ChatState: ...

    def fingerprints(self, character: str, chat: str) -> dict[int, str]: ...

    def begin_append(
        self,
        character: str,
        chat: str,
        *,
        file: str,
        block: str,
        first_idx: int,
        last_idx: int,
        fingerprints: dict[int, str],
        now: datetime,
    ) -> PendingAppend: ...

    def commit_append(self, pending: PendingAppend, *, now: datetime) -> None:
        """Advance the watermark, and keep the block's messages (`extracted_blocks`)."""
        ...

    def extracted_blocks(self, file: str) -> list[ExtractedBlock]:
        """The blocks extraction wrote into ``file``, oldest first."""
        ...

    def abandon_append(self, pending: PendingAppend) -> None: ...

    def pending(self, character: str | None = None) -> list[PendingAppend]: ...

    def replace_watermark(
        self, character: str, chat: str, last_index: int, fingerprints: dict[int, str]
    ) -> None: ...

    def mark_attempt(self, character: str, chat: str, at: datetime) -> None: ...

    def reset(self, character: str, chats: Iterable[str] | None = None) -> None: ...

    def snapshot(self, character: str) -> ExtractionSnapshot: ...

    def restore(self, character: str, snapshot: ExtractionSnapshot) -> None: ...

    def keep_cleared(self, character: str, snapshot: ExtractionSnapshot) -> None:
        """Keep what a clear reset, so undoing the clear can bring it back."""
        ...

    def take_cleared(self, character: str) -> ExtractionSnapshot | None:
        """What the last clear reset (forgotten once taken); None when nothing is kept."""
        ...
