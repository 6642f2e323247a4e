"""Inclusion groups: of the entries of one group found in a scan pass, one goes in.

`group` is a comma-separated list of group names. Per group, in this order:

1. if any member is sticky, the sticky members stay and the others lose;
2. with group scoring (`useGroupScoring`, or the default setting), members
   whose key score is below the best score lose (a score counts the primary
   keys found, plus the secondary ones under AND ANY, or under AND ALL when
   all are found);
3. a group an entry activated in an earlier pass already holds loses all of
   its members;
4. otherwise, among two or more members left, the highest-`order` member
   with `groupOverride` ("prioritize inclusion") wins, or else a roll weighted
   by `groupWeight` picks the winner.

An entry in several groups that loses one of them is out of the others too.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Collection, Sequence

from charmemory.core.world_info.catalog import CompiledEntry


def filter_inclusion_groups(
    found: Sequence[int],
    entries: Sequence[CompiledEntry],
    *,
    taken: Collection[str],
    sticky: Collection[int],
    score: Callable[[int], int],
    use_group_scoring: bool,
    rng: random.Random,
) -> tuple[list[int], dict[int, str]]:
    """The positions kept (in their order) and, for each loser, why it lost."""
    groups: dict[str, list[int]] = {}
    for position in found:
        for name in entries[position].entry.group_names:
            groups.setdefault(name, []).append(position)
    removed: dict[int, str] = {}
    if not groups:
        return list(found), removed

    def lose(position: int, reason: str) -> None:
        removed.setdefault(position, reason)

    sticky_groups = set()
    for name, members in groups.items():
        stuck = [position for position in members if position in sticky]
        if stuck:
            sticky_groups.add(name)
            winner = entries[stuck[0]].entry.label
            for position in members:
                if position not in stuck:
                    lose(position, f"lost inclusion group '{name}' to the sticky entry {winner}")

    for name, members in groups.items():
        if name in sticky_groups:
            continue
        scored = [entries[position].entry.use_group_scoring for position in members]
        if not use_group_scoring and not any(scored):
            continue
        alive = [position for position in members if position not in removed]
        scores = {position: score(position) for position in alive}
        best = max(scores.values(), default=0)
        for position, own in zip(members, scored, strict=True):
            uses_scoring = use_group_scoring if own is None else own
            if position in scores and uses_scoring and scores[position] < best:
                lose(
                    position,
                    f"lost inclusion group '{name}': key score {scores[position]} < {best}",
                )

    for name, members in groups.items():
        if name in sticky_groups:
            continue
        alive = [position for position in members if position not in removed]
        if name in taken:
            for position in alive:
                lose(position, f"inclusion group '{name}' already has an active entry")
            continue
        if len(alive) <= 1:
            continue
        winner, how = _winner(alive, entries, rng)
        label = entries[winner].entry.label
        for position in alive:
            if position != winner:
                lose(position, f"lost inclusion group '{name}' to {label} ({how})")

    return [position for position in found if position not in removed], removed


def _winner(
    alive: list[int], entries: Sequence[CompiledEntry], rng: random.Random
) -> tuple[int, str]:
    prioritized = [position for position in alive if entries[position].entry.group_override]
    if prioritized:
        best = max(entries[position].entry.order for position in prioritized)
        first = next(p for p in prioritized if entries[p].entry.order == best)
        return first, "prioritized"
    weights = [entries[position].entry.group_weight for position in alive]
    roll = rng.random() * sum(weights)
    reached = 0.0
    for position, weight in zip(alive, weights, strict=True):
        reached += weight
        if roll <= reached:
            return position, f"weighted roll {roll:.1f} of {sum(weights):g}"
    return alive[-1], f"weighted roll {roll:.1f} of {sum(weights):g}"
