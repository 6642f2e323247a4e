"""Which cast a message was written for: the stamp STMB puts on narrator chat messages.

`extra.STMemoryBooks.narratorCast = {"version": 1, "memberIds": [...]}`, on the
message and on its shown swipe's `swipe_info[i].extra`, so each swipe keeps its
own. The user's message gets the active cast when it is sent; a reply gets the
snapshot taken when its generation started (`CastSnapshot`), and a continuation
adds its snapshot to the reply's stamp (an ordered union). A message without a
stamp was written outside narrator mode, or before it.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from charmemory.core.narrator.cast import VERSION, CastMember, NarratorConfig
from charmemory.formats.chat import Chat, Message

STMB = "STMemoryBooks"
CAST = "narratorCast"
CAST_SOURCE = "narrator cast"  # how a generation's lorebooks name the snapshot's books


@dataclass(frozen=True)
class CastSnapshot:
    """The active cast when a generation started; it governs that generation."""

    member_ids: tuple[str, ...]
    books: tuple[str, ...]  # the members' memory books that join its World Info


def snapshot(config: NarratorConfig, omniscient: str | None) -> CastSnapshot:
    """The active cast now. Only a book of its own joins: never the omniscient book, nor
    one two members share (`charmemory doctor` names those)."""
    members = config.active_members
    return CastSnapshot(
        tuple(member.id for member in members),
        tuple(member.book for member in members if _own_book(member, config, omniscient)),
    )


def stamp_of(message: Message) -> tuple[str, ...] | None:
    """The member ids a message is stamped with (None: it has no stamp)."""
    stmb = message.extra.get(STMB)
    found = stmb.get(CAST) if isinstance(stmb, Mapping) else None
    if not isinstance(found, Mapping):
        return None
    ids = found.get("memberIds")
    return _unique(ids if isinstance(ids, list) else [])


def stamp(message: Message, member_ids: Sequence[str], *, merge: bool = False) -> None:
    """Stamp ``message`` (and its shown swipe) with ``member_ids``; with ``merge``, after
    the ids it already has."""
    earlier = (stamp_of(message) or ()) if merge else ()
    value = {"version": VERSION, "memberIds": list(_unique([*earlier, *member_ids]))}
    found = message.extra.get(STMB)
    own = dict(found) if isinstance(found, Mapping) else {}
    own[CAST] = value
    message.set_extra(STMB, own)
    infos, shown = message.data.get("swipe_info"), message.swipe_id
    if isinstance(infos, list) and shown is not None and 0 <= shown < len(infos):
        info = infos[shown]
        if isinstance(info, dict):
            extra = info.get("extra")
            if not isinstance(extra, dict):
                extra = info["extra"] = {}
            swipe_stmb = extra.get(STMB)
            if not isinstance(swipe_stmb, dict):
                swipe_stmb = extra[STMB] = {}
            swipe_stmb[CAST] = copy.deepcopy(value)


def unstamp(message: Message) -> None:
    """Take the stamp off ``message`` and its shown swipe (a swipe written outside narrator
    mode must not keep the stamp of the swipe it replaced)."""
    found = message.extra.get(STMB)
    if isinstance(found, Mapping) and CAST in found:
        message.set_extra(STMB, {k: v for k, v in found.items() if k != CAST})
    infos, shown = message.data.get("swipe_info"), message.swipe_id
    if isinstance(infos, list) and shown is not None and 0 <= shown < len(infos):
        extra = infos[shown].get("extra") if isinstance(infos[shown], dict) else None
        swipe_stmb = extra.get(STMB) if isinstance(extra, dict) else None
        if isinstance(swipe_stmb, dict):
            swipe_stmb.pop(CAST, None)


def is_narrator_reply(message: Message) -> bool:
    """A message the narrator card wrote (not the user's, not hidden)."""
    return not message.is_user and not message.is_hidden


def last_stamped(chat: Chat) -> tuple[str, ...] | None:
    """The stamp of the chat's last narrator reply that has one."""
    for message in reversed(chat.messages):
        if is_narrator_reply(message):
            found = stamp_of(message)
            if found is not None:
                return found
    return None


def _own_book(member: CastMember, config: NarratorConfig, omniscient: str | None) -> bool:
    return member.book != omniscient and not any(
        other.book == member.book for other in config.members if other.id != member.id
    )


def _unique(values: Iterable[Any]) -> tuple[str, ...]:
    kept = (v for v in values if isinstance(v, str | int) and not isinstance(v, bool))
    return tuple(dict.fromkeys(text for v in kept if (text := str(v).strip())))
