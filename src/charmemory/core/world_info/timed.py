"""Timed effects (sticky, cooldown, delay), counted in messages, kept as SillyTavern keeps them.

The state lives in `chat_metadata.timedWorldInfo` as
`{"sticky": {"<book>.<uid>": {"hash", "start", "end", "protected"}}, "cooldown": {...}}`,
where `start` and `end` count the chat's messages (hidden ones left out) and
`hash` identifies the entry version (`entries.entry_hash`). Each generation:

- an effect whose chat did not advance past its start (a swipe, a deletion) is
  dropped unless protected;
- an effect of an entry that is gone or was edited is dropped once its time
  is over, and meanwhile does nothing;
- an effect of an entry no longer configured for it is dropped;
- an effect whose time is over is dropped; a sticky effect ending starts the
  entry's cooldown at once (protected, so a swipe keeps it);
- the others are active: a sticky entry activates without its keys and
  without a probability roll, an entry on cooldown cannot activate unless sticky.

`delay` is no state: an entry with delay N waits until the chat holds N messages.
After the scan, every activated entry with a sticky or cooldown not already
running starts it.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from charmemory.core.world_info.candidates import Candidates
from charmemory.core.world_info.entries import LoreEntry

TIMED_KEY = "timedWorldInfo"
EffectType = Literal["sticky", "cooldown"]
_TYPES: tuple[EffectType, ...] = ("sticky", "cooldown")


@dataclass(frozen=True)
class TimedCheck:
    """The timed effects in force for one generation (by candidate position)."""

    sticky: frozenset[int] = frozenset()
    cooldown: frozenset[int] = frozenset()
    delayed: frozenset[int] = frozenset()
    ends: dict[tuple[EffectType, int], int] = field(default_factory=dict)  # effect end message
    state: dict[str, Any] = field(default_factory=dict)


def effect_key(entry: LoreEntry) -> str:
    return f"{entry.book}.{entry.uid}"


def check_timed_effects(
    state: Mapping[str, Any] | None,
    candidates: Candidates,
    chat_length: int,
    hash_of: Callable[[LoreEntry], int],
) -> TimedCheck:
    """The active effects and the state cleaned of ended ones, before the scan."""
    cleaned = _normalised(state)
    active: dict[EffectType, set[int]] = {"sticky": set(), "cooldown": set()}
    ends: dict[tuple[EffectType, int], int] = {}
    for kind in _TYPES:
        effects = cleaned[kind]
        for key, effect in list(effects.items()):
            start, end = _whole(effect.get("start")), _whole(effect.get("end"))
            if chat_length <= start and not effect.get("protected"):
                del effects[key]
                continue
            position = _position(key, effect, candidates, hash_of)
            if position is None:
                if chat_length >= end:
                    del effects[key]
                continue
            entry = candidates.entries[position].entry
            if not getattr(entry, kind):
                del effects[key]
                continue
            if chat_length >= end:
                del effects[key]
                if kind == "sticky" and entry.cooldown:
                    cleaned["cooldown"][key] = _effect(
                        entry, "cooldown", chat_length, hash_of, True
                    )
                continue
            active[kind].add(position)
            ends[(kind, position)] = end
    delayed = frozenset(
        position
        for position in candidates.conditional
        if chat_length < candidates.entries[position].entry.delay
    )
    return TimedCheck(
        frozenset(active["sticky"]), frozenset(active["cooldown"]), delayed, ends, cleaned
    )


def record_timed_effects(
    check: TimedCheck,
    activated: Iterable[LoreEntry],
    chat_length: int,
    hash_of: Callable[[LoreEntry], int],
) -> dict[str, Any]:
    """The state to store after the scan: effects of newly activated entries started."""
    state = copy.deepcopy(check.state)
    for entry in activated:
        for kind in _TYPES:
            key = effect_key(entry)
            if getattr(entry, kind) and key not in state[kind]:
                state[kind][key] = _effect(entry, kind, chat_length, hash_of, False)
    return state


def _normalised(state: Mapping[str, Any] | None) -> dict[str, Any]:
    cleaned = copy.deepcopy(dict(state)) if isinstance(state, Mapping) else {}
    for kind in _TYPES:
        effects = cleaned.get(kind)
        if not isinstance(effects, dict):
            effects = {}
        cleaned[kind] = {key: value for key, value in effects.items() if isinstance(value, dict)}
    return cleaned


def _position(
    key: str, effect: Mapping[str, Any], candidates: Candidates, hash_of: Callable[[LoreEntry], int]
) -> int | None:
    book, _, uid = key.rpartition(".")
    if not uid.isdigit():
        return None
    position = candidates.positions.get((book, int(uid)))
    if position is None or str(hash_of(candidates.entries[position].entry)) != str(
        effect.get("hash")
    ):
        return None
    return position


def _effect(
    entry: LoreEntry,
    kind: EffectType,
    chat_length: int,
    hash_of: Callable[[LoreEntry], int],
    protected: bool,
) -> dict[str, Any]:
    duration = getattr(entry, kind)
    return {
        "hash": hash_of(entry),
        "start": chat_length,
        "end": chat_length + duration,
        "protected": protected,
    }


def _whole(value: Any) -> int:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return int(value)
    if isinstance(value, str):
        try:
            return int(float(value))
        except ValueError:
            return 0
    return 0
