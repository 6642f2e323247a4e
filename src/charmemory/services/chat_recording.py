"""Recording a frontend's conversation as a chat of the character, as it goes.

Each request is matched to one of the character's chats (see
`core.memory_endpoint.recording`), which is then brought up to date and saved
before the request goes on; the reply is put in afterwards. Choosing a chat,
creating one and changing one are serialised per character, and a change to a
chat holds the same lock as the chat engine's operations on it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from charmemory.core.chat.messages import Generated, new_chat_header
from charmemory.core.memory_endpoint.recording import (
    Alignment,
    Mirrored,
    Speakers,
    align,
    choose_chat,
    mirror,
    record_reply,
)
from charmemory.core.memory_endpoint.request import CompletionRequest
from charmemory.formats.chat import Chat
from charmemory.formats.chat_name import chat_file_name
from charmemory.ports import ActivityRecorder, Character, CharacterLibrary, ChatRef, LoadedChat
from charmemory.services.chat import ChatService
from charmemory.services.prompting import PromptPreparer


@dataclass(frozen=True)
class Followed:
    """The chat a request was recorded in, as saved, and what recording it changed."""

    loaded: LoadedChat
    mirrored: Mirrored
    new_chat: bool

    @property
    def ref(self) -> ChatRef:
        return self.loaded.ref


class ChatRecorder:
    def __init__(
        self,
        library: CharacterLibrary,
        chats: ChatService,
        preparer: PromptPreparer,
        activity: ActivityRecorder,
        *,
        clock: Callable[[], datetime],
    ):
        self._library = library
        self._chats = chats
        self._preparer = preparer
        self._activity = activity
        self._clock = clock
        self._locks: dict[str, asyncio.Lock] = {}
        self._last_chat: dict[str, str] = {}  # character -> the chat recorded last

    async def follow(self, character: Character, request: CompletionRequest) -> Followed:
        """Record the request's conversation: in the chat it continues, else in a new one."""
        async with self._locks.setdefault(character.name, asyncio.Lock()):
            ref = self._continued_chat(character, request)
            new_chat = ref is None
            if ref is None:
                header = new_chat_header()
                ref = self._library.create_chat(
                    character, self._new_chat_id(character), Chat(header)
                ).ref
            async with self._chats.chat_lock(ref):
                loaded = self._library.load_chat(ref)
                alignment = align(loaded.chat, request.turns)
                loaded, mirrored = self._mirrored(loaded, request, alignment)
            self._last_chat[character.name] = ref.id
        self._report(ref, mirrored, new_chat, alignment)
        return Followed(loaded, mirrored, new_chat)

    async def record_reply(
        self, followed: Followed, request: CompletionRequest, generated: Generated
    ) -> tuple[LoadedChat, int]:
        """Put the reply in the chat, as it is now (the request's turns brought back first)."""
        ref = followed.ref
        async with self._chats.chat_lock(ref):
            loaded = self._library.load_chat(ref)
            alignment = align(loaded.chat, request.turns)
            loaded, mirrored = self._mirrored(loaded, request, alignment, save=False)
            index = record_reply(loaded.chat, mirrored.reply, generated, ref.character.name)
            return self._library.save_chat(loaded, loaded.chat), index

    def _continued_chat(self, character: Character, request: CompletionRequest) -> ChatRef | None:
        """The chat the request goes on with; the one recorded last is tried first."""
        refs = list(reversed(self._library.chats(character)))
        hint = self._last_chat.get(character.name)
        refs.sort(key=lambda ref: ref.id != hint)
        chats: list[tuple[str, Chat]] = []
        for ref in refs:
            chat = self._library.load_chat(ref).chat
            if ref.id == hint:
                alignment = align(chat, request.turns)
                if alignment.continues_chat and alignment.untouched:
                    return ref
            chats.append((ref.id, chat))
        chosen = choose_chat(chats, request.turns)
        return None if chosen is None else next(r for r in refs if r.id == chosen[0])

    def _mirrored(
        self,
        loaded: LoadedChat,
        request: CompletionRequest,
        alignment: Alignment,
        *,
        save: bool = True,
    ) -> tuple[LoadedChat, Mirrored]:
        character = loaded.ref.character.name
        speakers = Speakers(self._preparer.persona(loaded.chat).name, character, self._clock())
        mirrored = mirror(loaded.chat, request.turns, alignment, speakers, request.kind)
        if save and mirrored.changed:
            loaded = self._library.save_chat(loaded, loaded.chat)
        return loaded, mirrored

    def _new_chat_id(self, character: Character) -> str:
        """A chat name SillyTavern would give now, one millisecond on if it is taken."""
        taken = {ref.id for ref in self._library.chats(character)}
        at = self._clock().astimezone()
        while (name := chat_file_name(character.name, at).removesuffix(".jsonl")) in taken:
            at += timedelta(milliseconds=1)
        return name

    def _report(
        self, ref: ChatRef, mirrored: Mirrored, new_chat: bool, alignment: Alignment
    ) -> None:
        changes = mirrored.describe()
        if not new_chat and not (mirrored.edited or mirrored.deleted or mirrored.swiped):
            return
        what = "new chat from the frontend" if new_chat else "the frontend changed the chat"
        self._activity.record(
            "endpoint.chat",
            f"{what}: {'; '.join(changes) or 'nothing recorded yet'}",
            character=ref.character.name,
            chat=ref.id,
            data={"shared_turns": alignment.shared, "removed": alignment.removed},
        )
