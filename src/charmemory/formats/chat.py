"""SillyTavern chat files (JSONL): parse, inspect, change and write back byte for byte.

A chat file is one `JSON.stringify` line per object joined by `\\n`, with no
trailing newline. Line 0 is a header (`user_name`, `character_name`, `chat_metadata`
and, before 1.15, `create_date`); every later line is a message. Each object is
kept as the ordered mapping that was read, so keys this module does not know
(and odd values of keys it does know) survive untouched; the typed properties are
read-only views over that mapping. Writing emulates `JSON.stringify`, so a file
SillyTavern wrote renders back to identical bytes, and changing one message only
changes its own line. Input that `JSON.stringify` would not have produced (`\\/`
escapes, `1.0`, blank lines, a trailing newline) comes back in the canonical form.

Message ids are list positions: `chat.messages[i]` is SillyTavern's message `i`.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from types import MappingProxyType
from typing import Any, Literal

from charmemory.errors import FormatError
from charmemory.formats.js_json import js_stringify
from charmemory.formats.send_date import parse_send_date
from charmemory.formats.unicode_text import without_lone_surrogates

Role = Literal["user", "character", "narrator", "system"]

# SillyTavern's `system_message_types`, less `narrator` which is a role of its own.
_SYSTEM_MESSAGE_TYPES = frozenset(
    {
        "help",
        "welcome",
        "group",
        "empty",
        "generic",
        "comment",
        "slash_commands",
        "formatting",
        "hotkeys",
        "macros",
        "welcome_prompt",
        "assistant_note",
    }
)
_EMPTY: Mapping[str, Any] = MappingProxyType({})
# What SillyTavern 1.15+ writes into both header names instead of real ones.
_PLACEHOLDER_NAME = "unused"


@dataclass
class ChatHeader:
    """Line 0 of a chat file. `present` is False when the file has no header line
    (an empty file, or a group chat from before headers), and then none is written."""

    data: dict[str, Any] = field(default_factory=dict)
    present: bool = True

    @property
    def user_name(self) -> str | None:
        return _str_or_none(self.data.get("user_name"))

    @property
    def character_name(self) -> str | None:
        return _str_or_none(self.data.get("character_name"))

    @property
    def named_user(self) -> str | None:
        """`user_name` when it names someone: None when absent, blank or `unused`."""
        return _real_name(self.user_name)

    @property
    def named_character(self) -> str | None:
        """`character_name` when it names someone: None when absent, blank or `unused`."""
        return _real_name(self.character_name)

    @property
    def create_date(self) -> Any:
        """The raw `create_date` (absent since 1.15); see `parse_send_date` for its forms."""
        return self.data.get("create_date")

    @property
    def chat_metadata(self) -> Mapping[str, Any]:
        """Read-only view; change it with `set_metadata`."""
        return _read_only_dict(self.data.get("chat_metadata"))

    def set_metadata(self, key: str, value: Any) -> None:
        """Set one `chat_metadata` key; a header without `chat_metadata` gains it last."""
        _writable_dict(self.data, "chat_metadata")[key] = value


@dataclass
class Message:
    """One message line, kept as the ordered mapping SillyTavern wrote."""

    data: dict[str, Any]

    @classmethod
    def new(
        cls,
        *,
        name: str,
        mes: str,
        is_user: bool,
        send_date: str,
        is_system: bool = False,
        extra: Mapping[str, Any] | None = None,
    ) -> Message:
        """A message with SillyTavern's own key order for a freshly sent message."""
        return cls(
            {
                "name": name,
                "is_user": is_user,
                "is_system": is_system,
                "send_date": send_date,
                "mes": mes,
                "extra": dict(extra or {}),
            }
        )

    @property
    def name(self) -> str:
        return _text(self.data.get("name"))

    @property
    def is_user(self) -> bool:
        return _js_truthy(self.data.get("is_user"))

    @property
    def is_system(self) -> bool:
        """SillyTavern tests `is_system` for truthiness; narrator lines may hold `""`."""
        return _js_truthy(self.data.get("is_system"))

    # Left out of the prompt: SillyTavern builds it from messages with falsy `is_system`.
    # (The same property, not one calling the other: it is read for every message.)
    is_hidden = is_system

    @property
    def send_date(self) -> Any:
        """The raw `send_date`, exactly as stored."""
        return self.data.get("send_date")

    @property
    def sent_at(self) -> datetime | None:
        return parse_send_date(self.send_date)

    @property
    def mes(self) -> str:
        return _text(self.data.get("mes"))

    # The text SillyTavern shows and prompts with. That is `mes`: swiping copies the
    # chosen swipe into `mes` and editing writes `mes` first, so when `swipes[swipe_id]`
    # disagrees, `mes` is what counts. (The same property, read for every message.)
    active_text = mes

    @property
    def extra(self) -> Mapping[str, Any]:
        """Read-only view; change it with `set_extra`."""
        return _read_only_dict(self.data.get("extra"))

    @property
    def swipes(self) -> tuple[Any, ...] | None:
        return _tuple_or_none(self.data.get("swipes"))

    @property
    def swipe_id(self) -> int | None:
        value = self.data.get("swipe_id")
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    @property
    def swipe_info(self) -> tuple[Any, ...] | None:
        return _tuple_or_none(self.data.get("swipe_info"))

    @property
    def role(self) -> Role:
        """Who speaks: the user, the character, the narrator (`/sys`), or SillyTavern itself."""
        if self.is_user:
            return "user"
        kind = self.extra.get("type")
        if kind == "narrator":
            return "narrator"
        if isinstance(kind, str) and kind in _SYSTEM_MESSAGE_TYPES:
            return "system"
        return "character"

    def set_extra(self, key: str, value: Any) -> None:
        """Set one `extra` key; a message without `extra` gains it last."""
        _writable_dict(self.data, "extra")[key] = value


@dataclass
class Chat:
    header: ChatHeader
    messages: list[Message] = field(default_factory=list)
    source: str | None = None

    def render(self) -> str:
        """The file's text: one `JSON.stringify` line per object, joined by `\\n`."""
        objects = [message.data for message in self.messages]
        if self.header.present:
            objects.insert(0, self.header.data)
        return "\n".join(js_stringify(item) for item in objects)

    def append(self, message: Message) -> int:
        """Add `message` at the end; returns its message id."""
        self.messages.append(message)
        return len(self.messages) - 1


def parse_chat(text: str, *, source: str | None = None) -> Chat:
    """Read a chat file's text. Blank lines are skipped, as SillyTavern skips them.

    The first object is the header unless it carries `mes`: group chats written
    before group headers existed start straight with a message, and then the
    header is marked absent.
    """
    objects = [
        _parse_line(line, number, source)
        for number, line in enumerate(text.split("\n"), start=1)
        if line.strip()
    ]
    if objects and "mes" not in objects[0]:
        header = ChatHeader(objects.pop(0))
    else:
        header = ChatHeader(present=False)
    return Chat(header, [Message(item) for item in objects], source)


@dataclass(frozen=True)
class MessagePage:
    """Some consecutive messages of a chat, read without parsing the others."""

    total: int  # messages in the whole chat
    first: int  # message id of `messages[0]`
    messages: list[Message]
    header: ChatHeader = field(default_factory=lambda: ChatHeader(present=False))


def parse_message_page(
    text: str, *, before: int | None, count: int, source: str | None = None
) -> MessagePage:
    """The ``count`` messages before message id ``before`` (default: the newest), as
    `parse_chat` would number them; only those lines are decoded, so a page of a long
    chat costs about what a short chat costs."""
    lines = [(n, line) for n, line in enumerate(text.split("\n"), start=1) if line.strip()]
    header = ChatHeader(present=False)
    if lines and _is_header(lines[0][1], lines[0][0], source):
        number, line = lines.pop(0)
        header = ChatHeader(_parse_line(line, number, source))
    total = len(lines)
    end = total if before is None else max(0, min(before, total))
    first = max(0, end - count)
    messages = [Message(_parse_line(line, number, source)) for number, line in lines[first:end]]
    return MessagePage(total, first, messages, header)


def last_message_send_date(text: str) -> Any:
    """The raw `send_date` of a chat's last message, reading only its last line.

    `text` is the file's text or any tail of it that holds the whole last line (a
    tail read from bytes may start inside a character: decode it with
    `errors="replace"`), so ordering long chats never parses them whole, as
    SillyTavern's chat list reads only the last line too. Returns None when the
    last line is the header, carries no `send_date` or is not a JSON object: this
    serves ordering, where one damaged chat must not stop the others being listed.
    """
    body = text.rstrip()
    start = body.rfind("\n") + 1
    try:
        item = _DECODER.decode(body[start:])
    except (ValueError, RecursionError):
        return None
    if not isinstance(item, dict) or (start == 0 and "mes" not in item):
        return None
    return item.get("send_date")


def message_fingerprint(message: Message) -> str:
    """A short stable hash of what memory extraction reads from a message.

    It covers the speaker's name, whether the user spoke, and the active text, so
    it changes when a message is edited or swiped to another text, and stays put
    through bookkeeping (send dates, `extra`, swipe metadata, hiding).
    """
    payload = json.dumps([message.name, message.is_user, message.active_text])
    return hashlib.sha256(payload.encode("ascii")).hexdigest()[:16]


def chat_fingerprints(chat: Chat) -> list[str]:
    """`message_fingerprint` of every message, indexed by message id."""
    return [message_fingerprint(message) for message in chat.messages]


def _parse_line(line: str, number: int, source: str | None) -> dict[str, Any]:
    found = _object_line(line)
    if found is not None:
        return found
    try:
        item = _DECODER.decode(line)
    except json.JSONDecodeError as error:
        raise FormatError(
            f"not valid JSON: {error.msg} (column {error.colno})", source=source, line=number
        ) from None
    except (ValueError, RecursionError) as error:
        raise FormatError(f"not valid JSON: {error}", source=source, line=number) from None
    if not isinstance(item, dict):
        raise FormatError(
            f"expected a JSON object, found {type(item).__name__}", source=source, line=number
        )
    return item


def _object_line(line: str) -> dict[str, Any] | None:
    """The object of a line that is one JSON object and nothing else, else None.

    It is what `_DECODER.decode` reads, without its checks for space around the
    value (a long chat has thousands of lines); a line this does not read, well
    formed or not, is left to `decode`, which reads it or says why not.
    """
    if not (line.startswith("{") and line.endswith("}")):
        return None
    try:
        item, end = _DECODER.scan_once(line, 0)
    except (StopIteration, ValueError, RecursionError):
        return None
    return item if end == len(line) else None


def _is_header(line: str, number: int, source: str | None) -> bool:
    # A line that never says `"mes"` is no message; only one that does needs decoding.
    return '"mes"' not in line or "mes" not in _parse_line(line, number, source)


def _reject_constant(name: str) -> Any:
    # NaN and Infinity are Python extensions; JSON.parse rejects them.
    raise ValueError(f"{name} is not JSON")


# One decoder for every line (`json.loads` with options builds a new one per call).
_DECODER = json.JSONDecoder(parse_constant=_reject_constant)


def _js_truthy(value: Any) -> bool:
    if value is True or value is False:
        return value
    if isinstance(value, float) and math.isnan(value):
        return False
    if isinstance(value, list | dict):
        return True  # empty arrays and objects are truthy in JavaScript
    return bool(value)


def _real_name(value: str | None) -> str | None:
    if value is None or not value.strip() or value.strip().casefold() == _PLACEHOLDER_NAME:
        return None
    return value


def _text(value: Any) -> str:
    """`_str_or_none(value) or ""`, quickly for ASCII text: read for every message of a chat."""
    if value.__class__ is str and value.isascii():
        return value
    return _str_or_none(value) or ""


def _str_or_none(value: Any) -> str | None:
    # The mapping keeps what was read (so the file renders back byte for byte);
    # what is read from it is text every later step can encode.
    return without_lone_surrogates(value) if isinstance(value, str) else None


def _tuple_or_none(value: Any) -> tuple[Any, ...] | None:
    return tuple(value) if isinstance(value, list) else None


def _read_only_dict(value: Any) -> Mapping[str, Any]:
    return MappingProxyType(value) if isinstance(value, dict) else _EMPTY


def _writable_dict(data: dict[str, Any], key: str) -> dict[str, Any]:
    value = data.get(key)
    if not isinstance(value, dict):
        value = data[key] = {}
    return value
