"""What is settled before scanning: entries that cannot activate, and the vector winners.

An entry cannot activate this generation, whatever the scan finds, when it is
disabled, when the generation type is not among its `triggers`, when its
character filter leaves this character out (by file name or by tag, or the
reverse in exclude mode), when its `delay` is not reached, when it is on
cooldown and not sticky, or when it carries `@@dont_activate` (and not
`@@activate`). Vectorized entries are ranked by the similarity the retrieval
index gave them; the top `vector_max_entries` activate without their keys.
"""

from __future__ import annotations

from collections.abc import Mapping

from charmemory.core.world_info.candidates import Candidates
from charmemory.core.world_info.explain import Decision, Outcome
from charmemory.core.world_info.scan import ScanContext
from charmemory.core.world_info.timed import TimedCheck


def set_aside(
    candidates: Candidates, scan: ScanContext, timed: TimedCheck, chat_length: int
) -> dict[int, Decision]:
    """The entries that cannot activate this generation, with the reason."""
    blocked: dict[int, Decision] = {}
    for position in candidates.conditional:
        reason = _reason(candidates, position, scan, timed, chat_length)
        if reason is not None:
            blocked[position] = reason
    for position in candidates.decorated:
        decorators = candidates.entries[position].entry.decorators
        if "@@dont_activate" in decorators and "@@activate" not in decorators:
            blocked.setdefault(position, Decision(Outcome.SUPPRESSED, "@@dont_activate decorator"))
    return blocked


def _reason(
    candidates: Candidates, position: int, scan: ScanContext, timed: TimedCheck, chat_length: int
) -> Decision | None:
    entry = candidates.entries[position].entry
    if entry.disable:
        return Decision(Outcome.DISABLED, "disabled")
    if entry.triggers and scan.generation_type not in entry.triggers:
        allowed = ", ".join(entry.triggers)
        text = f"generation type '{scan.generation_type}' is not one of its triggers ({allowed})"
        return Decision(Outcome.TRIGGER, text)
    wanted = entry.character_filter
    if wanted.names and (scan.character in wanted.names) == wanted.exclude:
        verb = "excludes" if wanted.exclude else "does not list"
        return Decision(Outcome.CHARACTER_FILTER, f"character filter {verb} '{scan.character}'")
    if wanted.tags and any(tag in wanted.tags for tag in scan.character_tags) == wanted.exclude:
        verb = "excludes" if wanted.exclude else "needs"
        text = f"character filter {verb} the tags {', '.join(wanted.tags)}"
        return Decision(Outcome.CHARACTER_FILTER, text)
    if position in timed.delayed:
        text = f"delay: waits for {entry.delay} messages, the chat has {chat_length}"
        return Decision(Outcome.DELAY, text)
    if position in timed.cooldown and position not in timed.sticky:
        end = timed.ends.get(("cooldown", position))
        return Decision(Outcome.COOLDOWN, f"on cooldown until the chat has {end} messages")
    return None


def vector_winners(
    candidates: Candidates,
    scores: Mapping[tuple[str, int], float],
    limit: int,
    blocked: Mapping[int, Decision],
) -> tuple[dict[int, str], dict[int, Decision]]:
    """The top vectorized entries by similarity, explained, and why the others lost."""
    ranked = []
    for key, score in scores.items():
        position = candidates.positions.get(key)
        if position is None:
            continue
        entry = candidates.entries[position].entry
        if entry.vectorized and not entry.disable:
            ranked.append((-score, position))
    ranked.sort()
    limit = max(0, limit)
    winners: dict[int, str] = {}
    losers: dict[int, Decision] = {}
    for rank, (negative, position) in enumerate(ranked):
        if rank < limit:
            winners[position] = f"vector similarity {-negative:.3f} (top {limit})"
        elif position not in blocked:
            text = f"no key matched; vector similarity {-negative:.3f} is not in the top {limit}"
            losers[position] = Decision(Outcome.NO_MATCH, text)
    return winners, losers
