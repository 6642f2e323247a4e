"""A frontend as SillyTavern behaves: it keeps the conversation and resends all of it."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime

from charmemory.core.chat.messages import Generated
from charmemory.core.memory_endpoint.recording import (
    Speakers,
    align,
    mirror,
    record_reply,
    sent_by_frontends,
)
from charmemory.core.memory_endpoint.request import RequestKind, Turn
from charmemory.formats.chat import Chat, ChatHeader
from tests.support.sillytavern_client import Shown

AT = datetime(2026, 3, 1, 12, tzinfo=UTC)
SPEAKERS = Speakers("Alex", "Mira", AT)


@dataclass
class Frontend:
    """The conversation a frontend shows; `turns()` is what it sends."""

    messages: list[Shown] = field(default_factory=list)

    def turns(self) -> list[Turn]:
        return [Turn(m.is_user, m.text) for m in self.messages]

    def texts(self) -> list[tuple[bool, str]]:
        return [(m.is_user, m.text) for m in self.messages]


def empty_chat() -> Chat:
    return Chat(ChatHeader({"chat_metadata": {}, "user_name": "unused"}), [])


def visible(chat: Chat) -> list[tuple[bool, str]]:
    return [(m.is_user, m.active_text) for m in chat.messages if sent_by_frontends(m)]


def exchange(chat: Chat, turns: list[Turn], reply: str | None, kind: RequestKind = "reply") -> int:
    """One request recorded, then its reply; returns the reply's message index."""
    mirrored = mirror(chat, turns, align(chat, turns), SPEAKERS, kind)
    if reply is None:
        return -1
    return record_reply(chat, mirrored.reply, Generated(reply, AT, AT), "Mira")
