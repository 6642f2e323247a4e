"""Names of the files charmemory writes, derived the way the reference extension does.

A memory file is `<name>-memories.md`, where every character outside
`[A-Za-z0-9_-]` becomes `_`; per-chat mode adds `-chat<sanitised chat id>`.
A per-character override may name the file directly (per-chat mode adds the
chat to it). Nothing derived here can leave the directory it is meant for.

Sanitising maps many names to one (`Ann B`, `Ann_B`, `a/b` and `a\\b` all become
`Ann_B` or `a_b`), and file systems that ignore case make `Ann` and `ann` one
file. Two characters must never share memories, so when another character of
the workspace has a name that maps to the same stem (case ignored), each of them
gets a short hash of its own name (`Ann_B-3f2a1c-memories.md`): the same names
give the same files whatever order the cards came in, and none keeps the plain
name another one may have written to.

Filesystems take names of at most 255 bytes, and a write needs room for its
temporary file (`.<name>.<pid>.tmp`) beside the target. A derived name longer
than `MAX_NAME_BYTES` keeps its beginning and its suffix and gets a short hash
of the whole name in between, so it stays the same on every run and two long
names that differ only at the end stay apart. An override longer than that is
refused: a person chose it, so it is not rewritten behind their back.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable

from charmemory.errors import UnsafePathError

MAX_NAME_BYTES = 240  # 255, less the temporary file's `.` + `.<pid>.tmp`
_HASH_CHARS = 10

_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")
# Names Windows refuses and that make a file hard to reach from a shell.
_OVERRIDE_FORBIDDEN = re.compile(r'[\x00-\x1f<>:"/\\|?*]')


def sanitize(name: str) -> str:
    """Every character outside `[A-Za-z0-9_-]` becomes `_` (as the reference does)."""
    return _UNSAFE.sub("_", name)


def sharing_a_stem(character: str, names: Iterable[str]) -> list[str]:
    """The other names among ``names`` whose memory files would have ``character``'s name."""
    key = sanitize(character).casefold()
    return sorted(
        {name for name in names if name != character and sanitize(name).casefold() == key}
    )


def memory_file_stem(character: str, names: Iterable[str] = ()) -> str:
    """What ``character``'s memory files are named after, unique among ``names`` (the
    workspace's characters): its sanitised name, plus a hash of it when others share that."""
    stem = sanitize(character)
    if not sharing_a_stem(character, names):
        return stem
    digest = hashlib.sha1(character.encode("utf-8"), usedforsecurity=False).hexdigest()
    return f"{stem}-{digest[:6]}"


def memory_file_name(
    character: str,
    *,
    chat_id: str | None = None,
    override: str | None = None,
    names: Iterable[str] = (),
) -> str:
    """The memory file for a character (or one of its chats in per-chat mode).

    An override names the character's file; in per-chat mode each chat's file
    adds its chat to the override's name, so chats still keep apart. ``names``
    are the workspace's characters (see `memory_file_stem`).
    """
    if override:
        name = checked_file_name(override, default_suffix=".md")
        if chat_id is None:
            return name
        stem, dot, suffix = name.rpartition(".")
        if not stem:
            return fitted(f"{suffix}-chat{sanitize(chat_id)}")
        return fitted(f"{stem}-chat{sanitize(chat_id)}", dot + suffix)
    if not character.strip():
        raise UnsafePathError("a character needs a name before it can have a memory file")
    stem = memory_file_stem(character, names)
    if chat_id is not None:
        stem = f"{stem}-chat{sanitize(chat_id)}"
    return fitted(stem, "-memories.md")


def fitted(stem: str, suffix: str = "") -> str:
    """`stem + suffix`, its stem shortened with a hash of it when the name is too long."""
    name = stem + suffix
    if len(name.encode("utf-8")) <= MAX_NAME_BYTES:
        return name
    tag = "-" + hashlib.sha256(stem.encode("utf-8")).hexdigest()[:_HASH_CHARS]
    room = MAX_NAME_BYTES - len((tag + suffix).encode("utf-8"))
    # Cut on a character boundary, so an override's multi-byte letter is never split.
    kept = stem.encode("utf-8")[:room].decode("utf-8", errors="ignore")
    return kept + tag + suffix


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
    size = len(cleaned.encode("utf-8"))
    if size > MAX_NAME_BYTES:
        raise UnsafePathError(
            f"{cleaned[:40]!r}… is too long for a file name ({size} bytes in UTF-8; "
            f"at most {MAX_NAME_BYTES})"
        )
    return cleaned
