"""A memory entry: one scene memory as a World Info entry, in the shape STMB writes it.

A memory entry is a new SillyTavern entry (`formats.lorebook.ENTRY_TEMPLATE`,
every field at its default) given the memory's `content`, keywords (`key`) and
title (`comment`), the entry settings of the profile that wrote it, and STMB's
own fields, added in the order STMB adds them: `displayIndex`, `stmemorybooks`,
a `characterFilter` when participants are known, `STMB_start`/`STMB_end` (the
scene's message range), `STMB_chatId`, and for linked (multi-book) memories the
inclusion `group` with `STMB_canonical`, `STMB_canonicalLorebook`,
`STMB_canonicalEntryUid`, `STMB_canonicalMemoryNumber` and `STMB_inclusionGroup`.
STMB removes `outletName` unless the entry goes to an outlet; so does this.

Activation follows the profile's mode: `link` (vectorized, the default), `blue`
(constant) or `green` (keywords only). The order follows its order mode: `auto`
is the memory's number, `manual` a fixed value, `reverse` counts down from a start.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from charmemory.core.books.scenes import SceneRange
from charmemory.core.books.titles import number_in_title
from charmemory.errors import ConfigError
from charmemory.formats.lorebook import ENTRY_TEMPLATE, LorebookEntry

MODES = ("link", "blue", "green")
ORDER_MODES = ("auto", "manual", "reverse")
AT_DEPTH = 4  # SillyTavern's @depth position: not offered for memories
OUTLET = 7
POSITIONS = (0, 1, 2, 3, 5, 6, 7)
ORDER_MIN, ORDER_MAX = 0, 9999

MEMORY_FLAG = "stmemorybooks"
START, END, CHAT_ID = "STMB_start", "STMB_end", "STMB_chatId"
CANONICAL = "STMB_canonical"
CANONICAL_BOOK = "STMB_canonicalLorebook"
CANONICAL_UID = "STMB_canonicalEntryUid"
CANONICAL_NUMBER = "STMB_canonicalMemoryNumber"
INCLUSION_GROUP = "STMB_inclusionGroup"
SUMMARY, SUMMARY_TIER, SOURCE_UIDS = "stmbSummary", "stmbSummaryTier", "stmbSourceEntryUids"


@dataclass(frozen=True)
class EntrySettings:
    """How a profile's memory entries activate and where they go (STMB's lorebook settings)."""

    mode: str = "link"
    position: int = 0
    outlet_name: str = ""
    order_mode: str = "auto"
    order_value: int = 100
    reverse_start: int = 9999
    prevent_recursion: bool = True
    delay_until_recursion: bool | int = False
    ignore_budget: bool = False

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ConfigError(f"entry mode must be one of {', '.join(MODES)}, not {self.mode!r}")
        if self.position == AT_DEPTH:
            raise ConfigError("memory entries cannot go @depth (position 4); choose another")
        if self.position not in POSITIONS:
            shown = ", ".join(map(str, POSITIONS))
            raise ConfigError(f"entry position must be one of {shown}, not {self.position!r}")
        if self.order_mode not in ORDER_MODES:
            raise ConfigError(
                f"order mode must be one of {', '.join(ORDER_MODES)}, not {self.order_mode!r}"
            )
        if not ORDER_MIN <= self.order_value <= ORDER_MAX:
            raise ConfigError(f"order value must be 0-9999, not {self.order_value}")
        if not 100 <= self.reverse_start <= ORDER_MAX:
            raise ConfigError(f"reverse start must be 100-9999, not {self.reverse_start}")
        delay = self.delay_until_recursion
        if not isinstance(delay, bool) and (not isinstance(delay, int) or delay < 1):
            raise ConfigError(f"delay until recursion must be off or a level of 1 or more: {delay}")

    def to_dict(self) -> dict[str, Any]:
        """As STMB's profiles name them."""
        return {
            "constVectMode": self.mode,
            "position": self.position,
            "outletName": self.outlet_name,
            "orderMode": self.order_mode,
            "orderValue": self.order_value,
            "reverseStart": self.reverse_start,
            "preventRecursion": self.prevent_recursion,
            "delayUntilRecursion": self.delay_until_recursion,
            "ignoreBudget": self.ignore_budget,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> EntrySettings:
        base = cls()
        return cls(
            mode=str(data.get("constVectMode", base.mode)).lower(),
            position=int(data.get("position", base.position)),
            outlet_name=str(data.get("outletName") or "").strip(),
            order_mode=str(data.get("orderMode", base.order_mode)).lower(),
            order_value=int(data.get("orderValue", base.order_value)),
            reverse_start=int(data.get("reverseStart", base.reverse_start)),
            prevent_recursion=bool(data.get("preventRecursion", base.prevent_recursion)),
            delay_until_recursion=data.get("delayUntilRecursion", base.delay_until_recursion),
            ignore_budget=bool(data.get("ignoreBudget", base.ignore_budget)),
        )


def entry_order(settings: EntrySettings, number: int) -> int:
    """The entry's `order`: its number, a fixed value, or counting down; within 0-9999."""
    number = max(1, number)
    if settings.order_mode == "manual":
        wanted = settings.order_value
    elif settings.order_mode == "reverse":
        wanted = settings.reverse_start - (number - 1)
    else:
        wanted = number
    return min(ORDER_MAX, max(ORDER_MIN, wanted))


@dataclass(frozen=True)
class Link:
    """What ties a linked memory to its canonical entry (multi-book layouts)."""

    inclusion_group: str  # `<chat or group>-Memory-NNN`, also the entry's `group`
    canonical_book: str
    canonical_uid: int | None
    canonical: bool
    extra: Mapping[str, Any] = field(default_factory=dict)  # e.g. narrator participant ids

    @property
    def memory_number(self) -> int | None:
        _, marker, digits = self.inclusion_group.rpartition("Memory-")
        return int(digits) if marker and digits.isdigit() else None

    def fields(self) -> dict[str, Any]:
        return {
            CANONICAL: self.canonical,
            CANONICAL_BOOK: self.canonical_book,
            CANONICAL_UID: self.canonical_uid,
            CANONICAL_NUMBER: self.memory_number,
            INCLUSION_GROUP: self.inclusion_group,
            **self.extra,
        }


@dataclass(frozen=True)
class MemoryDraft:
    """Everything a memory entry says, before it has a uid in a book."""

    title: str
    content: str
    keywords: tuple[str, ...]
    scene: SceneRange | None = None
    chat_id: str | None = None
    filter_names: tuple[str, ...] = ()  # characterFilter names (character file names)
    link: Link | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)  # further fields, in order

    @property
    def number(self) -> int:
        """The memory's number, read from its title as STMB reads it (1 without one)."""
        return number_in_title(self.title) or 1


def memory_entry(uid: int, draft: MemoryDraft, settings: EntrySettings) -> LorebookEntry:
    """A new entry holding ``draft``, with every other field at SillyTavern's default."""
    raw: dict[str, Any] = {"uid": uid, **copy.deepcopy(ENTRY_TEMPLATE)}
    raw.update(content=draft.content, key=list(draft.keywords), comment=draft.title)
    raw = apply_settings(raw, settings, draft.number)
    raw["addMemo"] = True
    raw["ignoreBudget"] = settings.ignore_budget
    raw["displayIndex"] = draft.number
    raw[MEMORY_FLAG] = True
    if draft.filter_names:
        raw["characterFilter"] = {
            "isExclude": False,
            "names": list(dict.fromkeys(draft.filter_names)),
            "tags": [],
        }
    if draft.scene is not None:
        raw[START], raw[END] = draft.scene.first, draft.scene.last
    if draft.chat_id:
        raw[CHAT_ID] = draft.chat_id
    if draft.link is not None:
        raw["group"] = draft.link.inclusion_group
        raw.update(draft.link.fields())
    raw.update(draft.extra)
    return LorebookEntry.from_dict(raw)


def apply_settings(raw: Mapping[str, Any], settings: EntrySettings, number: int) -> dict[str, Any]:
    """The fields a profile's entry settings decide, in the order STMB sets them.

    The result is ``raw`` (an entry's dict) with those fields replaced; `outletName`
    is left out unless the entry goes to an outlet with a name.
    """
    outlet = settings.position == OUTLET and bool(settings.outlet_name)
    out = {key: value for key, value in raw.items() if key != "outletName" or outlet}
    out["constant"] = settings.mode == "blue"
    out["vectorized"] = settings.mode == "link"
    out["position"] = settings.position
    if outlet:
        out["outletName"] = settings.outlet_name
    out["order"] = entry_order(settings, number)
    out["preventRecursion"] = settings.prevent_recursion
    out["delayUntilRecursion"] = settings.delay_until_recursion
    return out


# -- reading memory entries ---------------------------------------------------------------


def is_memory(entry: LorebookEntry) -> bool:
    """Whether STMB counts the entry as one of its memories (only the explicit flag does)."""
    return entry.raw.get(MEMORY_FLAG) is True


def scene_of(entry: LorebookEntry) -> SceneRange | None:
    start, end = entry.raw.get(START), entry.raw.get(END)
    if _is_int(start) and _is_int(end) and 0 <= start <= end:
        return SceneRange(start, end)
    return None


def chat_of(entry: LorebookEntry) -> str | None:
    value = entry.raw.get(CHAT_ID)
    return None if value is None or value == "" else str(value)


def tier_of(entry: LorebookEntry) -> int:
    """0 for a scene memory, else its consolidation tier (1: arc, 2: chapter ...)."""
    raw = entry.raw
    if raw.get(SUMMARY) is True:
        tier = raw.get(SUMMARY_TIER)
        return int(tier) if _is_int(tier) and tier > 0 else 1
    return 0


def link_of(entry: LorebookEntry) -> Link | None:
    """The entry's canonical link, when it is part of a linked (multi-book) memory."""
    raw = entry.raw
    group = raw.get(INCLUSION_GROUP)
    if not isinstance(group, str) or not group:
        return None
    uid = raw.get(CANONICAL_UID)
    canonical = raw.get(CANONICAL)
    known = {CANONICAL, CANONICAL_BOOK, CANONICAL_UID, CANONICAL_NUMBER, INCLUSION_GROUP}
    return Link(
        inclusion_group=group,
        canonical_book=str(raw.get(CANONICAL_BOOK) or ""),
        canonical_uid=uid if _is_int(uid) else None,
        canonical=canonical is not False,
        extra={k: v for k, v in raw.items() if k.startswith("STMB_narrator") and k not in known},
    )


def memories(entries: Sequence[LorebookEntry]) -> list[LorebookEntry]:
    """The memory entries among ``entries``, by their number (then uid)."""
    found = [entry for entry in entries if is_memory(entry)]
    return sorted(found, key=lambda e: (number_in_title(e.comment) or 0, e.uid))


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
