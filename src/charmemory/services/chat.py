"""Chatting with a character who remembers: every chat operation, one entry point.

`ChatService` opens chats, pages through them, previews and makes replies (one
turn: `chat_turn`), edits chats by hand (`chat_edits`), reads the generations'
records for `diagnose`, and reports the background work that follows a reply
(`chat_background`). Operations on one chat are serialised by its lock.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

from charmemory.core.chat import editing
from charmemory.core.chat.diagnostics import GenerationRecord
from charmemory.core.chat.messages import greeting, new_chat_header, user_message
from charmemory.core.chat_user import named_chat_user
from charmemory.core.model_settings import ModelSettings
from charmemory.core.prompt.request import Persona
from charmemory.errors import CharMemoryError, ConfigError, NotFoundError
from charmemory.formats.chat import Chat, MessagePage
from charmemory.formats.chat_name import chat_file_name
from charmemory.ports import (
    ActivityRecorder,
    Character,
    ChatModel,
    ChatRef,
    GenerationLog,
    LoadedChat,
)
from charmemory.services.chat_background import AfterReply, BackgroundWork
from charmemory.services.chat_edits import AfterBranch, ChatEditor
from charmemory.services.chat_turn import (
    STOPPED,
    Kind,
    OnDelta,
    Turn,
    TurnRunner,
    activated_lore,
    memories_of,
)
from charmemory.services.extraction import ExtractionService
from charmemory.services.memory_access import MemoryLocator
from charmemory.services.narrator import NarratorService
from charmemory.services.prompting import PromptPreparer
from charmemory.services.settings import SettingsService

# What other modules import from here (the turn's values are defined in `chat_turn`).
__all__ = ["STOPPED", "ChatService", "Kind", "OnDelta", "Turn"]

# A new chat's user takes their name from the newest of this many other chats.
_CHATS_ASKED_FOR_A_NAME = 5


class ChatService:
    def __init__(
        self,
        locator: MemoryLocator,
        preparer: PromptPreparer,
        generations: GenerationLog,
        settings: SettingsService,
        extraction: ExtractionService,
        activity: ActivityRecorder,
        *,
        model_for: Callable[[str], ChatModel],
        clock: Callable[[], datetime],
        after_reply: AfterReply | None = None,
        after_branch: AfterBranch | None = None,
        narrator: NarratorService | None = None,
    ):
        self._locator = locator
        self._library = locator.library
        self._preparer = preparer
        self._generations = generations
        self._settings = settings
        self._activity = activity
        self._clock = clock
        self._locks: dict[Path, asyncio.Lock] = {}
        self._background = BackgroundWork(
            self._library, extraction, activity, chat_lock=self.chat_lock, after_reply=after_reply
        )
        self._editor = ChatEditor(
            self._library,
            chat_ref=self.chat_ref,
            chat_lock=self.chat_lock,
            narrator=narrator,
            after_branch=after_branch,
        )
        self._turns = TurnRunner(
            locator,
            preparer,
            generations,
            settings,
            self._background,
            model_for=model_for,
            clock=clock,
            narrator=narrator,
        )

    # -- chats ------------------------------------------------------------------------

    def new_chat(self, character_name: str) -> LoadedChat:
        """A new chat opening with the card's greeting (alternate greetings as swipes)."""
        character = self._library.character(character_name)
        chat_id, chat = self._fresh_chat(character)
        loaded = self._library.create_chat(character, chat_id, chat)
        self._activity.record(
            "chat.new", f"new chat {chat_id}", character=character.name, chat=chat_id
        )
        return loaded

    def _fresh_chat(self, character: Character) -> tuple[str, Chat]:
        now = self._clock()
        chat_id = chat_file_name(character.name, now.astimezone()).removesuffix(".jsonl")
        header = new_chat_header()
        card = character.card
        messages = []
        if card.first_mes or card.alternate_greetings:
            messages.append(greeting(character.name, card.first_mes, card.alternate_greetings, now))
        return chat_id, Chat(header, messages)

    def open_chat(
        self, character_name: str, chat_id: str | None = None, *, new: bool = False
    ) -> LoadedChat:
        """A chat by id, a new one, or the character's latest (a new one if it has none)."""
        return self._library.load_chat(self.chat_ref(character_name, chat_id, new=new))

    def message_page(
        self, character_name: str, chat_id: str, *, before: int | None = None, count: int = 50
    ) -> tuple[ChatRef, MessagePage]:
        """A page of the chat's messages (the newest, or those before ``before``)."""
        ref = self._library.chat(self._library.character(character_name), chat_id)
        return ref, self._library.message_page(ref, before=before, count=count)

    def user_name(self, ref: ChatRef, shown: MessagePage) -> str:
        """What the person is called in the chat as the prompt calls them, read from the
        page ``shown`` of it (the persona set, else the name its messages give them)."""
        return self._persona(ref.character, Chat(shown.header, shown.messages), ref.id).name

    def chat_ref(
        self, character_name: str, chat_id: str | None = None, *, new: bool = False
    ) -> ChatRef:
        """Which chat an operation is on, without reading it (a new chat is created)."""
        character = self._library.character(character_name)
        if new or (chat_id is None and self._library.latest_chat(character) is None):
            return self.new_chat(character.name).ref
        return self._library.chat(character, chat_id)

    # -- turns (services/chat_turn.py) --------------------------------------------------

    async def preview(
        self, character_name: str, text: str, chat_id: str | None = None, *, new: bool = False
    ) -> dict[str, Any]:
        """The exact messages a `send` would send, its memories and World Info; nothing saved."""
        character = self._library.character(character_name)
        ref: ChatRef | None = None
        if new or (chat_id is None and self._library.latest_chat(character) is None):
            chat = self._fresh_chat(character)[1]
        else:
            loaded = self._library.load_chat(self._library.chat(character, chat_id))
            chat, ref = loaded.chat, loaded.ref
        persona = self._persona(character, chat, ref.id if ref is not None else None)
        chat.append(user_message(persona.name, text, self._clock()))
        try:
            model = self._settings.model(character=character.name, require_model=False)
        except ConfigError:
            model = ModelSettings("custom", "", "")  # nothing is sent: the defaults will do
        prepared = await self._preparer.prepare(
            character,
            chat,
            self._locator.for_chat(character, ref),
            model,
            group=ref.group.members if ref is not None and ref.group is not None else (),
            cast=self._turns.snapshot(ref, chat) if ref is not None else None,
            persona=persona,
        )
        return {
            "messages": [{"role": m.role, "content": m.content} for m in prepared.messages],
            "memories": [
                {"id": m["id"], "text": m["text"], "score": m["score"]}
                for m in memories_of(prepared)
            ],
            "world_info": [
                {"book": e["book"], "uid": e["uid"], "comment": e["comment"], "why": e["why"]}
                for e in activated_lore(prepared)
            ],
        }

    async def send(
        self,
        character_name: str,
        text: str,
        chat_id: str | None = None,
        *,
        new: bool = False,
        on_delta: OnDelta | None = None,
        stop: asyncio.Event | None = None,
    ) -> Turn:
        """The user's message, then the character's reply."""
        if not text.strip():
            raise CharMemoryError("the message is empty")
        ref = self.chat_ref(character_name, chat_id, new=new)
        async with self.chat_lock(ref):
            self._turns.prefetch(ref, text)
            await asyncio.sleep(0)  # the embedding starts on its thread while the chat is read
            loaded = self._library.load_chat(ref)
            persona = self._persona(ref.character, loaded.chat, ref.id)
            message = user_message(persona.name, text, self._clock())
            return await self._turns.answer(loaded, message, on_delta, stop, persona)

    def _persona(self, character: Character, chat: Chat, chat_id: str | None) -> Persona:
        """`PromptPreparer.persona`; a chat that names nobody yet (a new one) takes the
        name the user goes by in the newest of the character's other chats that names
        them (of the last few: each is read to find out)."""

        def known_as() -> str | None:
            others = [c for c in self._library.chats(character) if c.id != chat_id]
            for other in reversed(others[-_CHATS_ASKED_FOR_A_NAME:]):
                if other.group is not None:
                    continue
                try:
                    found = named_chat_user(self._library.load_chat(other).chat)
                except CharMemoryError:
                    continue  # an unreadable old chat names nobody; this chat still goes on
                if found is not None:
                    return found
            return None

        return self._preparer.persona(chat, known_as=known_as)

    async def generate(
        self,
        character_name: str,
        chat_id: str | None = None,
        *,
        kind: Kind = "normal",
        on_delta: OnDelta | None = None,
        stop: asyncio.Event | None = None,
    ) -> Turn:
        """A reply without a new message: a new reply, a swipe, a regeneration, a continuation."""
        ref = self.chat_ref(character_name, chat_id)
        async with self.chat_lock(ref):
            loaded = self._library.load_chat(ref)
            if kind != "normal":
                editing.last_reply(loaded.chat)  # raises when there is none to change
            if kind == "regenerate":
                editing.delete_last(loaded.chat, 1)
                loaded = self._library.save_chat(loaded, loaded.chat)
            persona = self._persona(ref.character, loaded.chat, ref.id)
            return await self._turns.run(loaded, kind, on_delta, stop, persona=persona)

    async def reply_in_group(
        self,
        ref: ChatRef,
        *,
        batch: int,
        kind: Kind = "normal",
        on_delta: OnDelta | None = None,
        stop: asyncio.Event | None = None,
    ) -> Turn:
        """One member's reply to a group chat as it is now (``ref``: the chat as that
        member's); the replies drafted together share ``batch``. The caller holds
        `chat_lock(ref)` for the whole round."""
        loaded = self._library.load_chat(ref)
        if kind != "normal":
            editing.last_reply(loaded.chat)  # raises when there is none to change
        return await self._turns.run(loaded, kind, on_delta, stop, batch=batch)

    # -- automatic extraction (services/chat_background.py) -------------------------------

    def trigger_extraction(self, character: Character, ref: ChatRef) -> dict[str, str]:
        """Start extraction in the background if the trigger says so now (see
        `BackgroundWork.trigger_extraction`)."""
        return self._background.trigger_extraction(character, ref)

    async def extractions_finished(self) -> list[str]:
        """Wait for background extractions (and scene memories); the failures since the last
        call, once each."""
        return await self._background.finished()

    def cancel_extractions(self) -> None:
        """Stop background extractions (at shutdown): each is journalled, so none is torn."""
        self._background.cancel_extractions()

    def extraction_failures(self) -> list[str]:
        """The background extractions' failures since the last call, once each (no waiting)."""
        return self._background.failures()

    def status_line(self, character_name: str, chat_id: str | None = None) -> str:
        """`5/20 msgs · Ready`: how far the next automatic extraction is."""
        return self._background.status_line(character_name, chat_id)

    # -- diagnostics --------------------------------------------------------------------

    def generations(
        self, character_name: str, chat_id: str | None = None, count: int = 1
    ) -> list[GenerationRecord]:
        """The chat's newest ``count`` generations, newest first."""
        character = self._library.character(character_name)
        ref = self._library.chat(character, chat_id)
        return self._generations.last(character.name, ref.id, count)

    def generation(
        self, character_name: str, number: int, chat_id: str | None = None
    ) -> GenerationRecord:
        character = self._library.character(character_name)
        ref = self._library.chat(character, chat_id)
        found = self._generations.get(character.name, ref.id, number)
        if found is None:
            kept = [
                record.number for record in self._generations.last(character.name, ref.id, 1000)
            ]
            raise NotFoundError(
                f"no generation {number} of {ref.id} is kept"
                + (f" (kept: {min(kept)}-{max(kept)})" if kept else " (none yet)")
            )
        return found

    # -- editing (services/chat_edits.py) ------------------------------------------------

    async def choose_swipe(
        self, character_name: str, number: int, chat_id: str | None = None
    ) -> str:
        """Show swipe ``number`` (1-based) of the last reply; returns its text."""
        return await self._editor.choose_swipe(character_name, number, chat_id)

    async def edit(
        self, character_name: str, index: int, text: str, chat_id: str | None = None
    ) -> str:
        return await self._editor.edit(character_name, index, text, chat_id)

    async def delete_last(self, character_name: str, count: int, chat_id: str | None = None) -> int:
        """Delete the last ``count`` messages."""
        return await self._editor.delete_last(character_name, count, chat_id)

    async def delete_message(
        self, character_name: str, index: int, chat_id: str | None = None
    ) -> int:
        """Delete one message."""
        return await self._editor.delete_message(character_name, index, chat_id)

    async def set_hidden(
        self, character_name: str, first: int, last: int, hidden: bool, chat_id: str | None = None
    ) -> list[int]:
        return await self._editor.set_hidden(character_name, first, last, hidden, chat_id)

    async def branch(
        self, character_name: str, at: int | None = None, chat_id: str | None = None
    ) -> str:
        """A new chat holding messages 0..``at`` (default: all); returns its id."""
        return await self._editor.branch(character_name, at, chat_id)

    def chat_lock(self, ref: ChatRef) -> asyncio.Lock:
        """Held by every operation on the chat's file (a group chat's members share it)."""
        return self._locks.setdefault(ref.path, asyncio.Lock())
