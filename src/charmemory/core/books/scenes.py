"""Scenes: an inclusive range of a chat's messages, and the transcript the model reads.

Message numbers are SillyTavern's message ids (0 is the first message after the
header). Hidden messages (`is_system`) are left out of a scene unless the
setting that unhides them for memories is on; a scene must keep at least one
message. A scene may not overlap the range of a memory of the same chat already
in the book it is written to, unless overlaps are allowed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from charmemory.errors import CharMemoryError
from charmemory.formats.chat import Chat

_RANGE = re.compile(r"\s*(\d+)\s*(?:-\s*(\d+)\s*)?")


class SceneError(CharMemoryError):
    """A scene range a chat cannot give (backwards, out of bounds, nothing visible)."""


class OverlapError(CharMemoryError):
    """The scene overlaps a memory already in the book."""


@dataclass(frozen=True, order=True)
class SceneRange:
    first: int
    last: int

    def __post_init__(self) -> None:
        if self.first < 0 or self.last < self.first:
            raise SceneError(f"message range {self.first}-{self.last} runs backwards")

    def __str__(self) -> str:
        return f"{self.first}-{self.last}"

    @property
    def size(self) -> int:
        return self.last - self.first + 1

    def overlaps(self, other: SceneRange) -> bool:
        return self.first <= other.last and other.first <= self.last


def parse_range(text: str) -> SceneRange:
    """`A-B` (or a single message `A`) as a range."""
    found = _RANGE.fullmatch(text)
    if not found:
        raise SceneError(f"not a message range: {text!r} (write FIRST-LAST, e.g. 10-25)")
    first = int(found.group(1))
    last = int(found.group(2)) if found.group(2) is not None else first
    return SceneRange(first, last)


@dataclass(frozen=True)
class SceneLine:
    index: int
    name: str
    text: str
    is_user: bool
    avatar: str = ""  # `original_avatar` of a group member's message


@dataclass(frozen=True)
class Scene:
    """The messages of one range as the model reads them, with who wrote the chat."""

    range: SceneRange
    lines: tuple[SceneLine, ...]
    chat_id: str
    character: str
    user: str
    hidden_skipped: int = 0

    @property
    def message_count(self) -> int:
        return len(self.lines)

    @property
    def speakers(self) -> list[str]:
        """The names of the characters (not the user) who wrote in the scene, in order."""
        return list(dict.fromkeys(line.name for line in self.lines if not line.is_user))

    def transcript(self) -> str:
        return "\n".join(f"{line.name}: {line.text}" for line in self.lines)


def compile_scene(
    chat: Chat,
    scene_range: SceneRange,
    *,
    chat_id: str,
    character: str,
    user: str,
    include_hidden: bool = False,
) -> Scene:
    """The scene's messages (hidden ones left out unless asked for); empty messages skipped."""
    count = len(chat.messages)
    if scene_range.last >= count:
        raise SceneError(
            f"message range {scene_range} is outside the chat (messages 0-{count - 1})"
            if count
            else "the chat has no messages"
        )
    lines: list[SceneLine] = []
    hidden = 0
    for index in range(scene_range.first, scene_range.last + 1):
        message = chat.messages[index]
        if message.is_hidden and not include_hidden:
            hidden += 1
            continue
        text = message.mes.replace("\r\n", "\n").strip()
        if not text:
            continue
        avatar = message.data.get("original_avatar")
        lines.append(
            SceneLine(
                index,
                message.name.strip() or "Unknown",
                text,
                message.is_user,
                avatar.strip() if isinstance(avatar, str) else "",
            )
        )
    if not lines:
        raise SceneError(
            f"no visible messages in range {scene_range}"
            + (f" ({hidden} hidden; books.include_hidden shows them)" if hidden else "")
        )
    return Scene(scene_range, tuple(lines), chat_id, character, user, hidden)


def check_overlap(
    scene_range: SceneRange,
    ranges: Iterable[tuple[SceneRange, str]],
    *,
    book: str,
) -> None:
    """Refuse a range overlapping any of ``ranges`` (range, title) of the same chat in a book."""
    for existing, title in ranges:
        if scene_range.overlaps(existing):
            raise OverlapError(
                f"messages {scene_range} overlap {title!r} (messages {existing}) in {book}; "
                "choose another range, or allow overlaps (books.allow_overlap)"
            )
