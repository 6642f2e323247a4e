"""SillyTavern group files (`groups/<id>.json`): parse, inspect, change and write back.

SillyTavern writes a group with `JSON.stringify(group, null, 4)` and no trailing
newline. A group is kept as the ordered mapping that was read, so keys this
module does not know (`date_added`, `past_metadata`, an extension's own) survive
untouched; the typed properties are read-only views and `set` changes one key.

Members are card file names (`Mira.png`), as SillyTavern identifies characters;
groups from its first versions listed character names instead. Muted members
are `disabled_members`. Reply order is `activation_strategy`: 0 natural, 1 list,
2 manual, 3 pooled.

charmemory keeps one thing of its own in a group: when a member joined each of
its chats after the chat began (`charmemory.joins`), so that member's memories
only come from what it was there to hear.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from charmemory.errors import FormatError
from charmemory.formats.js_json import js_stringify, loads_json

OWN_KEY = "charmemory"  # our namespace inside a group
_JOINS = "joins"
_EMPTY: Mapping[str, Any] = MappingProxyType({})


@dataclass(frozen=True)
class GroupJoin:
    """A member's arrival in a chat that had already begun.

    `at` is the first message the member was there for (the chat's length when it
    joined); `after` the fingerprint of the message before it, so the place can
    be found again when earlier messages are deleted.
    """

    at: int
    after: str = ""
    date: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"at": self.at, "after": self.after, "date": self.date}


@dataclass
class Group:
    """A group as SillyTavern wrote it."""

    data: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def new(cls, group_id: str, name: str, members: list[str], chat_id: str) -> Group:
        """A group with SillyTavern's own keys and defaults, in the order it writes them."""
        return cls(
            {
                "id": group_id,
                "name": name,
                "members": list(members),
                "avatar_url": "img/ai4.png",
                "allow_self_responses": False,
                "activation_strategy": 0,
                "generation_mode": 0,
                "disabled_members": [],
                "chat_metadata": {},
                "fav": False,
                "chat_id": chat_id,
                "chats": [chat_id],
                "auto_mode_delay": 5,
                "generation_mode_join_prefix": "",
                "generation_mode_join_suffix": "",
            }
        )

    @property
    def id(self) -> str:
        value = self.data.get("id")
        return str(value) if isinstance(value, str | int) and not isinstance(value, bool) else ""

    @property
    def name(self) -> str:
        value = self.data.get("name")
        return value if isinstance(value, str) else ""

    @property
    def members(self) -> tuple[str, ...]:
        return _strings(self.data.get("members"))

    @property
    def disabled_members(self) -> tuple[str, ...]:
        """The muted members: they never speak, but still hear."""
        return _strings(self.data.get("disabled_members"))

    @property
    def activation_strategy(self) -> int:
        value = self.data.get("activation_strategy")
        return value if isinstance(value, int) and not isinstance(value, bool) else 0

    @property
    def allow_self_responses(self) -> bool:
        return bool(self.data.get("allow_self_responses"))

    @property
    def chat_id(self) -> str | None:
        """The chat SillyTavern opens for the group."""
        value = self.data.get("chat_id")
        return value if isinstance(value, str) and value else None

    @property
    def chats(self) -> tuple[str, ...]:
        return _strings(self.data.get("chats"))

    def set(self, key: str, value: Any) -> None:
        """Set one top-level key; a new key goes last, as in JavaScript."""
        self.data[key] = value

    def joins(self, chat_id: str) -> Mapping[str, GroupJoin]:
        """Members who joined ``chat_id`` after it began, by member id."""
        own = self.data.get(OWN_KEY)
        chats = own.get(_JOINS) if isinstance(own, dict) else None
        found = chats.get(chat_id) if isinstance(chats, dict) else None
        if not isinstance(found, dict):
            return _EMPTY
        return MappingProxyType(
            {member: join for member, raw in found.items() if (join := _join(raw)) is not None}
        )

    def record_join(self, chat_id: str, member: str, join: GroupJoin) -> None:
        own = self.data.get(OWN_KEY)
        if not isinstance(own, dict):
            own = self.data[OWN_KEY] = {}
        chats = own.get(_JOINS)
        if not isinstance(chats, dict):
            chats = own[_JOINS] = {}
        joined = chats.get(chat_id)
        if not isinstance(joined, dict):
            joined = chats[chat_id] = {}
        joined[member] = join.to_dict()


def parse_group(text: str, *, source: str | None = None) -> Group:
    """A group file's text; refused unless it is an object with an id and a member list."""
    document = loads_json(text, source=source)
    if not isinstance(document, dict):
        raise FormatError("expected a JSON object (a SillyTavern group)", source=source)
    group = Group(document)
    if not group.id or not isinstance(document.get("members"), list):
        raise FormatError(
            "not a SillyTavern group: it needs an id and a member list", source=source
        )
    return group


def looks_like_group(document: Mapping[str, Any]) -> bool:
    """Whether a JSON object is a group rather than a card or a lorebook."""
    return isinstance(document.get("members"), list) and (
        "chats" in document or "chat_id" in document
    )


def render_group(group: Group) -> str:
    """The file's text, as `JSON.stringify(group, null, 4)` writes it."""
    return js_stringify(group.data, indent=4)


def _strings(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list):
        return ()
    return tuple(item for item in value if isinstance(item, str))


def _join(raw: Any) -> GroupJoin | None:
    if not isinstance(raw, dict):
        return None
    at = raw.get("at")
    if not isinstance(at, int) or isinstance(at, bool) or at < 0:
        return None
    after, date = raw.get("after"), raw.get("date")
    return GroupJoin(
        at, after if isinstance(after, str) else "", date if isinstance(date, str) else ""
    )
