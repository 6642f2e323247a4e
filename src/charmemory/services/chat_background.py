"""The work that follows a saved reply in the background: automatic extraction and
scene memories.

The trigger decides at once; the work runs as tasks whose failures are kept and
reported once each (`failures`), never breaking the chat.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from charmemory.core.triggers import SKIPPED, STARTED, format_wait, trigger_outcome
from charmemory.errors import CharMemoryError
from charmemory.ports import ActivityRecorder, Character, CharacterLibrary, ChatRef, GroupMembership
from charmemory.services.extraction import ExtractionService

# Work that follows a saved reply in the background (automatic scene memories); it is
# given the chat's lock, to hold only while it writes the chat.
AfterReply = Callable[[ChatRef, asyncio.Lock], Awaitable[object]]


class BackgroundWork:
    def __init__(
        self,
        library: CharacterLibrary,
        extraction: ExtractionService,
        activity: ActivityRecorder,
        *,
        chat_lock: Callable[[ChatRef], asyncio.Lock],
        after_reply: AfterReply | None = None,
    ):
        self._library = library
        self._extraction = extraction
        self._activity = activity
        self._chat_lock = chat_lock
        self._after_reply = after_reply
        self._extractions: dict[tuple[str, str], asyncio.Task[Any]] = {}
        self._followers: list[asyncio.Task[Any]] = []
        self._failures: list[str] = []

    def trigger_extraction(self, character: Character, ref: ChatRef) -> dict[str, str]:
        """Start extraction in the background if the trigger says so now; say what happened
        (`none`, `started` or `skipped: <reason>`), by character.

        In a group chat every member hears the new message: each member's own
        extraction is triggered (muted ones too), each with its own watermark.
        """
        if ref.group is None:
            return {character.name: self._trigger_one(character, ref)}
        return {
            member.character.name: self._trigger_one(member.character, member)
            for member in self._group_listeners(ref.group, ref.id)
        }

    def _group_listeners(self, group: GroupMembership, chat_id: str) -> list[ChatRef]:
        """The group chat as each member of its group takes part in it."""
        loaded = self._library.group(group.group_id)
        return [
            self._library.group_chat(loaded, member, chat_id)
            for member in self._library.group_members(loaded.group)
            if member is not None
        ]

    def _trigger_one(self, character: Character, ref: ChatRef) -> str:
        outcome = trigger_outcome(self._extraction.decision(character.name, ref.id))
        if outcome != STARTED:
            return outcome
        key = (character.name, ref.id)
        if key in self._extractions and not self._extractions[key].done():
            return f"{SKIPPED}an extraction of this chat is running"
        self._extractions[key] = asyncio.create_task(self._extract(character.name, ref.id))
        return outcome

    async def _extract(self, character: str, chat: str) -> None:
        try:
            await self._extraction.on_character_message(character, chat)
        except CharMemoryError as error:
            message = f"automatic extraction failed for {character} ({chat}): {error}"
            self._failures.append(message)
            self._activity.record(
                "chat.extraction", message, level="warning", character=character, chat=chat
            )

    def follow_reply(self, ref: ChatRef) -> None:
        """Start the work that follows a saved reply, if there is any."""
        if self._after_reply is None:
            return
        running = [task for task in self._followers if not task.done()]
        self._followers = [*running, asyncio.create_task(self._follow(ref))]

    async def _follow(self, ref: ChatRef) -> None:
        assert self._after_reply is not None
        try:
            await self._after_reply(ref, self._chat_lock(ref))
        except CharMemoryError as error:
            name = ref.character.name
            message = f"automatic scene memory failed for {name} ({ref.id}): {error}"
            self._failures.append(message)
            self._activity.record(
                "chat.scene_memory", message, level="warning", character=name, chat=ref.id
            )

    async def finished(self) -> list[str]:
        """Wait for background extractions (and scene memories); the failures since the last
        call, once each."""
        running = [task for task in self._extractions.values() if not task.done()]
        running += [task for task in self._followers if not task.done()]
        if running:
            await asyncio.gather(*running)
        return self.failures()

    def cancel_extractions(self) -> None:
        """Stop background extractions (at shutdown): each is journalled, so none is torn."""
        for task in self._extractions.values():
            task.cancel()

    def failures(self) -> list[str]:
        """The background work's failures since the last call, once each (no waiting)."""
        failures, self._failures = self._failures, []
        return failures

    def status_line(self, character_name: str, chat_id: str | None = None) -> str:
        """`5/20 msgs · Ready`: how far the next automatic extraction is."""
        decision = self._extraction.decision(character_name, chat_id)
        done, interval = decision.progress
        if decision.reason == "disabled":
            readiness = "automatic extraction off"
        elif decision.cooldown_left is not None:
            readiness = f"{format_wait(decision.cooldown_left)} left"
        else:
            readiness = "Ready"
        return f"{done}/{interval} msgs · {readiness}"
