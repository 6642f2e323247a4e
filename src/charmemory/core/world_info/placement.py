"""Where activated entries go in the prompt, by `position`, ordered by `order`.

Positions: 0 before the character's description, 1 after it, 2 and 3 at the
top and bottom of the Author's Note, 4 in the chat at `depth` with `role`,
5 and 6 before and after the dialogue examples, 7 into the outlet
`outletName` (read with `{{outlet::Name}}`). Within a position, entries run
from the lowest `order` to the highest, so the highest order sits closest to
the end of the prompt; equal orders keep the later-activated entry first, as
SillyTavern's stable sort followed by `unshift` does. Two exceptions follow
SillyTavern's code: an outlet lists its entries from the highest order down,
and entries placed before the examples are each put at the very top, so they
too end up highest order first. Entries with empty content are left out, and
so are outlet entries without an outlet name and entries with an unknown
position (they still count as activated).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from charmemory.core.world_info.entries import (
    AFTER,
    AN_BOTTOM,
    AN_TOP,
    AT_DEPTH,
    BEFORE,
    EXAMPLES_BOTTOM,
    EXAMPLES_TOP,
    OUTLET,
    LoreEntry,
    Role,
)


@dataclass(frozen=True)
class DepthInjection:
    """Entries at one depth and role, joined by newlines, ready to go into the chat."""

    depth: int
    role: Role
    text: str


@dataclass(frozen=True)
class WorldInfoPlacement:
    before: str = ""  # "World Info (before)": before the character's description
    after: str = ""  # "World Info (after)": after the scenario
    examples_before: tuple[str, ...] = ()  # example dialogue blocks, in prompt order
    examples_after: tuple[str, ...] = ()
    authors_note_top: tuple[str, ...] = ()
    authors_note_bottom: tuple[str, ...] = ()
    at_depth: tuple[DepthInjection, ...] = ()
    outlets: Mapping[str, str] = field(default_factory=dict)
    unplaced: tuple[tuple[str, int], ...] = ()  # activated, but placed nowhere


def place_entries(activated: Iterable[tuple[LoreEntry, str]]) -> WorldInfoPlacement:
    """Place (entry, content with macros substituted) pairs, given in activation order."""
    lists: dict[int, list[str]] = {position: [] for position in range(OUTLET)}
    depths: dict[tuple[int, Role], list[str]] = {}
    outlets: dict[str, list[str]] = {}
    unplaced: list[tuple[str, int]] = []
    for entry, content in sorted(activated, key=lambda pair: -pair[0].order):
        if not content:
            continue
        if entry.position == AT_DEPTH:
            depths.setdefault((entry.depth, entry.role), []).append(content)
        elif entry.position == OUTLET and entry.outlet_name:
            outlets.setdefault(entry.outlet_name, []).append(content)
        elif entry.position in lists:
            lists[entry.position].append(content)
        else:
            unplaced.append(entry.key)
    ascending = {position: texts[::-1] for position, texts in lists.items()}
    return WorldInfoPlacement(
        before="\n".join(ascending[BEFORE]),
        after="\n".join(ascending[AFTER]),
        examples_before=tuple(lists[EXAMPLES_TOP]),
        examples_after=tuple(ascending[EXAMPLES_BOTTOM]),
        authors_note_top=tuple(ascending[AN_TOP]),
        authors_note_bottom=tuple(ascending[AN_BOTTOM]),
        at_depth=tuple(
            DepthInjection(depth, role, "\n".join(texts[::-1]))
            for (depth, role), texts in depths.items()
        ),
        outlets={name: "\n".join(texts) for name, texts in outlets.items()},
        unplaced=tuple(unplaced),
    )
