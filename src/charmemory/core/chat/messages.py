"""New chat messages in the shape SillyTavern writes them, so SillyTavern opens them as its own.

A user message is `name, is_user, is_system, send_date, mes, extra`. A character
reply adds `gen_started`/`gen_finished`, `extra.api`/`extra.model` (and the
reasoning, kept apart from the text), `title`, and its swipes: `swipe_id`,
`swipes` and `swipe_info`, one `{send_date, gen_started, gen_finished, extra}`
per swipe, where `extra` is a copy of the message's own as it was for that swipe
(SillyTavern's `saveReply`). In a group chat a member's reply also carries
`force_avatar` and `original_avatar` (its card file name) and `extra.gen_id`.
Dates are ISO-8601 in UTC with milliseconds, as SillyTavern 1.15+ writes them.
"""

from __future__ import annotations

import copy
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote

from charmemory.formats.chat import ChatHeader, Message

_URI_COMPONENT_SAFE = "-_.!~*'()"  # what encodeURIComponent leaves as it is


def iso_time(at: datetime) -> str:
    """`2026-11-28T19:02:11.482Z`, as JavaScript's `toISOString` writes it."""
    return at.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass(frozen=True)
class Generated:
    """One generated text with what SillyTavern keeps about it."""

    text: str
    started: datetime
    finished: datetime
    api: str = ""
    model: str = ""
    reasoning: str = ""
    extra: dict[str, Any] = field(default_factory=dict)  # stamps other parts add

    @property
    def reasoning_duration(self) -> int | None:
        if not self.reasoning:
            return None
        return round((self.finished - self.started).total_seconds() * 1000)


def new_chat_header() -> ChatHeader:
    """The first line of a new chat, as SillyTavern 1.15+ writes it (solo or group)."""
    return ChatHeader(
        {
            "chat_metadata": {"integrity": str(uuid.uuid4())},
            "user_name": "unused",
            "character_name": "unused",
        }
    )


def user_message(name: str, text: str, at: datetime) -> Message:
    message = Message.new(name=name, mes=text, is_user=True, send_date=iso_time(at))
    message.set_extra("isSmallSys", False)
    return message


def character_reply(name: str, generated: Generated) -> Message:
    """A reply with one swipe, the generated text."""
    message = Message(
        {
            "name": name,
            "is_user": False,
            "is_system": False,
            "send_date": iso_time(generated.started),
            "mes": generated.text,
            "gen_started": iso_time(generated.started),
            "gen_finished": iso_time(generated.finished),
            "extra": {
                "api": generated.api,
                "model": generated.model,
                "reasoning": generated.reasoning,
                "reasoning_duration": generated.reasoning_duration,
                **generated.extra,
            },
            "title": "",
            "swipe_id": 0,
            "swipes": [generated.text],
            "swipe_info": [],
        }
    )
    keep_shown_swipe(message)
    return message


def greeting(name: str, first_mes: str, alternates: Sequence[str], at: datetime) -> Message:
    """The card's first message, its alternate greetings as further swipes (none: no swipes)."""
    message = Message.new(name=name, mes=first_mes, is_user=False, send_date=iso_time(at))
    if alternates:
        swipes = [first_mes, *alternates] if first_mes else list(alternates)
        message.data["mes"] = swipes[0]
        message.data["swipe_id"] = 0
        message.data["swipes"] = swipes
        message.data["swipe_info"] = []
    return message


def in_group(message: Message, avatar: str) -> None:
    """Mark a reply as a group member's: SillyTavern keys it by the card file name."""
    message.data["force_avatar"] = avatar_thumbnail(avatar)
    message.data["original_avatar"] = avatar


def group_greeting(name: str, text: str, avatar: str, at: datetime, gen_id: float) -> Message:
    """A member's first message in a new group chat, in the shape SillyTavern writes it."""
    return Message(
        {
            "is_user": False,
            "is_system": False,
            "name": name,
            "send_date": iso_time(at),
            "original_avatar": avatar,
            "extra": {"gen_id": gen_id},
            "mes": text,
            "force_avatar": avatar_thumbnail(avatar),
        }
    )


def avatar_thumbnail(avatar: str) -> str:
    """SillyTavern's `getThumbnailUrl('avatar', file)`, with `encodeURIComponent`'s escaping."""
    return f"/thumbnail?type=avatar&file={quote(avatar, safe=_URI_COMPONENT_SAFE)}"


def keep_shown_swipe(message: Message) -> None:
    """Keep the shown text, dates and `extra` as its swipe's, as SillyTavern does after replies."""
    swipe = message.swipe_id or 0
    swipes = list(message.swipes or [])
    info = list(message.swipe_info or [])
    while len(swipes) <= swipe:
        swipes.append(message.mes)
    while len(info) <= swipe:
        info.append({})
    swipes[swipe] = message.mes
    info[swipe] = {
        "send_date": message.data.get("send_date"),
        "gen_started": message.data.get("gen_started"),
        "gen_finished": message.data.get("gen_finished"),
        "extra": copy.deepcopy(dict(message.extra)),
    }
    message.data["swipe_id"] = swipe
    message.data["swipes"] = swipes
    message.data["swipe_info"] = info
