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
# The labels SillyTavern gives branches and unnamed checkpoints.
_BOOKMARK_LABEL = re.compile(r"(?:Branch|Checkpoint) #\d+")
# Any time works: only the label of a built name is kept.
_SOME_TIME = datetime(2000, 1, 1)


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


def character_of_chat_name(name: str) -> str | None:
    """The character a chat file name (with or without `.jsonl`) names, or None.

    The label before the stamp names the character of an ordinary or imported chat;
    a renamed chat without a stamp is taken as named by its whole stem. Bare stamps
    (group chats, TavernAI-era epoch names) and the `Branch #N` / `Checkpoint #N`
    labels SillyTavern gives bookmarks name no one.
    """
    label = parse_chat_file_name(name).character.strip()
    if not label or _BOOKMARK_LABEL.fullmatch(label):
        return None
    return label


def is_group_chat_name(name: str) -> bool:
    """Whether the name is a bare humanized stamp: how SillyTavern names group chats.

    Solo chats always carry a label before the stamp; a bare epoch number is a
    TavernAI-era solo chat, not a group chat.
    """
    stem = name.removesuffix(CHAT_EXTENSION)
    return HUMANIZED_STAMP.fullmatch(stem) is not None


def chat_label(character_name: str) -> str:
    """The label SillyTavern's chat file names carry for a character of this name.

    It is the name less what `sanitize_file_name` removes, so `Dr. "Who"` chats
    are named `Dr. Who - <stamp>.jsonl`.
    """
    return parse_chat_file_name(chat_file_name(character_name, _SOME_TIME)).character


def chat_file_id(chat_name: str) -> str:
    """The id (file name without `.jsonl`) of the file SillyTavern saves a chat named so in.

    A card's `chat` field and a branch's `main_chat` hold the unsanitized name; the
    server stores the chat as `sanitize(name + ".jsonl")`.
    """
    return sanitize_file_name(chat_name + CHAT_EXTENSION).removesuffix(CHAT_EXTENSION)


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
