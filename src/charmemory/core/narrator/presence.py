"""The narrator presence grid: the omniscient book's scenes, in order, against the cast,
with the copy each member's book holds of each scene. It shows the knowledge boundary:
a member knows a scene only through the copy in their own book."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from charmemory.core.books.entry import link_of, memories
from charmemory.core.narrator.cast import CastMember, NarratorConfig
from charmemory.formats.lorebook import LorebookEntry


@dataclass(frozen=True)
class PresenceScene:
    uid: int  # the canonical entry's, in the omniscient book
    title: str
    copies: Mapping[str, int]  # member id -> uid of the copy in that member's book


@dataclass(frozen=True)
class Presence:
    members: tuple[CastMember, ...]  # every member, retired ones included
    scenes: tuple[PresenceScene, ...]


def presence(
    config: NarratorConfig,
    omniscient: str,
    scenes: Sequence[LorebookEntry],
    books: Mapping[str, Sequence[LorebookEntry]],
) -> Presence:
    """``scenes``: the omniscient book's entries; ``books``: each member book's entries."""
    copies: dict[str, dict[str, int]] = {}  # inclusion group -> member id -> copy uid
    for member in config.members:
        for entry in books.get(member.book, ()):
            link = link_of(entry)
            if link is not None and not link.canonical and link.canonical_book == omniscient:
                copies.setdefault(link.inclusion_group, {})[member.id] = entry.uid
    rows = []
    for entry in memories(scenes):
        link = link_of(entry)
        held = copies.get(link.inclusion_group, {}) if link is not None else {}
        rows.append(PresenceScene(entry.uid, entry.comment, dict(held)))
    return Presence(config.members, tuple(rows))
