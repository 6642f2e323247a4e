"""The commands a person types in a chat's input box instead of a message."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from charmemory.errors import CharMemoryError

CommandName = Literal[
    "extract-memories",
    "consolidate-memories",
    "charmemory-debug",
    "hide",
    "unhide",
    "branch",
    "swipe",
    "continue",
    "del",
]

# name -> (what it takes, what it does), in the order the help lists them.
COMMANDS: dict[CommandName, tuple[str, str]] = {
    "extract-memories": ("", "extract memories from the new messages now"),
    "consolidate-memories": ("", "preview a consolidation of the memories"),
    "charmemory-debug": ("", "show what the last reply was given, and why"),
    "hide": ("A-B", "hide messages A to B from the prompt"),
    "unhide": ("A-B", "show hidden messages A to B again"),
    "branch": ("[I]", "a new chat holding messages 0 to I (default: all)"),
    "swipe": ("N", "show swipe N of the last reply (1-based)"),
    "continue": ("", "continue the last reply"),
    "del": ("N", "delete the last N messages"),
}
_RANGE = re.compile(r"(\d+)(?:\s*-\s*(\d+))?")


class UnknownCommandError(CharMemoryError):
    pass


@dataclass(frozen=True)
class Command:
    name: CommandName
    first: int | None = None  # a message index, count or swipe number, as the command takes
    last: int | None = None  # the end of a range (inclusive)


def is_command(text: str) -> bool:
    return text.lstrip().startswith("/")


def help_text() -> str:
    return "commands: " + "; ".join(
        f"/{name}{' ' + takes if takes else ''} ({what})"
        for name, (takes, what) in COMMANDS.items()
    )


def parse_command(text: str) -> Command:
    """A command typed in the input box; an unknown one is answered with the list."""
    word, _, rest = text.strip().removeprefix("/").partition(" ")
    rest = rest.strip()
    for name in COMMANDS:
        if word.lower() == name:
            return _with_arguments(name, rest)
    raise UnknownCommandError(f"unknown command /{word}; {help_text()}")


def _with_arguments(name: CommandName, rest: str) -> Command:
    takes = COMMANDS[name][0]
    if not takes:
        if rest:
            raise CharMemoryError(f"/{name} takes nothing after it")
        return Command(name)
    if not rest:
        if takes.startswith("["):
            return Command(name)
        raise CharMemoryError(f"/{name} needs {takes}, e.g. /{name} {_example(takes)}")
    found = _RANGE.fullmatch(rest)
    if found is None or (found[2] is not None and takes != "A-B"):
        raise CharMemoryError(f"/{name} needs {takes}, e.g. /{name} {_example(takes)}")
    first = int(found[1])
    last = int(found[2]) if found[2] is not None else (first if takes == "A-B" else None)
    if name in ("swipe", "del") and first < 1:
        raise CharMemoryError(f"/{name} needs a number from 1")
    return Command(name, first, last)


def _example(takes: str) -> str:
    return "4-9" if takes == "A-B" else "2"
