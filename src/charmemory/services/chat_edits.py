"""Changing a chat by hand: choosing a swipe, editing, deleting, hiding, branching.

Each change reads the chat under its lock, applies a pure edit (`core/chat/editing`)
and writes it back; in a narrator chat the active cast follows the change.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from charmemory.core.chat import editing
from charmemory.errors import CharMemoryError
from charmemory.formats.chat import Chat
from charmemory.ports import CharacterLibrary, ChatRef
from charmemory.services.narrator import NarratorService

# Work that follows a new branch (copying memory books): given the parent and the branch's id.
AfterBranch = Callable[[ChatRef, str], object]


class ChatEditor:
    def __init__(
        self,
        library: CharacterLibrary,
        *,
        chat_ref: Callable[[str, str | None], ChatRef],
        chat_lock: Callable[[ChatRef], asyncio.Lock],
        narrator: NarratorService | None = None,
        after_branch: AfterBranch | None = None,
    ):
        self._library = library
        self._chat_ref = chat_ref
        self._chat_lock = chat_lock
        self._narrator = narrator
        self._after_branch = after_branch

    async def choose_swipe(
        self, character_name: str, number: int, chat_id: str | None = None
    ) -> str:
        """Show swipe ``number`` (1-based) of the last reply; returns its text (in a narrator
        chat the active cast becomes the swipe's)."""

        def choose(ref: ChatRef, chat: Chat) -> str:
            text = _chosen(chat, number - 1)
            if self._narrator is not None:
                self._narrator.follow_swipe(ref, chat, chat.messages[-1])
            return text

        return await self._edit_chat(character_name, chat_id, choose)

    async def edit(
        self, character_name: str, index: int, text: str, chat_id: str | None = None
    ) -> str:
        def edit(chat: Chat) -> str:
            editing.edit_message(chat, index, text)
            return text

        return await self._edit(character_name, chat_id, edit)

    async def delete_last(self, character_name: str, count: int, chat_id: str | None = None) -> int:
        """Delete the last ``count`` messages (in a narrator chat the active cast becomes
        the last stamped reply's)."""

        def delete(ref: ChatRef, chat: Chat) -> int:
            removed = len(editing.delete_last(chat, count))
            if self._narrator is not None:
                self._narrator.follow_deletion(ref, chat)
            return removed

        return await self._edit_chat(character_name, chat_id, delete)

    async def delete_message(
        self, character_name: str, index: int, chat_id: str | None = None
    ) -> int:
        """Delete one message; deleting an older one changes no later stamp."""

        def delete(ref: ChatRef, chat: Chat) -> int:
            last = index == len(chat.messages) - 1
            editing.delete_message(chat, index)
            if last and self._narrator is not None:
                self._narrator.follow_deletion(ref, chat)
            return 1

        return await self._edit_chat(character_name, chat_id, delete)

    async def set_hidden(
        self, character_name: str, first: int, last: int, hidden: bool, chat_id: str | None = None
    ) -> list[int]:
        return await self._edit(
            character_name, chat_id, lambda chat: editing.set_hidden(chat, first, last, hidden)
        )

    async def branch(
        self, character_name: str, at: int | None = None, chat_id: str | None = None
    ) -> str:
        """A new chat holding messages 0..``at`` (default: all); returns its id."""
        ref = self._chat_ref(character_name, chat_id)
        if ref.group is not None:
            raise CharMemoryError("branching a group chat is not supported yet")
        async with self._chat_lock(ref):
            loaded = self._library.load_chat(ref)
            last = len(loaded.chat.messages) - 1 if at is None else at
            existing = {ref.id for ref in self._library.chats(loaded.ref.character)}
            name, copy = editing.branch(loaded.chat, last, loaded.ref.id, existing)
            self._library.create_chat(loaded.ref.character, name, copy)
            self._library.save_chat(loaded, loaded.chat)
        if self._after_branch is not None:
            self._after_branch(ref, name)
        return name

    async def _edit(
        self, character_name: str, chat_id: str | None, change: Callable[[Chat], Any]
    ) -> Any:
        return await self._edit_chat(character_name, chat_id, lambda _, chat: change(chat))

    async def _edit_chat(
        self, character_name: str, chat_id: str | None, change: Callable[[ChatRef, Chat], Any]
    ) -> Any:
        ref = self._chat_ref(character_name, chat_id)
        async with self._chat_lock(ref):
            loaded = self._library.load_chat(ref)
            result = change(ref, loaded.chat)
            self._library.save_chat(loaded, loaded.chat)
            return result


def _chosen(chat: Chat, number: int) -> str:
    _, message = editing.last_reply(chat)
    editing.choose_swipe(message, number)
    return message.mes
