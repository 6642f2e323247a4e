"""Which of a workspace's characters a name stands for.

A character is known by its card name and its card file stem (the card's file
name without extension, also the name of its SillyTavern chat folder). A name
given by a person, a folder, a chat file name or a message is matched by the
first rule that finds anyone: the stem exactly, the card name exactly, either
ignoring case, and last the card name as chat file names spell it (SillyTavern
drops characters like `"` and `/` from file names).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol, TypeVar

from charmemory.errors import NotFoundError
from charmemory.formats.chat_name import chat_label


class NamedCharacter(Protocol):
    """What matching needs of a character: its card name and its card file stem."""

    @property
    def name(self) -> str: ...

    @property
    def stem(self) -> str: ...


C = TypeVar("C", bound=NamedCharacter)


def matching_characters(name: str, known: Sequence[C]) -> list[C]:
    """The known characters `name` stands for, by the first rule that finds any.

    More than one means the name is ambiguous (two cards of one name); none means
    it names no one here. Surrounding spaces are ignored; a blank name matches no one.
    """
    wanted = name.strip()
    folded = wanted.casefold()
    if not folded:
        return []
    rules: tuple[Callable[[C], bool], ...] = (
        lambda c: c.stem == wanted,
        lambda c: c.name == wanted,
        lambda c: c.stem.casefold() == folded,
        lambda c: c.name.casefold() == folded,
        lambda c: chat_label(c.name).casefold() == folded,
    )
    for rule in rules:
        hits = [c for c in known if rule(c)]
        if hits:
            return hits
    return []


def find_character(name: str, known: Sequence[C]) -> C:
    """The one known character `name` stands for.

    Raises NotFoundError when it names no one (listing who is known) or several
    (listing their card file stems, which tell them apart).
    """
    hits = matching_characters(name, known)
    if len(hits) == 1:
        return hits[0]
    if hits:
        stems = ", ".join(c.stem for c in hits)
        raise NotFoundError(f"{name!r} names several characters ({stems}); use the card file name")
    raise NotFoundError(f"unknown character {name!r}; known: {known_names(known)}")


def known_names(known: Sequence[NamedCharacter]) -> str:
    """The known characters' names for a message, or how to add the first one."""
    return ", ".join(c.name for c in known) or "none yet (charmemory import CARD)"
