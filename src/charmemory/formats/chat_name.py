"""Chat file names: `Name - 2026-02-15@10h00m00s123ms.jsonl` and the older forms.

SillyTavern names a new chat `<character> - <humanized stamp>` from the browser's
local clock and stores it as `sanitize(name + ".jsonl")` (the `sanitize-filename`
package). Over time the stamp went from `2023-6-19 @14h 20m 05s 123ms` to
`2023-6-19@14h20m05s`, then zero-padded `2024-07-05@14h20m05s`, then with
milliseconds. The part before ` - ` is not always a character name: branches are
`Branch #12 - <stamp>`, checkpoints `<checkpoint name> - <stamp>`, imports end in
` imported`, group chats are a bare stamp, and TavernAI-era chats a bare epoch in
milliseconds.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import NamedTuple

from charmemory.formats.send_date import (
    HUMANIZED_STAMP,
    epoch_ms_to_datetime,
    format_humanized,
    humanized_match_to_datetime,
)

CHAT_EXTENSION = ".jsonl"

# sanitize-filename's rules, in its order; each match is removed.
_ILLEGAL = re.compile(r'[/?<>\\:*|"]')
_CONTROL = re.compile(r"[\x00-\x1f\x80-\x9f]")
_RESERVED = re.compile(r"^\.+$")
_WINDOWS_RESERVED = re.compile(r"^(con|prn|aux|nul|com[0-9]|lpt[0-9])(\..*)?$", re.IGNORECASE)
_WINDOWS_TRAILING = re.compile(r"[. ]+$")
_MAX_NAME_BYTES = 255

# The label is greedy so a name that itself contains " - " keeps it: the stamp is
# the last " - <stamp>" in the name. Anything after the stamp must start with a space.
_LABELLED = re.compile(rf"(?:(?P<label>.*) - )?{HUMANIZED_STAMP.pattern}(?: .*)?", re.DOTALL)
_EPOCH_NAME = re.compile(r"\d{10,}")


class ChatFileName(NamedTuple):
    """What a chat file name says: the label before the stamp and the stamp's time.

    `character` is the character name for ordinary chats, but a branch or
    checkpoint label for those, and empty for a bare stamp. `when` is naive local
    wall-clock time for humanized stamps, aware UTC for epoch names, None when the
    name carries no stamp (a renamed chat).
    """

    character: str
    when: datetime | None


def chat_file_name(character_name: str, when: datetime) -> str:
    """The file name SillyTavern gives a new chat of `character_name` started at `when`.

    The stamp shows `when`'s own wall-clock fields (pass local time to match what
    SillyTavern writes); the result is sanitized exactly as SillyTavern's server does.
    """
    return sanitize_file_name(f"{character_name} - {format_humanized(when)}{CHAT_EXTENSION}")


def parse_chat_file_name(name: str) -> ChatFileName:
    """Split a chat file name (with or without `.jsonl`) into its label and time."""
    stem = name.removesuffix(CHAT_EXTENSION)
    if _EPOCH_NAME.fullmatch(stem):
        return ChatFileName("", epoch_ms_to_datetime(int(stem)))
    match = _LABELLED.fullmatch(stem)
    if match is None:
        return ChatFileName(stem, None)
    return ChatFileName(match["label"] or "", humanized_match_to_datetime(match))


def sanitize_file_name(name: str) -> str:
    """`sanitize-filename` as SillyTavern calls it: unsafe characters removed, 255 bytes max.

    Like the original, the byte limit applies to the whole name, extension included.
    """
    for pattern in (_ILLEGAL, _CONTROL, _RESERVED, _WINDOWS_RESERVED, _WINDOWS_TRAILING):
        name = pattern.sub("", name)
    return _truncate_utf8(name, _MAX_NAME_BYTES)


def _truncate_utf8(text: str, limit: int) -> str:
    # Never cut inside a character; a lone surrogate counts three bytes, as in
    # truncate-utf8-bytes.
    size = 0
    for index, char in enumerate(text):
        size += len(char.encode("utf-8", "surrogatepass"))
        if size > limit:
            return text[:index]
    return text
