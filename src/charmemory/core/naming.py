"""Names of the files charmemory writes, derived the way the reference extension does.

A memory file is `<name>-memories.md`, where every character outside
`[A-Za-z0-9_-]` becomes `_`; per-chat mode adds `-chat<sanitised chat id>`.
A per-character override may name the file directly (per-chat mode adds the
chat to it). Nothing derived here can leave the directory it is meant for.
"""

from __future__ import annotations

import re

from charmemory.errors import UnsafePathError

_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")
# Names Windows refuses and that make a file hard to reach from a shell.
_OVERRIDE_FORBIDDEN = re.compile(r'[\x00-\x1f<>:"/\\|?*]')


def sanitize(name: str) -> str:
    """Every character outside `[A-Za-z0-9_-]` becomes `_` (as the reference does)."""
    return _UNSAFE.sub("_", name)


def memory_file_name(
    character: str, *, chat_id: str | None = None, override: str | None = None
) -> str:
    """The memory file for a character (or one of its chats in per-chat mode).

    An override names the character's file; in per-chat mode each chat's file
    adds its chat to the override's name, so chats still keep apart.
    """
    if override:
        name = checked_file_name(override, default_suffix=".md")
        if chat_id is None:
            return name
        stem, dot, suffix = name.rpartition(".")
        return f"{stem or suffix}-chat{sanitize(chat_id)}{dot + suffix if stem else ''}"
    if not character.strip():
        raise UnsafePathError("a character needs a name before it can have a memory file")
    stem = sanitize(character)
    if chat_id is not None:
        stem = f"{stem}-chat{sanitize(chat_id)}"
    return f"{stem}-memories.md"


def checked_file_name(name: str, *, default_suffix: str = "") -> str:
    """A user-given file name, refused if it could point anywhere but one plain file."""
    cleaned = name.strip()
    if (
        not cleaned
        or cleaned in {".", ".."}
        or cleaned.startswith(".")
        or _OVERRIDE_FORBIDDEN.search(cleaned)
    ):
        raise UnsafePathError(
            f"{name!r} is not a plain file name (no folders, no leading dot, "
            'none of < > : " / \\ | ? *)'
        )
    if default_suffix and "." not in cleaned:
        cleaned += default_suffix
    return cleaned
