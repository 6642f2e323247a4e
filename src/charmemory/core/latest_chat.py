"""Which of a character's chats is "the latest", as SillyTavern means it.

SillyTavern opens the chat named by the card's `chat` field, the one last opened.
Without it (or when that chat is not here), the latest chat is the one whose last
message was sent last. A chat whose last message carries no readable date is
placed by the stamp in its file name (when it was started), then by its file's
modification time; file times alone mislead, since copying a workspace resets them.

Dates without a zone (older `send_date` forms and file-name stamps are the
browser's wall clock) are read in `local_zone`, which the caller chooses (UTC
unless told); zoned ones (ISO, epoch numbers, file times) are exact.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, tzinfo
from typing import Literal

from charmemory.formats.chat_name import chat_file_id, parse_chat_file_name
from charmemory.formats.send_date import epoch_ms_to_datetime, parse_send_date

TimeSource = Literal["last message", "file name", "file time"]
LatestReason = Literal["card", "last message", "file name", "file time"]

_REASON_PHRASES: dict[LatestReason, str] = {
    "card": "the card's last opened chat",
    "last message": "newest last message",
    "file name": "newest date in its file name",
    "file time": "newest file time",
}
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


@dataclass(frozen=True)
class ChatActivity:
    """What ordering needs of one chat file, all cheap to gather.

    `chat_id` is the file name without `.jsonl`; `last_send_date` the raw
    `send_date` of its last message (see `formats.chat.last_message_send_date`),
    None when unknown; `mtime` the file's modification time in POSIX seconds.
    """

    chat_id: str
    last_send_date: object
    mtime: float


@dataclass(frozen=True)
class ChatTime:
    """When a chat was last active, as best known, and what that is based on."""

    when: datetime  # aware, UTC
    source: TimeSource


@dataclass(frozen=True)
class LatestChat:
    """The chat taken as the latest, and why."""

    chat: ChatActivity
    reason: LatestReason

    @property
    def why(self) -> str:
        """`newest last message`, `the card's last opened chat` ...: what to show the person."""
        return _REASON_PHRASES[self.reason]


def chat_time(chat: ChatActivity, *, local_zone: tzinfo = UTC) -> ChatTime:
    """When the chat was last active: its last message's date, else the stamp in its
    name, else its file time."""
    sent = parse_send_date(chat.last_send_date)
    if sent is not None:
        return ChatTime(_aware(sent, local_zone), "last message")
    started = parse_chat_file_name(chat.chat_id).when
    if started is not None:
        return ChatTime(_aware(started, local_zone), "file name")
    return ChatTime(epoch_ms_to_datetime(chat.mtime * 1000) or _EPOCH, "file time")


def chats_oldest_first(
    chats: Iterable[ChatActivity], *, local_zone: tzinfo = UTC
) -> list[ChatActivity]:
    """The chats ordered by `chat_time`, oldest first; ties by file time, then by id."""
    return sorted(chats, key=lambda chat: _order_key(chat, local_zone))


def latest_chat(
    chats: Sequence[ChatActivity], *, card_chat: str | None = None, local_zone: tzinfo = UTC
) -> LatestChat | None:
    """The chat a command uses when none is named; None when there are no chats.

    `card_chat` is the card's `chat` field (`Card.last_chat`): the chat it names
    wins when it is among `chats`, found by its name or by the file name
    SillyTavern saves it under.
    """
    if card_chat is not None:
        wanted = {card_chat, chat_file_id(card_chat)}
        named = next((chat for chat in chats if chat.chat_id in wanted), None)
        if named is not None:
            return LatestChat(named, "card")
    if not chats:
        return None
    newest = max(chats, key=lambda chat: _order_key(chat, local_zone))
    return LatestChat(newest, chat_time(newest, local_zone=local_zone).source)


def _order_key(chat: ChatActivity, local_zone: tzinfo) -> tuple[datetime, float, str]:
    return chat_time(chat, local_zone=local_zone).when, chat.mtime, chat.chat_id


def _aware(when: datetime, local_zone: tzinfo) -> datetime:
    if when.tzinfo is None:
        when = when.replace(tzinfo=local_zone)
    try:
        return when.astimezone(UTC)
    except OverflowError:  # within a day of year 1 or 9999: the zone no longer matters
        return when.replace(tzinfo=UTC)
