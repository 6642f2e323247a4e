"""A card's embedded lorebook (`data.character_book`, Character Card V2) as a World Info book.

SillyTavern converts it the same way when a card with a book is imported
(`convertCharacterBook`): V2 names become World Info names and SillyTavern's
own settings come from each entry's `extensions`. A card whose primary book
(`extensions.world`) is not among the workspace's books still brings its lore.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from charmemory.formats.lorebook import ENTRY_TEMPLATE, Lorebook, LorebookEntry

# World Info field <- the V2 entry's `extensions` key, for the fields that are only there.
_FROM_EXTENSIONS = {
    "excludeRecursion": "exclude_recursion",
    "preventRecursion": "prevent_recursion",
    "delayUntilRecursion": "delay_until_recursion",
    "displayIndex": "display_index",
    "probability": "probability",
    "useProbability": "useProbability",
    "depth": "depth",
    "selectiveLogic": "selectiveLogic",
    "group": "group",
    "groupOverride": "group_override",
    "groupWeight": "group_weight",
    "scanDepth": "scan_depth",
    "caseSensitive": "case_sensitive",
    "matchWholeWords": "match_whole_words",
    "useGroupScoring": "use_group_scoring",
    "automationId": "automation_id",
    "role": "role",
    "vectorized": "vectorized",
    "sticky": "sticky",
    "cooldown": "cooldown",
    "delay": "delay",
}
_BEFORE_CHARACTER, _AFTER_CHARACTER = 0, 1


def book_from_character_book(character_book: Mapping[str, Any]) -> Lorebook:
    """The embedded book's entries as World Info entries (unreadable entries are left out)."""
    book = Lorebook()
    entries = character_book.get("entries")
    for index, raw in enumerate(entries if isinstance(entries, list) else []):
        if isinstance(raw, Mapping) and isinstance(raw.get("content"), str):
            book.put(_entry(raw, index))
    return book


def _entry(raw: Mapping[str, Any], index: int) -> LorebookEntry:
    extensions = raw.get("extensions") if isinstance(raw.get("extensions"), Mapping) else {}
    uid = raw.get("id") if isinstance(raw.get("id"), int) else index
    comment = raw.get("comment") if isinstance(raw.get("comment"), str) else ""
    fields: dict[str, Any] = {
        **copy.deepcopy(ENTRY_TEMPLATE),
        "uid": uid,
        "key": _strings(raw.get("keys")),
        "keysecondary": _strings(raw.get("secondary_keys")),
        "comment": comment,
        "content": raw["content"],
        "constant": bool(raw.get("constant")),
        "selective": bool(raw.get("selective")),
        "order": raw.get("insertion_order") if isinstance(raw.get("insertion_order"), int) else 100,
        "position": extensions.get(
            "position",
            _BEFORE_CHARACTER if raw.get("position") == "before_char" else _AFTER_CHARACTER,
        ),
        "disable": not raw.get("enabled", True),
        "addMemo": bool(comment),
        "displayIndex": index,
    }
    for field, key in _FROM_EXTENSIONS.items():
        if key in extensions:
            fields[field] = extensions[key]
    return LorebookEntry.from_dict(fields)


def _strings(value: Any) -> list[str]:
    return [item for item in value if isinstance(item, str)] if isinstance(value, list) else []
