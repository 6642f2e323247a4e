"""Small lorebooks and scans for World Info tests, built from SillyTavern's entry template."""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from typing import Any

from charmemory.core.world_info import (
    DEFAULT_WORLD_INFO_SETTINGS,
    Candidates,
    LoreSources,
    NamedBook,
    ScanContext,
    ScanMessage,
    WorldInfoResult,
    WorldInfoSettings,
    activate_world_info,
    gather_candidates,
)
from charmemory.formats.lorebook import Lorebook, LorebookEntry, new_entry


def entry(
    uid: int, keys: Iterable[str] = (), content: str | None = None, **fields: Any
) -> LorebookEntry:
    """An entry with SillyTavern's defaults; `fields` use SillyTavern's names."""
    return new_entry(f"entry {uid}" if content is None else content, keys, uid=uid, **fields)


def book(*entries: LorebookEntry) -> Lorebook:
    lore = Lorebook()
    for item in entries:
        lore.put(item)
    return lore


def messages(*texts: str, name: str = "Wren") -> tuple[ScanMessage, ...]:
    """Chat messages, oldest first, all from `name` unless a text is given as (name, text)."""
    found = []
    for index, text in enumerate(texts):
        speaker, said = text if isinstance(text, tuple) else (name, text)
        found.append(ScanMessage(index, speaker, said))
    return tuple(found)


def candidates_of(
    *entries: LorebookEntry,
    settings: WorldInfoSettings = DEFAULT_WORLD_INFO_SETTINGS,
    name: str = "Lore",
) -> Candidates:
    return gather_candidates(LoreSources(character=(NamedBook(name, book(*entries)),)), settings)


def scan(
    entries: Sequence[LorebookEntry],
    chat: Sequence[str] | tuple[ScanMessage, ...] = (),
    *,
    seed: int = 1,
    max_context: int = 10_000,
    context: ScanContext | None = None,
    **options: Any,
) -> WorldInfoResult:
    """Run the engine on one book called "Lore"; options are settings or engine arguments."""
    setting_names = set(WorldInfoSettings.__dataclass_fields__)
    settings = WorldInfoSettings(**{k: v for k, v in options.items() if k in setting_names})
    extra = {k: v for k, v in options.items() if k not in setting_names}
    chat_messages = chat if chat and isinstance(chat[0], ScanMessage) else messages(*chat)
    context = context or ScanContext(messages=tuple(chat_messages))
    return activate_world_info(
        candidates_of(*entries, settings=settings),
        context,
        max_context=max_context,
        rng=random.Random(seed),
        settings=settings,
        **extra,
    )


def activated(result: WorldInfoResult) -> list[int]:
    """The uids activated, in activation order."""
    return [item.entry.uid for item in result.activated]


def reason_of(result: WorldInfoResult, uid: int, book_name: str = "Lore") -> tuple[str, str]:
    for explanation in result.explanations():
        if (explanation.book, explanation.uid) == (book_name, uid):
            return explanation.reason.value, explanation.text
    raise KeyError(uid)
