"""The Author's Note: a chat's own note, kept in `chat_metadata` under SillyTavern's keys.

`note_prompt` (the text), `note_interval` (insert it every N user messages;
0 never, 1 always), `note_position` (0 in the prompt after the main prompt,
1 in the chat, 2 before the main prompt), `note_depth` and `note_role`
(0 system, 1 user, 2 assistant). When the note is due, World Info entries
placed at its top and bottom join it, even if the note itself is empty; when
it is not due, those entries are dropped, as in SillyTavern.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from charmemory.core.injection import Position
from charmemory.core.world_info.entries import ROLES, Role
from charmemory.formats.chat import Chat

PROMPT_KEY = "note_prompt"
INTERVAL_KEY = "note_interval"
POSITION_KEY = "note_position"
DEPTH_KEY = "note_depth"
ROLE_KEY = "note_role"
_POSITIONS: tuple[Position, ...] = ("in_prompt", "in_chat", "before_prompt")


@dataclass(frozen=True)
class AuthorsNote:
    text: str = ""
    interval: int = 1
    position: Position = "in_chat"
    depth: int = 4
    role: Role = "system"


def authors_note_from_metadata(
    metadata: Mapping[str, Any], defaults: AuthorsNote = AuthorsNote()
) -> AuthorsNote:
    """The chat's note; a key missing from the metadata takes its value from `defaults`."""
    position = _whole(metadata.get(POSITION_KEY))
    role = _whole(metadata.get(ROLE_KEY))
    interval = _whole(metadata.get(INTERVAL_KEY))
    depth = _whole(metadata.get(DEPTH_KEY))
    text = metadata.get(PROMPT_KEY)
    return AuthorsNote(
        text=text if isinstance(text, str) else defaults.text,
        interval=defaults.interval if interval is None else interval,
        position=_POSITIONS[position] if position in (0, 1, 2) else defaults.position,
        depth=defaults.depth if depth is None else depth,
        role=ROLES[role] if role in (0, 1, 2) else defaults.role,
    )


def authors_note_due(note: AuthorsNote, chat: Chat) -> bool:
    """Whether the note goes into this generation, counting the chat's user messages."""
    if note.interval <= 0:
        return False
    sent = 1 if note.interval == 1 else sum(1 for m in chat.messages if m.is_user)
    if sent <= 0:
        return False
    remaining = sent % note.interval if sent >= note.interval else note.interval - sent
    return remaining == 0


def authors_note_text(note: AuthorsNote, top: Sequence[str], bottom: Sequence[str]) -> str:
    """The note with World Info entries placed at its top and bottom."""
    text = "\n".join(top) + "\n" + note.text + "\n" + "\n".join(bottom)
    text = text.removeprefix("\n")
    return text.removesuffix("\n")


def _whole(value: Any) -> int | None:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return int(value)
    return None
