"""SillyTavern World Info lorebooks: `{"entries": {"<uid>": {...}}, ...}`.

SillyTavern saves a world file with `JSON.stringify(data, null, 4)` and no
final newline (src/endpoints/worldinfo.js), so `Lorebook.render` produces the
same bytes, including JavaScript's key order and number formatting. Whitespace
after the JSON (a hand-edited file's final newline) is kept, and so is every
field we do not model, including those extensions add.

Text goes through `formats.js_json`, the JSON dialect SillyTavern writes.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from dataclasses import fields as dataclass_fields
from typing import Any

from charmemory.errors import FormatError, NotFoundError
from charmemory.formats.js_json import js_stringify, loads_json

# A new entry as SillyTavern creates it (`{ uid, ...newWorldInfoEntryTemplate }`
# in public/scripts/world-info.js), in the same key order. The characterFilter*
# fields are defined there too but kept out of the template, so out of this one.
ENTRY_TEMPLATE: dict[str, Any] = {
    "key": [],
    "keysecondary": [],
    "comment": "",
    "content": "",
    "constant": False,
    "vectorized": False,
    "selective": True,
    "selectiveLogic": 0,
    "addMemo": False,
    "order": 100,
    "position": 0,
    "disable": False,
    "ignoreBudget": False,
    "excludeRecursion": False,
    "preventRecursion": False,
    "matchPersonaDescription": False,
    "matchCharacterDescription": False,
    "matchCharacterPersonality": False,
    "matchCharacterDepthPrompt": False,
    "matchScenario": False,
    "matchCreatorNotes": False,
    "delayUntilRecursion": 0,
    "probability": 100,
    "useProbability": True,
    "depth": 4,
    "outletName": "",
    "group": "",
    "groupOverride": False,
    "groupWeight": 100,
    "scanDepth": None,
    "caseSensitive": None,
    "matchWholeWords": None,
    "useGroupScoring": None,
    "automationId": "",
    "role": 0,
    "sticky": None,
    "cooldown": None,
    "delay": None,
    "triggers": [],
}

_UID = re.compile(r"0|[1-9][0-9]*")


@dataclass
class LorebookEntry:
    """One World Info entry: the fields charmemory uses, typed, over the raw dict.

    `raw` is the entry as read; a typed field that differs from what `raw` says
    wins when the entry is written back, so unchanged entries stay byte-identical.
    """

    uid: int
    keys: tuple[str, ...] = ()
    secondary_keys: tuple[str, ...] = ()
    comment: str = ""
    content: str = ""
    constant: bool = False
    selective: bool = True
    disable: bool = False
    # JSON numbers: SillyTavern writes whole numbers, but any number is accepted.
    order: int | float = 100
    position: int | float = 0
    depth: int | float = 4
    raw: dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_dict(cls, raw: dict[str, Any], *, source: str | None = None) -> LorebookEntry:
        return cls(**_typed_values(raw, source), raw=raw)

    def to_dict(self) -> dict[str, Any]:
        """The entry as SillyTavern stores it."""
        out = copy.deepcopy(self.raw)
        as_read = _typed_values(self.raw, None) if "uid" in self.raw else {}
        for attr, json_name in _JSON_NAMES.items():
            value = getattr(self, attr)
            if attr not in as_read or value != as_read[attr]:
                out[json_name] = list(value) if isinstance(value, tuple) else value
        return out


_JSON_NAMES = {
    f.name: {"keys": "key", "secondary_keys": "keysecondary"}.get(f.name, f.name)
    for f in dataclass_fields(LorebookEntry)
    if f.name != "raw"
}


def _typed_values(raw: dict[str, Any], source: str | None) -> dict[str, Any]:
    uid = raw.get("uid")
    if not _is_int(uid) or uid < 0:
        raise FormatError(f"World Info entry has no valid uid: {uid!r}", source=source)
    values: dict[str, Any] = {"uid": uid}
    for f in dataclass_fields(LorebookEntry):
        json_name = _JSON_NAMES.get(f.name)
        if json_name is None or f.name == "uid":
            continue
        value = raw.get(json_name)
        if value is None:
            value = f.default
        elif not _has_type(value, f.default):
            expected = _TYPE_NAMES[type(f.default)]
            message = f"World Info entry {uid}: {json_name!r} must be {expected}, not {value!r:.60}"
            raise FormatError(message, source=source)
        values[f.name] = tuple(value) if isinstance(value, list) else value
    return values


_TYPE_NAMES = {tuple: "a list of text", bool: "true or false", int: "a number", str: "text"}


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _has_type(value: object, default: object) -> bool:
    if isinstance(default, tuple):
        return isinstance(value, list) and all(isinstance(item, str) for item in value)
    if isinstance(default, bool):
        return isinstance(value, bool)
    if isinstance(default, int):
        return isinstance(value, int | float) and not isinstance(value, bool)
    return isinstance(value, type(default))


def new_entry(
    content: str, keys: Iterable[str], *, comment: str = "", uid: int = 0, **fields: Any
) -> LorebookEntry:
    """A new entry with every SillyTavern default; `fields` use SillyTavern's names."""
    raw = {"uid": uid, **copy.deepcopy(ENTRY_TEMPLATE)}
    raw.update(key=list(keys), comment=comment, content=content, **fields)
    return LorebookEntry.from_dict(raw)


@dataclass
class Lorebook:
    """A World Info file. `entries` are keyed by uid in ascending order, as
    SillyTavern sees them; `raw` holds the other top-level keys."""

    entries: dict[int, LorebookEntry] = field(default_factory=dict)
    raw: dict[str, Any] = field(default_factory=lambda: {"entries": {}}, repr=False)
    # Whitespace that followed the JSON in the file read; SillyTavern writes none.
    trailing: str = ""

    def next_uid(self) -> int:
        """The smallest free non-negative uid, as SillyTavern's getFreeWorldEntryUid."""
        uid = 0
        while uid in self.entries:
            uid += 1
        return uid

    def add(self, content: str, keys: Iterable[str], **fields: Any) -> LorebookEntry:
        """Create an entry under the next free uid and store it."""
        entry = new_entry(content, keys, uid=self.next_uid(), **fields)
        self.put(entry)
        return entry

    def put(self, entry: LorebookEntry) -> None:
        """Store an entry under its uid, replacing any entry already there."""
        self.entries[entry.uid] = entry
        self.entries = dict(sorted(self.entries.items()))

    def update(self, uid: int, **fields: Any) -> LorebookEntry:
        """Change fields (by SillyTavern's names) of one entry, keeping the rest."""
        raw = self._get(uid).to_dict()
        raw.update(fields)
        if raw["uid"] != uid:
            raise ValueError(f"cannot change the uid of World Info entry {uid}")
        entry = LorebookEntry.from_dict(raw)
        self.entries[uid] = entry
        return entry

    def delete(self, uid: int) -> LorebookEntry:
        entry = self._get(uid)
        del self.entries[uid]
        return entry

    def _get(self, uid: int) -> LorebookEntry:
        try:
            return self.entries[uid]
        except KeyError:
            raise NotFoundError(f"World Info entry {uid} does not exist") from None

    def to_dict(self) -> dict[str, Any]:
        document = copy.deepcopy(self.raw)
        document["entries"] = {str(uid): e.to_dict() for uid, e in self.entries.items()}
        return document

    def render(self) -> str:
        """The file text, as SillyTavern would write it."""
        return js_stringify(self.to_dict(), indent=4) + self.trailing


def parse_lorebook(text: str, *, source: str | None = None) -> Lorebook:
    document = loads_json(text, source=source)
    entries = document.get("entries") if isinstance(document, dict) else None
    if isinstance(entries, list):
        # The form of a card's embedded book (`character_book.entries`): SillyTavern
        # converts it only when it comes inside a card, never as a World Info file.
        raise FormatError(
            "a lorebook in an unsupported shape: its 'entries' is a list (the form "
            "embedded in character cards); World Info files keep entries in an object by uid",
            source=source,
        )
    if not isinstance(entries, dict):
        raise FormatError("not a World Info file: no 'entries' object", source=source)
    parsed: dict[int, LorebookEntry] = {}
    for key, raw in entries.items():
        if not _UID.fullmatch(key) or not isinstance(raw, dict):
            raise FormatError(f"World Info entry {key!r} is not a uid and an object", source=source)
        if "uid" not in raw:
            raw = {"uid": int(key), **raw}
        entry = LorebookEntry.from_dict(raw, source=source)
        if entry.uid != int(key):
            message = f"World Info entry stored under {key!r} has uid {entry.uid}"
            raise FormatError(message, source=source)
        parsed[entry.uid] = entry
    document["entries"] = {}  # the entries live in Lorebook.entries; this keeps their place
    return Lorebook(dict(sorted(parsed.items())), document, text[len(text.rstrip()) :])
