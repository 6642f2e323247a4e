"""A narrator chat's branch: its cast moves to the copies of the members' books.

A branch copies every memory book its chat writes to (`core.books.branching`);
in a narrator chat in manual mode that is the omniscient book and every cast
member's book, retired members' included, all with one branch number. The
branch's cast then names the copies. When copying fails, the branch gets
narrator mode turned off, so it never writes into its parent's books.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from charmemory.core.narrator.mode import narrator_of, write_config
from charmemory.formats.chat import ChatHeader


def cast_books(header: ChatHeader) -> list[str]:
    """Every cast member's book, retired members' included."""
    return list(dict.fromkeys(member.book for member in narrator_of(header).config.members))


def rebind_cast(header: ChatHeader, copies: Mapping[str, str]) -> None:
    """Point each member at the copy of their book."""
    config = narrator_of(header).config
    if config.members:
        members = tuple(replace(m, book=copies.get(m.book, m.book)) for m in config.members)
        write_config(header, replace(config, members=members))


def turn_off(header: ChatHeader) -> None:
    """Narrator mode off (the books of a branch whose copy failed are its parent's)."""
    config = narrator_of(header).config
    if config.enabled:
        write_config(header, replace(config, enabled=False))
