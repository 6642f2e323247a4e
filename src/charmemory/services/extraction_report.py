"""What one extraction run reports, chunk by chunk, and how it tells its progress."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from charmemory.core.extraction_answer import LeftOut
from charmemory.core.triggers import Decision
from charmemory.errors import CharMemoryError
from charmemory.ports import ChatMessage


class UnusableAnswerError(CharMemoryError):
    """The model's answer could not be used; the messages stay unprocessed."""


@dataclass(frozen=True)
class ChunkOutcome:
    first: int
    last: int
    saved: list[str]
    dropped: list[str]
    warnings: list[str]
    nothing_new: bool
    # Bullets the model wrote that were not saved (over the cap, addressed to someone,
    # cut off), while the messages count as extracted.
    left_out: list[LeftOut] = field(default_factory=list)


@dataclass
class ExtractionReport:
    character: str
    chat: str
    memory_file: str
    planned_messages: int = 0
    chunks: list[ChunkOutcome] = field(default_factory=list)
    planned_chunks: int = 0
    stopped: bool = False
    decision: Decision | None = None
    prompts: list[list[ChatMessage]] = field(default_factory=list)
    chosen_because: str = ""  # the chat was not named: why it is the latest

    @property
    def saved(self) -> int:
        return sum(len(c.saved) for c in self.chunks)


class Progress(Protocol):
    def __call__(self, report: ExtractionReport, done: int, total: int) -> None: ...


def no_progress(report: ExtractionReport, done: int, total: int) -> None:
    return None
