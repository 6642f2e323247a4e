"""Following a frontend's conversation into a recorded chat, by content.

A frontend resends the whole conversation with every request and keeps no id
that survives an edit, so requests are matched to recorded chats by the text of
their messages. The recorded chat's visible user and character messages are
aligned with the request's turns (a diff over normalised texts, as extraction
aligns its fingerprints); the alignment then says what happened in the
frontend since the last request:

- the request goes on where the chat ends: the new turns are appended;
- it stops one reply short (a regeneration or a swipe): that reply is kept, and
  the new reply becomes another swipe of it;
- a message reads differently (an edit): its text follows, keeping its swipes,
  dates and `extra`; a message that is gone (a deletion) is removed;
- an assistant message shows another of its swipes: that swipe is chosen.

Hidden and narrator messages are never sent by a frontend, so they are kept
where they are. A request continues a chat when it shares at least one turn
besides the greeting with it and keeps at least as many of its messages as it
would remove; otherwise it is a new conversation and starts a new chat.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from difflib import SequenceMatcher
from typing import Literal

from charmemory.core.chat import editing
from charmemory.core.chat.messages import Generated, character_reply, iso_time, user_message
from charmemory.core.memory_endpoint.request import RequestKind, Turn
from charmemory.formats.chat import Chat, Message

Key = tuple[bool, str]
Opcode = tuple[str, int, int, int, int]


def turn_key(is_user: bool, text: str) -> Key:
    """What two messages must share to be the same message: speaker side and words."""
    return (is_user, " ".join(text.split()))


def sent_by_frontends(message: Message) -> bool:
    """A visible user or character message: what a frontend puts in its requests."""
    return not message.is_hidden and message.role in ("user", "character")


@dataclass(frozen=True)
class Alignment:
    """How a request's turns line up with a recorded chat's visible messages."""

    visible: tuple[int, ...]  # chat indexes of the aligned messages
    opcodes: tuple[Opcode, ...]
    swipes: dict[int, tuple[int, int]] = field(default_factory=dict)  # turn -> (visible, swipe)
    swipe_target: int | None = None  # visible position of the reply a regeneration swipes
    shared: int = 0  # turns found unchanged, a greeting aside
    removed: int = 0  # recorded messages the request edits away or deletes

    @property
    def continues_chat(self) -> bool:
        return self.shared >= 1 and self.shared >= self.removed

    @property
    def untouched(self) -> bool:
        """Nothing recorded changes: the request only adds turns (or regenerates)."""
        return self.removed == 0 and not self.swipes


def align(chat: Chat, turns: Sequence[Turn]) -> Alignment:
    messages = chat.messages
    visible = tuple(i for i, message in enumerate(messages) if sent_by_frontends(message))
    old = [turn_key(messages[i].is_user, messages[i].active_text) for i in visible]
    shown = set(old)
    other_swipes: dict[Key, tuple[int, int]] = {}
    for position, index in enumerate(visible):
        message = messages[index]
        if message.is_user:
            continue
        for number, text in enumerate(message.swipes or ()):
            key = turn_key(False, text) if isinstance(text, str) else None
            if key is not None and number != message.swipe_id and key not in shown:
                other_swipes.setdefault(key, (position, number))
    new: list[Key] = []
    swipes: dict[int, tuple[int, int]] = {}
    for number, turn in enumerate(turns):
        key = turn_key(turn.is_user, turn.text)
        if key not in shown and key in other_swipes:
            swipes[number] = other_swipes[key]
            key = old[other_swipes[key][0]]
        new.append(key)
    opcodes = tuple(SequenceMatcher(None, old, new, autojunk=False).get_opcodes())
    target = _swipe_target(opcodes, old, turns)
    shared = sum(
        1
        for tag, _, _, j1, j2 in opcodes
        if tag == "equal"
        for j in range(j1, j2)
        if not (j == 0 and not turns[0].is_user)
    )
    removed = sum(i2 - i1 for tag, i1, i2, _, _ in opcodes if tag != "equal" and tag != "insert")
    # A swipe shown is a change only when the alignment really pairs those two.
    paired = {
        j1 + k: i1 + k for tag, i1, i2, j1, _ in opcodes if tag == "equal" for k in range(i2 - i1)
    }
    swipes = {j: found for j, found in swipes.items() if paired.get(j) == found[0]}
    return Alignment(
        visible,
        opcodes,
        swipes,
        target,
        shared,
        removed - (1 if target is not None else 0),
    )


def _swipe_target(
    opcodes: Sequence[Opcode], old: Sequence[Key], turns: Sequence[Turn]
) -> int | None:
    """The recorded reply a request regenerates: the one right after its last turn, unchanged."""
    if len(opcodes) < 2 or not turns or not turns[-1].is_user:
        return None
    (before, *_), (tag, i1, _, j1, _) = opcodes[-2], opcodes[-1]
    if tag == "delete" and before == "equal" and j1 == len(turns) and not old[i1][0]:
        return i1
    return None


def choose_chat(
    candidates: Sequence[tuple[str, Chat]], turns: Sequence[Turn]
) -> tuple[str, Alignment] | None:
    """The recorded chat the request continues (the most turns shared, then the first given)."""
    best: tuple[str, Alignment] | None = None
    for chat_id, chat in candidates:
        alignment = align(chat, turns)
        if not alignment.continues_chat:
            continue
        if best is None or (alignment.shared, -alignment.removed) > (
            best[1].shared,
            -best[1].removed,
        ):
            best = (chat_id, alignment)
    return best


ReplyKind = Literal["new", "swipe", "continue"]


@dataclass(frozen=True)
class ReplyPlace:
    """Where the reply goes: a new message, another swipe of one, or onto one's end."""

    kind: ReplyKind
    index: int | None = None  # the message a swipe or continuation changes


@dataclass(frozen=True)
class Mirrored:
    """What following the request changed in the chat."""

    added: tuple[int, ...]
    edited: tuple[int, ...]
    deleted: int
    swiped: tuple[int, ...]
    reply: ReplyPlace

    @property
    def changed(self) -> bool:
        return bool(self.added or self.edited or self.deleted or self.swiped)

    def describe(self) -> list[str]:
        said = []
        if self.added:
            said.append(f"{len(self.added)} message(s) added")
        if self.edited:
            said.append("edited message(s) " + ", ".join(map(str, self.edited)))
        if self.deleted:
            said.append(f"{self.deleted} message(s) deleted")
        if self.swiped:
            said.append("another swipe shown on message(s) " + ", ".join(map(str, self.swiped)))
        return said


@dataclass(frozen=True)
class Speakers:
    """Names new messages are written under, and when."""

    user: str
    character: str
    at: datetime


def mirror(
    chat: Chat, turns: Sequence[Turn], alignment: Alignment, speakers: Speakers, kind: RequestKind
) -> Mirrored:
    """Make the chat's visible messages the request's turns; say where the reply goes."""
    messages = chat.messages
    out: list[Message] = []
    added: list[int] = []
    edited: list[int] = []
    swiped: list[int] = []
    deleted = 0
    target_at: int | None = None
    done = 0  # chat messages before this index are placed (or dropped)

    def keep_hidden_before(index: int) -> None:
        nonlocal done
        out.extend(messages[done:index])
        done = index + 1

    for tag, i1, i2, j1, j2 in alignment.opcodes:
        if tag == "equal":
            for offset in range(i2 - i1):
                message = messages[alignment.visible[i1 + offset]]
                keep_hidden_before(alignment.visible[i1 + offset])
                chosen = alignment.swipes.get(j1 + offset)
                if chosen is not None:
                    editing.choose_swipe(message, chosen[1])
                    swiped.append(len(out))
                out.append(message)
            continue
        paired = min(i2 - i1, j2 - j1)
        for offset in range(i2 - i1):
            position = i1 + offset
            message = messages[alignment.visible[position]]
            keep_hidden_before(alignment.visible[position])
            if offset < paired and message.is_user == turns[j1 + offset].is_user:
                editing.set_text(message, turns[j1 + offset].text)
                edited.append(len(out))
                out.append(message)
            elif offset < paired:
                deleted += 1
                added.append(len(out))
                out.append(_new_message(turns[j1 + offset], speakers))
            elif position == alignment.swipe_target:
                target_at = len(out)
                out.append(message)
            else:
                deleted += 1
        for turn in turns[j1 + paired : j2]:
            added.append(len(out))
            out.append(_new_message(turn, speakers))
    out.extend(messages[done:])
    chat.messages[:] = out
    return Mirrored(
        tuple(added), tuple(edited), deleted, tuple(swiped), _reply_place(chat, kind, target_at)
    )


def _reply_place(chat: Chat, kind: RequestKind, target_at: int | None) -> ReplyPlace:
    if target_at is not None:
        return ReplyPlace("swipe", target_at)
    last = max((i for i, m in enumerate(chat.messages) if sent_by_frontends(m)), default=None)
    if kind == "continue" and last is not None and not chat.messages[last].is_user:
        return ReplyPlace("continue", last)
    return ReplyPlace("new")


def _new_message(turn: Turn, speakers: Speakers) -> Message:
    if turn.is_user:
        return user_message(turn.name or speakers.user, turn.text, speakers.at)
    return Message.new(
        name=turn.name or speakers.character,
        mes=turn.text,
        is_user=False,
        send_date=iso_time(speakers.at),
    )


def record_reply(chat: Chat, place: ReplyPlace, generated: Generated, character: str) -> int:
    """Put the reply where `place` says; returns the index of the message that holds it."""
    if place.kind == "new" or place.index is None:
        return chat.append(character_reply(character, generated))
    message = chat.messages[place.index]
    if place.kind == "swipe":
        editing.add_swipe(message, generated)
    else:
        editing.continue_reply(message, generated)
    return place.index
