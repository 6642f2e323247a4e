"""Around extraction: status, batch planning, pinning, resetting and clearing memories."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from charmemory.adapters.extraction_state import ExtractionState
from charmemory.adapters.library import Library
from charmemory.adapters.memory_files import MemoryFiles
from charmemory.adapters.settings_store import SettingsStore, character_scope
from charmemory.adapters.workspace import Workspace
from charmemory.core.memory_history import CLEAR
from charmemory.core.triggers import TriggerState, trigger_status
from charmemory.core.watermark import (
    Watermark,
    changed_since_extraction,
    chunk,
    messages_to_extract,
    pending_character_messages,
)
from charmemory.errors import CharMemoryError
from charmemory.formats.memory_file import append_block, build_block, format_block_date
from charmemory.services.extraction import ExtractionService, source_messages

PINNED_CHAT = "pinned"
CLEARED_STATE = "extraction_state_before_clear"


@dataclass(frozen=True)
class ChatStatus:
    chat: str
    messages: int
    last_extracted: int
    progress: str  # `n/N msgs` toward the next automatic extraction
    readiness: str  # `Ready`, `Off` or the cooldown left
    changed: list[str]  # messages edited, swiped or deleted after extraction


@dataclass(frozen=True)
class Status:
    character: str
    memory_file: str
    bullets: int
    blocks: int
    chats: list[ChatStatus]


@dataclass(frozen=True)
class BatchPlan:
    chats: list[tuple[str, int, int]]  # chat id, messages to extract, LLM calls

    @property
    def messages(self) -> int:
        return sum(m for _, m, _ in self.chats)

    @property
    def calls(self) -> int:
        return sum(c for _, _, c in self.chats)


class ExtractionAdmin:
    def __init__(self, workspace: Workspace, extraction: ExtractionService):
        self._ws = workspace
        self._extraction = extraction
        self._library = Library(workspace)
        self._files = MemoryFiles(workspace)
        self._state = ExtractionState(workspace.db)
        self._settings = SettingsStore(workspace.db)

    def status(self, character_name: str, chat_id: str | None = None) -> Status:
        character = self._library.character(character_name)
        settings = self._extraction.settings_for(character)
        refs = self._library.chats(character)
        if chat_id is not None:
            refs = [self._library.chat(character, chat_id)]
        memories = self._files.load(
            self._extraction.memory_path_for(character, refs[-1] if refs else None)
        )
        now = datetime.now(UTC)
        chats = []
        for ref in refs:
            loaded = self._library.load_chat(ref)
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
            self._files.relative(memories.path),
            memories.file.bullet_count,
            memories.file.block_count,
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

    def pin(self, character_name: str, text: str) -> list[str]:
        """Each non-empty line becomes a bullet of one new block; no model involved."""
        self._ws.require_writable("pin memories")
        character = self._library.character(character_name)
        bullets = [line.strip().removeprefix("- ").strip() for line in text.splitlines()]
        bullets = [b for b in bullets if b]
        if not bullets:
            raise CharMemoryError("nothing to pin: the text is empty")
        memories = self._files.load(self._extraction.memory_path_for(character, None))
        block = build_block(PINNED_CHAT, format_block_date(datetime.now(UTC)), bullets)
        self._files.save(memories, append_block(memories.file, block), cause="pin")
        return [b.text for b in block.bullets]

    def reset(self, character_name: str) -> None:
        """Forget what was extracted from the character's chats; memories stay."""
        character = self._library.character(character_name)
        self._state.reset(character.name)

    def clear(self, character_name: str, *, confirmed: bool) -> list[str]:
        """Delete the character's memory files and reset extraction; returns what went."""
        if not confirmed:
            raise CharMemoryError("clearing deletes every memory of the character; pass --yes")
        self._ws.require_writable("clear memories")
        character = self._library.character(character_name)
        paths = {self._extraction.memory_path_for(character, None)}
        paths.update(
            self._extraction.memory_path_for(character, ref)
            for ref in self._library.chats(character)
        )
        removed = []
        for path in sorted(paths):
            memories = self._files.load(path)
            if memories.exists:
                # The history keeps the file's last version: `undo` brings it back.
                self._files.delete(memories, cause=CLEAR)
                removed.append(self._files.relative(path))
        # Kept so that `undo` of this clear also restores what was extracted.
        self._settings.set(
            CLEARED_STATE,
            self._state.snapshot(character.name),
            scope=character_scope(character.name),
        )
        self._state.reset(character.name)
        return removed

    def restore_cleared_state(self, character_name: str) -> bool:
        """After `undo` of a clear: extraction progress as it stood before the clear."""
        scope = character_scope(character_name)
        saved = self._settings.get(CLEARED_STATE, scope=scope)
        if saved is None:
            return False
        self._state.restore(character_name, saved)
        self._settings.delete(CLEARED_STATE, scope=scope)
        return True
