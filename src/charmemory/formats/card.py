"""Character cards (V1, V2, V3) as PNG or JSON, read and written like SillyTavern.

A PNG card carries base64 UTF-8 JSON in `tEXt` chunks: `ccv3` (read first) and
`chara`. SillyTavern only looks at `tEXt` chunks, never `iTXt` or `zTXt`
(src/character-card-parser.js), and so do we. On write it drops every
`chara`/`ccv3` chunk and puts a fresh `chara` (V2) then `ccv3` (V3) before
`IEND`, the V3 JSON being the V2 JSON with only `spec`/`spec_version` changed.
"""

from __future__ import annotations

import base64
import binascii
import copy
import re
from dataclasses import dataclass, field, fields
from typing import Any, Literal

from charmemory.errors import FormatError
from charmemory.formats.js_json import js_stringify, loads_json
from charmemory.formats.png_chunks import (
    Png,
    is_png,
    read_png,
    text_chunk,
    text_chunk_keyword,
    text_chunk_text,
)
from charmemory.formats.unicode_text import without_lone_surrogates

CardSpec = Literal["v1", "v2", "v3"]

_SPECS: dict[str, tuple[CardSpec, str]] = {
    "chara_card_v2": ("v2", "2.0"),
    "chara_card_v3": ("v3", "3.0"),
}
# Chunk keywords in read order; SillyTavern compares them case-insensitively.
_CARD_KEYS = ("ccv3", "chara")
_SPEC_NAMES = {spec: (name, version) for name, (spec, version) in _SPECS.items()}

# Top-level V1 fields that SillyTavern keeps equal to their `data.*` twin.
_LEGACY_NAMES = {
    "name": "name",
    "description": "description",
    "personality": "personality",
    "scenario": "scenario",
    "first_mes": "first_mes",
    "mes_example": "mes_example",
    "tags": "tags",
    "creator_notes": "creatorcomment",
}
# Required by the V3 spec and written by SillyTavern into every card.
_GROUP_ONLY_GREETINGS = "group_only_greetings"


@dataclass(frozen=True)
class Card:
    """The parts of a character card charmemory uses, over the full JSON.

    `raw` is the card JSON as read; fields that differ from what `raw` says
    win when the card is written, everything else in `raw` is kept.
    """

    name: str
    description: str = ""
    personality: str = ""
    scenario: str = ""
    first_mes: str = ""
    mes_example: str = ""
    creator_notes: str = ""
    system_prompt: str = ""
    post_history_instructions: str = ""
    alternate_greetings: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    creator: str = ""
    character_version: str = ""
    extensions: dict[str, Any] = field(default_factory=dict)
    character_book: dict[str, Any] | None = None
    spec: CardSpec = "v3"
    raw: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def last_chat(self) -> str | None:
        """The chat SillyTavern last opened for this card (its `chat` field), if any.

        The value is a chat's name without `.jsonl` (see `chat_file_id` for the file
        it is saved in). SillyTavern keeps it at the top level, which is read first
        here, unlike the fields above; a `data.chat` some other tool wrote is the
        fallback. Read-only: writing a card keeps it as it was read.
        """
        data = self.raw.get("data")
        for value in (self.raw.get("chat"), data.get("chat") if isinstance(data, dict) else None):
            if isinstance(value, str) and value.strip():
                return value
        return None

    def baseline_text(self) -> str:
        """What the card already says about the character, section by section."""
        parts = [
            ("Description", self.description),
            ("Personality", self.personality),
            ("Scenario", self.scenario),
        ]
        return "\n\n".join(f"{label}:\n{text.strip()}" for label, text in parts if text.strip())


_CARD_FIELDS = [f for f in fields(Card) if f.name not in ("spec", "raw")]


def read_card(data: bytes, *, source: str | None = None) -> Card:
    """Read a card from PNG bytes or JSON bytes (told apart by the PNG signature)."""
    if is_png(data):
        document = _png_card_document(read_png(data, source=source), source)
    else:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            message = "not a character card: neither PNG nor UTF-8 JSON"
            raise FormatError(message, source=source) from None
        document = loads_json(text, source=source)
    return _card_from_document(document, source)


def write_card_png(png: bytes, card: Card, *, source: str | None = None) -> bytes:
    """The PNG with the card in fresh `chara` and `ccv3` chunks, other chunks untouched."""
    image = read_png(png, source=source)
    kept = [c for c in image.chunks if (text_chunk_keyword(c) or "").lower() not in _CARD_KEYS]
    card_chunks = [
        text_chunk("chara", _base64(card_to_json(card, spec="v2"))),
        text_chunk("ccv3", _base64(card_to_json(card, spec="v3"))),
    ]
    return Png((*kept[:-1], *card_chunks, kept[-1]), image.trailer).to_bytes()


def card_to_json(card: Card, spec: Literal["v2", "v3"] = "v3") -> str:
    """The card as compact JSON, the way SillyTavern stringifies it."""
    return js_stringify(_card_document(card, spec))


def _png_card_document(image: Png, source: str | None) -> Any:
    by_key = {}
    for chunk in image.chunks:
        keyword = (text_chunk_keyword(chunk) or "").lower()
        if keyword in _CARD_KEYS:
            by_key.setdefault(keyword, chunk)
    for key in _CARD_KEYS:
        if key in by_key:
            payload = _unbase64(text_chunk_text(by_key[key], source=source), key, source)
            try:
                text = payload.decode("utf-8")
            except UnicodeDecodeError:
                raise FormatError(f"PNG {key} chunk is not UTF-8 text", source=source) from None
            return loads_json(text, source=f"{source or 'PNG'} ({key} chunk)")
    raise FormatError("PNG has no character card (no chara or ccv3 text chunk)", source=source)


def _base64(text: str) -> str:
    return base64.b64encode(text.encode("utf-8")).decode("ascii")


def _unbase64(text: str, key: str, source: str | None) -> bytes:
    compact = re.sub(r"\s+", "", text)
    try:
        return base64.b64decode(compact + "=" * (-len(compact) % 4), validate=True)
    except binascii.Error:
        raise FormatError(f"PNG {key} chunk is not valid base64", source=source) from None


def _card_from_document(document: Any, source: str | None) -> Card:
    if not isinstance(document, dict):
        raise FormatError("not a character card: the JSON is not an object", source=source)
    return Card(**_typed_values(document, source), spec=_spec_of(document, source), raw=document)


def _spec_of(document: dict[str, Any], source: str | None) -> CardSpec:
    if "spec" not in document:
        if "name" not in document:
            raise FormatError("not a character card: no 'spec' and no 'name'", source=source)
        return "v1"
    if document["spec"] not in _SPECS:
        raise FormatError(f"unsupported card spec {document['spec']!r}", source=source)
    if not isinstance(document.get("data"), dict):
        raise FormatError(f"{document['spec']} card has no 'data' object", source=source)
    return _SPECS[document["spec"]][0]


def _typed_values(document: dict[str, Any], source: str | None) -> dict[str, Any]:
    """Field values as the document states them: `data.*` first, legacy fields second."""
    data = document.get("data")
    data = data if isinstance(data, dict) else {}
    values: dict[str, Any] = {}
    for f in _CARD_FIELDS:
        legacy = _LEGACY_NAMES.get(f.name, f.name)
        value = data[f.name] if f.name in data else document.get(legacy)
        values[f.name] = _coerce(f.name, value, source)
    return values


_EMPTY: dict[str, Any] = {"character_book": None, "alternate_greetings": (), "tags": ()}


def _coerce(name: str, value: Any, source: str | None) -> Any:
    # Lenient where SillyTavern is (missing fields are empty, tags may be a
    # comma-separated string); anything else of the wrong kind is an error.
    if value is None:
        return {} if name == "extensions" else _EMPTY.get(name, "")
    if name in ("extensions", "character_book"):
        if isinstance(value, dict):
            return value
    elif name == "tags" and isinstance(value, str):
        tags = without_lone_surrogates(value).split(",")
        return tuple(tag.strip() for tag in tags if tag.strip())
    elif name == "alternate_greetings" and isinstance(value, str):
        return (without_lone_surrogates(value),)
    elif name in _EMPTY:
        if isinstance(value, list) and all(isinstance(item, str) for item in value):
            return tuple(without_lone_surrogates(item) for item in value)
    elif isinstance(value, str):
        return without_lone_surrogates(value)
    elif name == "character_version" and type(value) in (int, float):  # not bool
        return js_stringify(value)
    raise FormatError(f"card field {name!r} has the wrong type: {value!r:.60}", source=source)


def _card_document(card: Card, spec: Literal["v2", "v3"]) -> dict[str, Any]:
    """The card JSON to write: `raw` with changed, missing and mirrored fields set."""
    document = copy.deepcopy(card.raw)
    as_read = _typed_values(card.raw, None)
    document["spec"], document["spec_version"] = _SPEC_NAMES[spec]
    data = document.get("data") if isinstance(document.get("data"), dict) else None
    if data is None:
        data = document["data"] = {}
    for f in _CARD_FIELDS:
        value = getattr(card, f.name)
        json_value = list(value) if isinstance(value, tuple) else copy.deepcopy(value)
        changed = value != as_read[f.name]
        if changed or (f.name not in data and value is not None):
            data[f.name] = json_value
        legacy = _LEGACY_NAMES.get(f.name)
        if legacy is not None and (changed or legacy not in document):
            document[legacy] = copy.deepcopy(json_value)
    data.setdefault(_GROUP_ONLY_GREETINGS, [])
    return document
