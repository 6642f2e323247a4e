"""The commands typed in a chat's input box, run against the chat they were typed in.

Every command answers with one text to show (the terminal chat and the web UI both
use this); `/continue` streams like a reply, so a caller that shows the stream runs
it through `continue_reply`.
"""

from __future__ import annotations

import asyncio

from charmemory.core.chat.commands import Command, help_text
from charmemory.services.chat import ChatService, OnDelta, Turn
from charmemory.services.consolidation import ConsolidationService
from charmemory.services.extraction import ExtractionService


class ChatCommands:
    def __init__(
        self,
        chats: ChatService,
        extraction: ExtractionService,
        consolidation: ConsolidationService,
    ):
        self._chats = chats
        self._extraction = extraction
        self._consolidation = consolidation

    async def run(self, character: str, chat: str, command: Command) -> str:
        name = command.name
        if name in ("hide", "unhide"):
            assert command.first is not None and command.last is not None
            changed = await self._chats.set_hidden(
                character, command.first, command.last, name == "hide", chat
            )
            done = "hidden" if name == "hide" else "shown again"
            return f"{done}: {len(changed)} message{'s' if len(changed) != 1 else ''}"
        if name == "branch":
            return f"branch: {await self._chats.branch(character, command.first, chat)}"
        if name == "swipe":
            assert command.first is not None
            return await self._chats.choose_swipe(character, command.first, chat)
        if name == "del":
            assert command.first is not None
            deleted = await self._chats.delete_last(character, command.first, chat)
            return f"deleted {deleted} message{'s' if deleted != 1 else ''}"
        if name == "extract-memories":
            report = await self._extraction.extract(character, chat)
            if not report.planned_messages:
                return "no new messages to extract"
            return f"{report.saved} memories saved from {report.planned_messages} messages"
        if name == "consolidate-memories":
            preview = await self._consolidation.preview(character, chat=chat)
            diff = preview.diff
            return (
                f"preview {preview.id}: {diff.bullets_before} memories would become "
                f"{diff.bullets_after}; apply it with charmemory consolidate "
                f'"{character}" --apply {preview.id}'
            )
        if name == "charmemory-debug":
            return self._debug(character, chat)
        if name == "continue":
            return (await self.continue_reply(character, chat)).reply
        return help_text()

    async def continue_reply(
        self,
        character: str,
        chat: str,
        *,
        on_delta: OnDelta | None = None,
        stop: asyncio.Event | None = None,
    ) -> Turn:
        """`/continue`: the last reply, continued (streamed to ``on_delta``)."""
        return await self._chats.generate(
            character, chat, kind="continue", on_delta=on_delta, stop=stop
        )

    def _debug(self, character: str, chat: str) -> str:
        records = self._chats.generations(character, chat)
        if not records:
            return "no generation in this chat yet"
        record = records[0]
        lines = [
            f"generation {record.number} ({record.kind}, {record.model}): "
            f"{record.tokens.get('total')} prompt tokens",
            f"memories injected ({len(record.memories)}):",
            *(f"  {m['score']:.3f}  {m['text']}" for m in record.memories),
            "world info activated:",
            *(
                f"  {e['book']}#{e['uid']} {e['comment']}: {e['why']}"
                for e in record.world_info
                if e["activated"]
            ),
        ]
        return "\n".join(lines)
