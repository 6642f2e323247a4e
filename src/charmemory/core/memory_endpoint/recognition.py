"""Whose conversation a request on the shared base URL is.

Frontends keep one connection for all their characters, so the character is
read from the request itself: the name SillyTavern's default main prompt gives
("Write {{char}}'s next reply in a fictional chat between {{char}} and
{{user}}."), or a card description found in the system messages. Exactly one
character must be found; otherwise nobody is, and the reason says why.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from charmemory.core.character_match import matching_characters
from charmemory.ports import Character

MAIN_PROMPT = re.compile(
    r"Write (?P<name>.+?)'s next reply in a fictional chat between ",
    re.IGNORECASE,
)
_CHAR = re.compile(r"\{\{char\}\}|<BOT>", re.IGNORECASE)
_MACRO = re.compile(r"\{\{[^{}]*\}\}|<USER>", re.IGNORECASE)
# A description shorter than this (its literal text) is too common to tell anyone by.
MIN_DESCRIPTION_CHARS = 24


@dataclass(frozen=True)
class Recognition:
    character: Character | None
    reason: str  # how it was found, or why nobody was


def recognise(system_text: str, characters: Sequence[Character]) -> Recognition:
    """The one character the system messages name or describe (else None, with why)."""
    by_name: list[Character] = []
    named = MAIN_PROMPT.search(system_text)
    if named:
        by_name = matching_characters(named.group("name"), characters)
    by_description = [c for c in characters if description_in(c, system_text)]
    found = {c.card_path: c for c in [*by_name, *by_description]}
    if len(found) == 1:
        (character,) = found.values()
        how = "the main prompt names" if character in by_name else "the system prompt describes"
        return Recognition(character, f"{how} {character.name}")
    if found:
        names = ", ".join(sorted(c.name for c in found.values()))
        return Recognition(None, f"several characters match the request: {names}")
    if named:
        return Recognition(
            None,
            f"the main prompt names {named.group('name')!r}, who is not in the workspace "
            "(import the card with `charmemory import CARD`)",
        )
    return Recognition(
        None,
        "no character recognised: the system messages neither name one in SillyTavern's "
        "main prompt nor hold a known card description (use the per-character URL "
        "/characters/NAME/v1 or set server.default_character)",
    )


def description_in(character: Character, system_text: str) -> bool:
    """Whether the card's description, macros aside, is in the system text."""
    description = _CHAR.sub(lambda _: character.name, character.card.description)
    pieces = [piece.strip() for piece in _MACRO.split(description)]
    pieces = [piece for piece in pieces if piece]
    if sum(len(piece) for piece in pieces) < MIN_DESCRIPTION_CHARS:
        return False
    return all(piece in system_text for piece in pieces)
