"""Around extraction: status, batch planning, pinning, resetting and clearing memories,
and extraction progress after an undo."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from charmemory.core.bullet_length import require_within_limit
from charmemory.core.memory_history import CLEAR, EXTRACTION
from charmemory.core.message_cleaning import clean_message_text
from charmemory.core.triggers import TriggerState, trigger_status
from charmemory.core.watermark import (
    Watermark,
    changed_since_extraction,
    chunk,
    messages_to_extract,
    pending_character_messages,
    watermark_after_undo,
)
from charmemory.errors import CharMemoryError, FormatError, NotFoundError
from charmemory.formats.block_dates import (
    format_block_date,
)
from charmemory.formats.memory_file import (
    append_block,
    build_block,
    parse_memory_file,
)
from charmemory.ports import (
    ActivityRecorder,
    Character,
    ChatRef,
    ExtractedBlock,
    ExtractionStateStore,
)
from charmemory.services.extraction import ExtractionService, source_messages
from charmemory.services.extraction_report import ExtractionReport, Progress, no_progress
from charmemory.services.memory_access import Located, MemoryFileAccess
from charmemory.services.memory_history import Restoration

PINNED_CHAT = "pinned"


@dataclass(frozen=True)
class ChatStatus:
    chat: str
    messages: int
    last_extracted: int
    progress: str  # `n/N msgs` toward the next automatic extraction
    readiness: str  # `Ready`, `Off` or the cooldown left
    changed: list[str]  # messages edited, swiped or deleted after extraction
    problem: str = ""  # why the chat could not be read (the other fields are then empty)


@dataclass(frozen=True)
class Status:
    character: str
    memory_file: str
    bullets: int
    blocks: int
    chats: list[ChatStatus]


@dataclass(frozen=True)
class Pinned:
    file: str
    memories: list[str]
    warnings: list[str]
    chat: str | None = None  # the chat the memories are for (per-chat files, a message)
    chosen_because: str = ""  # that chat was not named: why it is the latest


@dataclass(frozen=True)
class BatchPlan:
    chats: list[tuple[str, int, int]]  # chat id, messages to extract, LLM calls

    @property
    def messages(self) -> int:
        return sum(m for _, m, _ in self.chats)

    @property
    def calls(self) -> int:
        return sum(c for _, _, c in self.chats)


@dataclass(frozen=True)
class ChatFailure:
    chat: str
    error: str


@dataclass
class BatchOutcome:
    """A batch run: memories saved, the chats that failed (their messages stay
    unprocessed) and whether it was stopped before the end."""

    saved: int = 0
    failed: list[ChatFailure] = field(default_factory=list)
    stopped: bool = False
    reports: list[ExtractionReport] = field(default_factory=list)


class ExtractionAdmin:
    def __init__(
        self,
        extraction: ExtractionService,
        access: MemoryFileAccess,
        state: ExtractionStateStore,
        *,
        log: ActivityRecorder,
    ):
        self._extraction = extraction
        self._log = log
        self._access = access
        self._library = access.library
        self._files = access.files
        self._state = state

    def status(self, character_name: str, chat_id: str | None = None) -> Status:
        located = self._access.locator.locate(character_name, chat_id)
        character = located.character
        settings = self._extraction.settings_for(character)
        refs = (
            [located.chat]
            if chat_id is not None and located.chat
            else self._library.chats(character)
        )
        memories = self._files.load(located.location.file)
        now = datetime.now(UTC)
        chats = []
        for ref in refs:
            try:
                loaded = self._library.load_chat(ref)
            except FormatError as error:
                if chat_id is not None:
                    raise
                # One damaged chat must not hide where the others stand.
                chats.append(ChatStatus(ref.id, 0, -1, "", "", [], problem=str(error)))
                continue
            sources = source_messages(loaded)
            stored = self._state.chat(character.name, ref.id)
            watermark = Watermark(
                stored.watermark, self._state.fingerprints(character.name, ref.id)
            )
            current = self._extraction.current_watermark(character, ref, sources, persist=False)
            trigger = TriggerState(
                count=pending_character_messages(sources, current), last_run_at=stored.last_run_at
            )
            shown = trigger_status(trigger, now, settings)
            chats.append(
                ChatStatus(
                    ref.id,
                    len(sources),
                    current.last_index,
                    shown.progress,
                    shown.readiness,
                    [change.describe() for change in changed_since_extraction(sources, watermark)],
                )
            )
        return Status(
            character.name,
            memories.file,
            memories.memories.bullet_count,
            memories.memories.block_count,
            chats,
        )

    def batch_plan(self, character_name: str, chat_ids: list[str] | None) -> BatchPlan:
        """What a batch run will cost: messages and LLM calls per chat."""
        character = self._library.character(character_name)
        settings = self._extraction.settings_for(character)
        refs = (
            self._library.chats(character)
            if not chat_ids
            else [self._library.chat(character, chat_id) for chat_id in chat_ids]
        )
        rows = []
        for ref in refs:
            sources = source_messages(self._library.load_chat(ref))
            watermark = self._extraction.current_watermark(character, ref, sources, persist=False)
            todo = messages_to_extract(sources, watermark)
            rows.append(
                (ref.id, len(todo), len(chunk(todo, settings.messages_per_call)) if todo else 0)
            )
        return BatchPlan(rows)

    async def run_batch(
        self,
        character_name: str,
        chat_ids: Sequence[str],
        *,
        progress: Progress = no_progress,
        stop: asyncio.Event | None = None,
    ) -> BatchOutcome:
        """Extract chat after chat; a chat that fails is recorded and the batch goes on."""
        character = self._library.character(character_name)
        outcome = BatchOutcome()
        for chat_id in chat_ids:
            if stop is not None and stop.is_set():
                outcome.stopped = True
                break
            try:
                report = await self._extraction.extract(
                    character.name, chat_id, progress=progress, stop=stop
                )
            except CharMemoryError as error:
                outcome.failed.append(ChatFailure(chat_id, str(error)))
                self._log.record(
                    "extract.batch",
                    f"batch: this chat failed ({error}); its remaining messages stay "
                    "unprocessed, the batch goes on",
                    level="error",
                    character=character.name,
                    chat=chat_id,
                )
                continue
            outcome.saved += report.saved
            outcome.reports.append(report)
            if report.stopped:
                outcome.stopped = True
                break
        return outcome

    async def pin(self, character_name: str, text: str, *, chat: str | None = None) -> Pinned:
        """Each non-empty line becomes a bullet of one new block; no model involved."""
        bullets = [line.strip().removeprefix("- ").strip() for line in text.splitlines()]
        bullets = [b for b in bullets if b]
        if not bullets:
            raise CharMemoryError("nothing to pin: the text is empty")
        return await self._pin(self._access.locator.locate(character_name, chat), bullets)

    async def pin_message(
        self, character_name: str, index: int, *, chat: str | None = None
    ) -> Pinned:
        """One chat message, cleaned as extraction cleans it, as a bullet of a block that
        names the chat (the latest one when none is named); no model involved."""
        located = self._access.locator.locate(character_name, chat, latest_chat=True)
        if located.chat is None:
            raise NotFoundError(f"{located.character.name} has no chats to pin a message from")
        messages = self._library.load_chat(located.chat).chat.messages
        if not 0 <= index < len(messages):
            raise NotFoundError(
                f"{located.chat.id} has no message {index} (messages 0-{len(messages) - 1})"
            )
        text = " ".join(clean_message_text(messages[index].active_text).split())
        if not text:
            raise CharMemoryError(f"message {index} holds no text once its markup is removed")
        return await self._pin(located, [text], block_chat=located.chat.id, message=index)

    async def _pin(
        self,
        located: Located,
        bullets: list[str],
        *,
        block_chat: str = PINNED_CHAT,
        message: int | None = None,
    ) -> Pinned:
        self._files.require_writable("pin memories")
        memories = self._files.load(located.location.file)
        limit = self._extraction.settings_for(located.character).max_bullet_chars
        require_within_limit(bullets, limit)
        block = build_block(block_chat, format_block_date(datetime.now(UTC)), bullets)
        new = append_block(memories.memories, block)
        self._files.save(memories, new, cause="pin")
        warnings = await self._access.announce(located.location, new)
        pinned = [b.text for b in block.bullets]
        source = f" from message {message}" if message is not None else ""
        chat = located.chat.id if located.chat else None
        self._log.record(
            "memory.pin",
            f"pinned {len(pinned)} memories{source} in {memories.file}",
            character=located.character.name,
            chat=chat,
            data={"memories": pinned},
        )
        return Pinned(memories.file, pinned, warnings, chat, located.chosen_because)

    def reset(self, character_name: str) -> None:
        """Forget what was extracted from the character's chats; memories stay."""
        character = self._library.character(character_name)
        self._state.reset(character.name)
        self._log.record(
            "extract.reset",
            "extraction progress reset for every chat; memories kept",
            character=character.name,
        )

    async def clear(self, character_name: str, *, confirmed: bool) -> list[str]:
        """Delete the character's memory files and reset extraction; returns what went."""
        if not confirmed:
            raise CharMemoryError("clearing deletes every memory of the character; pass --yes")
        self._files.require_writable("clear memories")
        character = self._library.character(character_name)
        removed = []
        for location in sorted(
            self._access.locator.every_file(character), key=lambda place: place.file
        ):
            # Not read as text: a file in another encoding can be cleared too.
            version = self._files.current_version(location.file)
            if version.digest is not None:
                # The history keeps the file's last version: `undo` brings it back.
                self._files.delete(location.file, version, cause=CLEAR)
                removed.append(location.file)
            await self._access.announce(location, parse_memory_file(""))
        # Kept so that `undo` of this clear also restores what was extracted.
        self._state.keep_cleared(character.name, self._state.snapshot(character.name))
        self._state.reset(character.name)
        self._log.record(
            "memory.clear",
            f"removed {', '.join(removed) if removed else 'nothing (no memory file)'}; "
            "extraction progress reset (`charmemory undo` brings both back)",
            character=character.name,
            data={"removed": removed},
        )
        return removed

    def after_undo(self, restoration: Restoration) -> list[str]:
        """Extraction progress after an undo; returns what changed, for the person.

        Undoing a clear brings back the progress the clear reset. Otherwise the
        messages of each extracted block the undo took out count as unprocessed
        again, and those of a block it brought back as processed again (when they
        still follow the watermark); blocks are recognised by their text.
        Extractions made before blocks were recorded cannot be traced: for those,
        it says which messages still count as extracted and how to redo them.
        """
        character = self._library.character(restoration.character)
        if restoration.undoes_clear:
            saved = self._state.take_cleared(character.name)
            if saved is not None:
                self._state.restore(character.name, saved)
            return []
        before, after = restoration.before, restoration.after
        removed, restored = [], []
        for block in self._state.extracted_blocks(restoration.file):
            if block.block in before and block.block not in after:
                removed.append(block)
            elif block.block in after and block.block not in before:
                restored.append(block)
        chats = {ref.id: ref for ref in self._library.chats(character)}
        said = [
            self._follow_undo(character, chats[chat], removed, restored)
            for chat in sorted({block.chat for block in [*removed, *restored]})
            if chat in chats
        ]
        return [line for line in said if line] + self._untraced(character, restoration, chats)

    def _follow_undo(
        self,
        character: Character,
        ref: ChatRef,
        removed: list[ExtractedBlock],
        restored: list[ExtractedBlock],
    ) -> str:
        sources = source_messages(self._library.load_chat(ref))
        with self._state.exclusive(character.name, ref.id):
            current = self._extraction.current_watermark(character, ref, sources, persist=True)
            moved = watermark_after_undo(
                sources,
                current,
                removed=[block.fingerprints for block in removed if block.chat == ref.id],
                restored=[block.fingerprints for block in restored if block.chat == ref.id],
            )
            if moved == current:
                return ""
            self._state.replace_watermark(
                character.name, ref.id, moved.last_index, dict(moved.fingerprints)
            )
        if moved.last_index < current.last_index:
            return (
                f"messages {moved.last_index + 1}-{current.last_index} of {ref.id} count as "
                "unextracted again (the next extraction reads them)"
            )
        span = f"{current.last_index + 1}-{moved.last_index}"
        return f"messages {span} of {ref.id} count as extracted again"

    def _untraced(
        self, character: Character, restoration: Restoration, chats: dict[str, ChatRef]
    ) -> list[str]:
        """Undone extractions whose messages still count as extracted, with the way back."""
        lines = []
        for version in restoration.undone:
            chat, _, span = version.detail.rpartition(" messages ")
            first = span.partition("-")[0]
            if version.cause != EXTRACTION or chat not in chats or not first.isdigit():
                continue
            if self._state.chat(character.name, chat).watermark >= int(first):
                lines.append(
                    f"messages {span} of {chat} (v{version.number}) still count as extracted; "
                    f'to extract them again: charmemory extract "{character.name}" '
                    f'--chat "{chat}" --range {span} --force'
                )
        return lines
