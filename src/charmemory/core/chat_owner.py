"""Whose chat a SillyTavern chat file is.

Since 1.15 SillyTavern writes `"character_name":"unused"` into every chat header,
so the owner must come from elsewhere. The clues, strongest first:

1. the name a person gave (`--character`): always wins;
2. the folder, when the file sits in a SillyTavern `chats/<card stem>/` folder:
   SillyTavern itself shows the chat under that card, so it wins over what the
   file says;
3. what the file says, weighed together: its file name (`Seraphina - <stamp>`;
   for a branch or checkpoint, the name of the chat it branched from), the
   names on its character messages, and the header's `character_name`.

Each clue counts only when it names a character of the workspace. The clues of
(3) must agree: the owner is the one character every such clue allows, and the
first clue that names it alone is reported as the source. A renamed file whose
messages are by Seraphina is hers; a file named `Mira - <stamp>` whose messages
are all by Seraphina is a conflict and is refused. A group chat (SillyTavern's
`group chats/` folder, a bare-stamp name, no header line, or messages by several
characters) has no single owner and is refused too. Every refusal is one line
that says what was found and to pass `--character NAME`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import PurePath
from typing import Generic, Literal

from charmemory.core.character_match import (
    C,
    NamedCharacter,
    find_character,
    known_names,
    matching_characters,
)
from charmemory.errors import ChatOwnerError
from charmemory.formats.chat import Chat
from charmemory.formats.chat_name import character_of_chat_name, is_group_chat_name

OwnerSource = Literal["given", "folder", "file name", "branch origin", "messages", "header"]

_SOURCE_PHRASES: dict[OwnerSource, str] = {
    "given": "as given",
    "folder": "from its chats folder",
    "file name": "from the file name",
    "branch origin": "from the name of the chat it branched from",
    "messages": "from its messages",
    "header": "from its header",
}
_CHATS_FOLDER = "chats"
_GROUP_CHATS_FOLDER = "group chats"
_PASS = "pass --character NAME"
_GROUP_PASS = (
    "a group chat has no single owner: pass --group GROUP to import it into a group, "
    "or --character NAME to import it as that character's chat"
)
_NAMES_SHOWN = 5


@dataclass(frozen=True)
class ChatOwner(Generic[C]):
    """The character a chat belongs to, and which clue decided it."""

    character: C
    source: OwnerSource

    def describe(self) -> str:
        """`Seraphina (from the file name)`: what to show the person."""
        return f"{self.character.name} ({_SOURCE_PHRASES[self.source]})"


@dataclass(frozen=True)
class _Clue(Generic[C]):
    source: OwnerSource
    said: tuple[str, ...]  # the names the clue gives
    matches: tuple[C, ...]  # the known characters they stand for, each once
    naming: int  # how many of `said` stand for someone known

    def describe(self) -> str:
        names = _quoted(self.said)
        return {
            "folder": f"its folder is {names}",
            "file name": f"its file name says {names}",
            "branch origin": f"it was branched from a chat of {names}",
            "messages": f"its messages are by {names}",
            "header": f"its header says {names}",
        }[self.source]


def resolve_chat_owner(
    chat: Chat,
    known: Sequence[C],
    *,
    path: PurePath | str | None = None,
    explicit: str | None = None,
) -> ChatOwner[C]:
    """Whose chat `chat` is, among the `known` characters.

    `path` is where the chat file is (absolute, so its folders are seen); only its
    parts are read, never the filesystem. `explicit` is the name a person gave.
    Raises NotFoundError when `explicit` names no known character (or several),
    ChatOwnerError when the chat's own clues find no one, disagree, or show a
    group chat.
    """
    if explicit is not None:
        return ChatOwner(find_character(explicit, known), "given")
    where = PurePath(path) if path is not None else None
    prefix = f"{where.name}: " if where is not None and where.name else ""
    folder = _folder_clue(where, known)
    if folder is not None and len(folder.matches) == 1:
        return ChatOwner(folder.matches[0], "folder")
    group = _group_chat_reason(chat, where)
    if group is not None:
        raise ChatOwnerError(f"{prefix}this is a SillyTavern group chat ({group}); {_GROUP_PASS}")
    clues = [
        clue
        for clue in (folder, _name_clue(chat, where, known), _message_clue(chat, known))
        if clue is not None
    ]
    header = chat.header.named_character
    if header is not None:
        clues.append(_clue("header", [header], known))
    return _decide(clues, known, prefix)


def _decide(clues: list[_Clue[C]], known: Sequence[C], prefix: str) -> ChatOwner[C]:
    telling = [clue for clue in clues if clue.matches]
    if not telling:
        found = "; ".join(clue.describe() for clue in clues) or "nothing names its character"
        raise ChatOwnerError(
            f"{prefix}cannot tell whose chat this is ({found}), and none of that names a "
            f"character here; {_PASS} (known: {known_names(known)})"
        )
    allowed = [c for c in telling[0].matches if all(_among(c, t.matches) for t in telling[1:])]
    if len(allowed) == 1:
        owner = allowed[0]
        source = next(
            (t.source for t in telling if len(t.matches) == 1),
            telling[0].source,
        )
        return ChatOwner(owner, source)
    if not allowed:
        found = "; ".join(clue.describe() for clue in telling)
        raise ChatOwnerError(f"{prefix}the clues to whose chat this is disagree: {found}; {_PASS}")
    several = next((t for t in telling if t.source == "messages" and t.naming > 1), None)
    if several is not None:
        raise ChatOwnerError(
            f"{prefix}its messages are by several characters ({_quoted(several.said)}), as "
            f"in a group chat; {_GROUP_PASS}"
        )
    stems = ", ".join(c.stem for c in allowed)
    found = "; ".join(clue.describe() for clue in telling)
    raise ChatOwnerError(
        f"{prefix}{found}, which could be any of several characters ({stems}); "
        "pass --character with the card file name"
    )


def _folder_clue(where: PurePath | None, known: Sequence[C]) -> _Clue[C] | None:
    if where is None or where.parent.parent.name != _CHATS_FOLDER or not where.parent.name:
        return None
    return _clue("folder", [where.parent.name], known)


def _name_clue(chat: Chat, where: PurePath | None, known: Sequence[C]) -> _Clue[C] | None:
    origin = _main_chat(chat)
    if origin is not None:
        source: OwnerSource = "branch origin"
        name = character_of_chat_name(origin)
    elif where is not None:
        source = "file name"
        name = character_of_chat_name(where.name)
    else:
        return None
    return _clue(source, [name], known) if name is not None else None


def _message_clue(chat: Chat, known: Sequence[C]) -> _Clue[C] | None:
    speakers = {m.name: None for m in chat.messages if m.role == "character" and m.name.strip()}
    return _clue("messages", list(speakers), known) if speakers else None


def _clue(source: OwnerSource, said: list[str], known: Sequence[C]) -> _Clue[C]:
    matches: list[C] = []
    naming = 0
    for name in said:
        hits = matching_characters(name, known)
        naming += bool(hits)
        matches.extend(c for c in hits if not _among(c, matches))
    return _Clue(source, tuple(said), tuple(matches), naming)


def _group_chat_reason(chat: Chat, where: PurePath | None) -> str | None:
    if where is not None and where.parent.name == _GROUP_CHATS_FOLDER:
        return f"it is in a {_GROUP_CHATS_FOLDER!r} folder"
    if not chat.header.present and chat.messages:
        return "it starts without a header line, as older group chats do"
    if where is not None and is_group_chat_name(where.name):
        return "its file name is a bare date, as group chats' are"
    origin = _main_chat(chat)
    if origin is not None and is_group_chat_name(origin):
        return f"it was branched from the group chat {origin!r}"
    return None


def _main_chat(chat: Chat) -> str | None:
    """The chat a branch or checkpoint was made from (SillyTavern's `main_chat`)."""
    value = chat.header.chat_metadata.get("main_chat")
    return value if isinstance(value, str) and value.strip() else None


def _among(character: NamedCharacter, characters: Sequence[NamedCharacter]) -> bool:
    # Identity, not equality: characters may hold unhashable card data.
    return any(character is other for other in characters)


def _quoted(names: Sequence[str]) -> str:
    shown = ", ".join(repr(name) for name in names[:_NAMES_SHOWN])
    hidden = len(names) - _NAMES_SHOWN
    return f"{shown} and {hidden} more" if hidden > 0 else shown
