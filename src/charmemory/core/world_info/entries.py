"""A lorebook entry as the engine reads it: every SillyTavern field, typed, with its book.

`formats.lorebook.LorebookEntry` types the fields charmemory edits and keeps the
rest in `raw`; the engine needs all of them. Values are read as leniently as
SillyTavern reads them: `null` means the default, `delayUntilRecursion: true`
is level 1, a `sticky` of 0 is no sticky, and so on.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from charmemory.formats.js_json import js_stringify
from charmemory.formats.lorebook import LorebookEntry

Role = Literal["system", "user", "assistant"]
GenerationType = Literal["normal", "continue", "impersonate", "swipe", "regenerate", "quiet"]
GENERATION_TYPES: tuple[GenerationType, ...] = (
    "normal",
    "continue",
    "impersonate",
    "swipe",
    "regenerate",
    "quiet",
)
ROLES: tuple[Role, ...] = ("system", "user", "assistant")

# world_info_position
BEFORE, AFTER, AN_TOP, AN_BOTTOM, AT_DEPTH, EXAMPLES_TOP, EXAMPLES_BOTTOM, OUTLET = range(8)
# world_info_logic (selectiveLogic)
AND_ANY, NOT_ALL, NOT_ANY, AND_ALL = range(4)
LOGIC_NAMES = {AND_ANY: "AND ANY", NOT_ALL: "NOT ALL", NOT_ANY: "NOT ANY", AND_ALL: "AND ALL"}

KNOWN_DECORATORS = ("@@activate", "@@dont_activate")
_GROUP_SEPARATOR = re.compile(r",\s*")


@dataclass(frozen=True)
class CharacterFilter:
    """`characterFilter`: character file names and tags the entry is limited to (or excludes)."""

    names: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    exclude: bool = False


@dataclass(frozen=True)
class LoreEntry:
    """One candidate entry of one generation, identified by (book, uid)."""

    book: str
    uid: int
    keys: tuple[str, ...]
    secondary_keys: tuple[str, ...]
    selective: bool
    selective_logic: int
    comment: str
    content: str  # without its leading decorator lines
    decorators: tuple[str, ...]
    constant: bool
    vectorized: bool
    disable: bool
    order: float
    position: int
    depth: int
    role: Role
    outlet_name: str
    probability: float
    use_probability: bool
    group: str
    group_names: tuple[str, ...]
    group_override: bool
    group_weight: float
    use_group_scoring: bool | None
    scan_depth: int | None
    case_sensitive: bool | None
    match_whole_words: bool | None
    exclude_recursion: bool
    prevent_recursion: bool
    delay_until_recursion: int  # 0: not delayed; otherwise the recursion level
    ignore_budget: bool
    sticky: int  # messages; 0: none
    cooldown: int
    delay: int
    scan_persona_description: bool
    scan_character_description: bool
    scan_character_personality: bool
    scan_character_depth_prompt: bool
    scan_scenario: bool
    scan_creator_notes: bool
    triggers: tuple[GenerationType, ...]
    character_filter: CharacterFilter
    automation_id: str
    source: LorebookEntry

    @property
    def key(self) -> tuple[str, int]:
        return (self.book, self.uid)

    @property
    def label(self) -> str:
        """How explanations name the entry: `Book#uid (comment)`."""
        name = f"{self.book}#{self.uid}"
        return f"{name} ({self.comment})" if self.comment else name

    @property
    def scan_flags(self) -> tuple[bool, bool, bool, bool, bool, bool]:
        """Which card and persona fields this entry's scan text adds, in SillyTavern's order."""
        return (
            self.scan_persona_description,
            self.scan_character_description,
            self.scan_character_personality,
            self.scan_character_depth_prompt,
            self.scan_scenario,
            self.scan_creator_notes,
        )


def lore_entry(book: str, entry: LorebookEntry) -> LoreEntry:
    """The typed view of `entry` from the book named `book`."""
    raw = entry.raw
    decorators, content = parse_decorators(entry.content)
    group = _text(raw.get("group"))
    return LoreEntry(
        book=book,
        uid=entry.uid,
        keys=entry.keys,
        secondary_keys=entry.secondary_keys,
        selective=entry.selective,
        selective_logic=_whole(raw.get("selectiveLogic"), AND_ANY),
        comment=entry.comment,
        content=content,
        decorators=decorators,
        constant=entry.constant,
        vectorized=_truthy(raw.get("vectorized")),
        disable=entry.disable,
        order=float(entry.order),
        position=int(entry.position),
        depth=int(entry.depth),
        role=_role(raw.get("role")),
        outlet_name=_text(raw.get("outletName")),
        probability=_number(raw.get("probability"), 100),
        use_probability=_truthy(raw.get("useProbability", True)),
        group=group,
        group_names=tuple(name for name in _GROUP_SEPARATOR.split(group) if name),
        group_override=_truthy(raw.get("groupOverride")),
        group_weight=_number(raw.get("groupWeight"), 100),
        use_group_scoring=_optional_bool(raw.get("useGroupScoring")),
        scan_depth=_optional_whole(raw.get("scanDepth")),
        case_sensitive=_optional_bool(raw.get("caseSensitive")),
        match_whole_words=_optional_bool(raw.get("matchWholeWords")),
        exclude_recursion=_truthy(raw.get("excludeRecursion")),
        prevent_recursion=_truthy(raw.get("preventRecursion")),
        delay_until_recursion=_recursion_level(raw.get("delayUntilRecursion")),
        ignore_budget=_truthy(raw.get("ignoreBudget")),
        sticky=_duration(raw.get("sticky")),
        cooldown=_duration(raw.get("cooldown")),
        delay=_duration(raw.get("delay")),
        scan_persona_description=_truthy(raw.get("matchPersonaDescription")),
        scan_character_description=_truthy(raw.get("matchCharacterDescription")),
        scan_character_personality=_truthy(raw.get("matchCharacterPersonality")),
        scan_character_depth_prompt=_truthy(raw.get("matchCharacterDepthPrompt")),
        scan_scenario=_truthy(raw.get("matchScenario")),
        scan_creator_notes=_truthy(raw.get("matchCreatorNotes")),
        triggers=_triggers(raw.get("triggers")),
        character_filter=_character_filter(raw.get("characterFilter")),
        automation_id=_text(raw.get("automationId")),
        source=entry,
    )


def parse_decorators(content: str) -> tuple[tuple[str, ...], str]:
    """Split leading `@@decorator` lines off the content, as SillyTavern's parseDecorators.

    A line starting `@@@` is a fallback, read only when the decorator before it
    was unknown. Content made of decorator lines alone keeps them as its text,
    as SillyTavern does.
    """
    if not content.startswith("@@"):
        return (), content
    lines = content.split("\n")
    decorators: list[str] = []
    fell_back = False
    for index, line in enumerate(lines):
        if not line.startswith("@@"):
            return tuple(decorators), "\n".join(lines[index:])
        if line.startswith("@@@") and not fell_back:
            continue
        name = line[1:] if line.startswith("@@@") else line
        if name.startswith(KNOWN_DECORATORS):
            decorators.append(name)
            fell_back = False
        else:
            fell_back = True
    return tuple(decorators), content


def entry_hash(entry: LoreEntry) -> int:
    """SillyTavern's identity of an entry version, stored with its timed effects.

    SillyTavern hashes (cyrb53, its `getStringHash`) the JSON of the entry as
    loaded: `uid`, then `world` (the book), then the stored fields with the
    content stripped of its decorators, then `decorators`. Any edit changes it.
    """
    stored = entry.source.to_dict()
    shaped: dict[str, Any] = {"uid": entry.uid, "world": entry.book}
    shaped.update((name, value) for name, value in stored.items() if name != "uid")
    shaped["content"] = entry.content
    shaped["decorators"] = list(entry.decorators)
    return string_hash(js_stringify(shaped))


def string_hash(text: str, seed: int = 0) -> int:
    """cyrb53 over UTF-16 code units, bit for bit as SillyTavern's getStringHash."""
    h1 = (0xDEADBEEF ^ seed) & 0xFFFFFFFF
    h2 = (0x41C6CE57 ^ seed) & 0xFFFFFFFF
    units = text.encode("utf-16-le")
    for index in range(0, len(units), 2):
        unit = units[index] | units[index + 1] << 8
        h1 = ((h1 ^ unit) * 2654435761) & 0xFFFFFFFF
        h2 = ((h2 ^ unit) * 1597334677) & 0xFFFFFFFF
    h1 = ((h1 ^ (h1 >> 16)) * 2246822507 & 0xFFFFFFFF) ^ (
        (h2 ^ (h2 >> 13)) * 3266489909 & 0xFFFFFFFF
    )
    h2 = ((h2 ^ (h2 >> 16)) * 2246822507 & 0xFFFFFFFF) ^ (
        (h1 ^ (h1 >> 13)) * 3266489909 & 0xFFFFFFFF
    )
    return 4294967296 * (2097151 & h2) + h1


def _truthy(value: Any) -> bool:
    return bool(value) or isinstance(value, list | dict)


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _number(value: Any, default: float) -> float:
    return float(value) if _is_number(value) else default


def _whole(value: Any, default: int) -> int:
    return int(value) if _is_number(value) else default


def _optional_whole(value: Any) -> int | None:
    return int(value) if _is_number(value) else None


def _optional_bool(value: Any) -> bool | None:
    return value if isinstance(value, bool) else None


def _duration(value: Any) -> int:
    return max(0, int(value)) if _is_number(value) else 0


def _recursion_level(value: Any) -> int:
    if value is True:
        return 1
    return max(0, int(value)) if _is_number(value) else 0


def _role(value: Any) -> Role:
    if _is_number(value) and int(value) in (0, 1, 2):
        return ROLES[int(value)]
    return value if value in ROLES else "system"


def _triggers(value: Any) -> tuple[GenerationType, ...]:
    if not isinstance(value, list):
        return ()
    return tuple(item for item in GENERATION_TYPES if item in value)


def _character_filter(value: Any) -> CharacterFilter:
    if not isinstance(value, Mapping):
        return CharacterFilter()
    return CharacterFilter(
        names=tuple(_strings(value.get("names"))),
        tags=tuple(_strings(value.get("tags"))),
        exclude=_truthy(value.get("isExclude")),
    )


def _strings(value: Any) -> list[str]:
    return [item for item in value if isinstance(item, str)] if isinstance(value, list) else []
