"""Who replies in a group chat, and in what order: SillyTavern's reply order strategies.

As SillyTavern drafts members (`public/scripts/group-chats.js`), over the
members that are not muted:

- **natural**: members whose name has a whole word mentioned in the text that
  prompts the reply (the user's message, else the last message) come first, in
  the order of the words; then each member, in shuffled order, speaks when a roll
  falls within its talkativeness (0 shy .. 1 chatty, 0.5 by default); if no one
  was drafted, one member is picked at random among those with talkativeness
  above 0 (any member if none). Unless self responses are allowed, the character
  who spoke last is not drafted again when no user message prompts the reply.
- **list**: every member, in list order.
- **pooled**: one member who has not spoken since the user's last message, at
  random; when everyone has, anyone but the last speaker.
- **manual**: a user message drafts no one; a generation without one drafts one
  member at random. The person picks who speaks (SillyTavern's `/trigger`).

A word is what JavaScript's `/\\b\\w+\\b/` finds (ASCII letters, digits and `_`),
lower-cased. Every draw comes from the `random.Random` given, so a seed fixes
the order.
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

Strategy = Literal["natural", "list", "manual", "pooled"]
STRATEGIES: tuple[Strategy, ...] = ("natural", "list", "manual", "pooled")
# SillyTavern's `group_activation_strategy` numbers.
_CODES: dict[Strategy, int] = {"natural": 0, "list": 1, "manual": 2, "pooled": 3}
DEFAULT_TALKATIVENESS = 0.5  # SillyTavern's `talkativeness_default`
_WORD = re.compile(r"\b\w+\b", re.ASCII)


def strategy_code(strategy: Strategy) -> int:
    return _CODES[strategy]


def strategy_named(code: int) -> Strategy:
    """The strategy a group file's number stands for; an unknown number reads as natural."""
    return next((name for name, number in _CODES.items() if number == code), "natural")


@dataclass(frozen=True)
class Member:
    """A group member as the reply order sees it."""

    id: str  # SillyTavern's member id: the card file name
    name: str
    talkativeness: float = DEFAULT_TALKATIVENESS


@dataclass(frozen=True)
class Spoken:
    """A chat message as the reply order sees it."""

    name: str
    is_user: bool = False
    is_hidden: bool = False  # `is_system`: left out of the prompt
    is_narrator: bool = False
    member: str | None = None  # `original_avatar`: the member who wrote it
    text: str = ""


def reply_order(
    strategy: Strategy,
    members: Sequence[Member],
    chat: Sequence[Spoken],
    *,
    user_input: str = "",
    allow_self_responses: bool = False,
    rng: random.Random,
) -> list[str]:
    """The ids of the members who reply, in order, drawn from the members not muted.

    ``chat`` is the chat before the user's message; ``user_input`` is that message
    ("" when a reply is asked for without one).
    """
    if not members:
        return []
    last = chat[-1] if chat else None
    if strategy == "list":
        return _unique([member.id for member in members])
    if strategy == "pooled":
        return [_pooled(members, chat, last, bool(user_input), rng)]
    if strategy == "manual":
        return [] if user_input else [_shuffled(members, rng)[0].id]
    prompt = user_input or (last.text if last is not None and not last.is_hidden else "")
    return _natural(members, prompt, last, allow_self_responses, bool(user_input), rng)


def speaker_to_redo(
    members: Sequence[Member], chat: Sequence[Spoken], rng: random.Random
) -> str | None:
    """Who swipes or continues: the member who wrote the last reply.

    When the chat ends with the user (or a hidden or narrator line), the writer of
    the last reply before it; a reply from before members were recorded is matched
    by name; with no reply at all, a member at random. None when the writer has
    left the group.
    """
    ids = {member.id for member in members}
    for message in reversed(chat):
        if message.is_user or message.is_hidden or message.is_narrator:
            continue
        if message.member is not None:
            return message.member if message.member in ids else None
        named = next((m.id for m in members if m.name == message.name), None)
        return named
    return _shuffled(members, rng)[0].id if members else None


def talkativeness(value: Any) -> float:
    """A card's talkativeness as SillyTavern reads it (JavaScript's `Number`, NaN: default)."""
    if value is None or isinstance(value, list | dict):
        return DEFAULT_TALKATIVENESS
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, int | float):
        number = float(value)
    else:
        text = str(value).strip()
        if not text:
            return 0.0  # Number("") is 0
        try:
            number = float(text)
        except ValueError:
            return DEFAULT_TALKATIVENESS
    return DEFAULT_TALKATIVENESS if math.isnan(number) else number


def words(text: str) -> list[str]:
    """The words a mention is matched by, as SillyTavern's `extractAllWords` finds them."""
    return [match.group().lower() for match in _WORD.finditer(text)]


def _natural(
    members: Sequence[Member],
    prompt: str,
    last: Spoken | None,
    allow_self_responses: bool,
    user_input: bool,
    rng: random.Random,
) -> list[str]:
    banned = None
    if not allow_self_responses and not user_input and last is not None and not last.is_user:
        banned = last.name
    drafted: list[str] = []
    names = {member.id: set(words(member.name)) for member in members}
    for word in words(prompt):
        for member in members:
            if member.name != banned and word in names[member.id]:
                drafted.append(member.id)
                break
    chatty: list[str] = []
    for member in _shuffled(members, rng):
        if member.name == banned:
            continue
        if member.talkativeness >= rng.random():
            drafted.append(member.id)
        if member.talkativeness > 0:
            chatty.append(member.id)
    if not drafted:
        pool = chatty or [member.id for member in members]
        drafted.append(pool[math.floor(rng.random() * len(pool))])
    return _unique(drafted)


def _pooled(
    members: Sequence[Member],
    chat: Sequence[Spoken],
    last: Spoken | None,
    user_input: bool,
    rng: random.Random,
) -> str:
    spoken: set[str] = set()
    if not user_input:
        for message in reversed(chat):
            if message.is_user:
                break
            if message.is_hidden or message.is_narrator:
                continue
            if message.member is not None:
                spoken.add(message.member)
    waiting = [member.id for member in members if member.id not in spoken]
    if waiting:
        return waiting[math.floor(rng.random() * len(waiting))]
    pool = [member.id for member in members]
    if len(members) > 1 and last is not None and not last.is_user and last.member:
        pool = [member for member in pool if member != last.member]
    return pool[math.floor(rng.random() * len(pool))]


def _shuffled(members: Sequence[Member], rng: random.Random) -> list[Member]:
    """SillyTavern's `shuffle`: Fisher-Yates from the end."""
    shuffled = list(members)
    current = len(shuffled)
    while current:
        chosen = math.floor(rng.random() * current)
        current -= 1
        shuffled[current], shuffled[chosen] = shuffled[chosen], shuffled[current]
    return shuffled


def _unique(ids: list[str]) -> list[str]:
    return list(dict.fromkeys(ids))
