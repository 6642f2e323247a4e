"""Automatic extraction for chats that other programs write: follow the files, run the trigger.

Until charmemory writes the chats itself, nothing calls the trigger after a new
character message. `ChatWatcher` stands in for that call: it polls the chat files'
size and modification time (no parsing) and, for each chat that changed, runs
exactly what a new message would (`ExtractionService.on_character_message`:
interval and cooldown respected). Chats are compared with how they looked at the
start, so starting the watcher extracts nothing by itself.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass

from charmemory.errors import CharMemoryError
from charmemory.ports import ActivityRecorder, Character, CharacterLibrary, ChatStamp
from charmemory.services.extraction import ExtractionService
from charmemory.services.extraction_report import ExtractionReport

DEFAULT_INTERVAL_SECONDS = 5.0

ChatKey = tuple[str, str]  # character name, chat id


@dataclass(frozen=True)
class Triggered:
    """One chat that changed and what the trigger did: a report (run or skipped) or an error."""

    character: str
    chat: str
    report: ExtractionReport | None = None
    error: str = ""

    @property
    def extracted(self) -> bool:
        return (
            self.report is not None
            and self.report.decision is not None
            and (self.report.decision.run)
        )


class ChatWatcher:
    def __init__(
        self,
        library: CharacterLibrary,
        extraction: ExtractionService,
        log: ActivityRecorder,
    ):
        self._library = library
        self._extraction = extraction
        self._log = log

    def characters(self, character_name: str | None) -> list[Character]:
        """Whom to watch: the character named, or every character of the workspace."""
        if character_name is not None:
            return [self._library.character(character_name)]
        return self._library.characters()

    def stamps(self, character_name: str | None) -> dict[ChatKey, ChatStamp]:
        return {
            (character.name, chat): stamp
            for character in self.characters(character_name)
            for chat, stamp in self._library.chat_stamps(character).items()
        }

    async def run(
        self,
        character_name: str | None,
        *,
        interval: float = DEFAULT_INTERVAL_SECONDS,
        stop: asyncio.Event,
        on_trigger: Callable[[Triggered], None],
        seen: dict[ChatKey, ChatStamp] | None = None,
    ) -> None:
        """Poll every `interval` seconds until `stop` is set; each changed chat is triggered."""
        seen = self.stamps(character_name) if seen is None else seen
        while not await _stopped_within(stop, interval):
            current = self.stamps(character_name)
            changed = [key for key, stamp in current.items() if seen.get(key) != stamp]
            seen = current
            for character, chat in changed:
                if stop.is_set():
                    return
                on_trigger(await self.trigger(character, chat, stop=stop))

    async def trigger(
        self, character: str, chat: str, *, stop: asyncio.Event | None = None
    ) -> Triggered:
        """What a new message in `chat` sets off; a failure is logged and returned, not raised."""
        try:
            report = await self._extraction.on_character_message(character, chat, stop=stop)
        except CharMemoryError as error:
            self._log.record(
                "extract.watch",
                f"the automatic extraction failed ({error}); the messages stay unprocessed",
                level="error",
                character=character,
                chat=chat,
            )
            return Triggered(character, chat, error=str(error))
        return Triggered(character, chat, report)


async def _stopped_within(stop: asyncio.Event, seconds: float) -> bool:
    try:
        await asyncio.wait_for(stop.wait(), seconds)
    except TimeoutError:
        return False
    return True
