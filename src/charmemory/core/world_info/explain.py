"""Why each candidate entry was activated or not, in words a person can check.

The engine records a decision only where something happened to an entry (it
was activated, or a rule stopped it); every other candidate simply had no key
in its scan text, and `explain` says so when asked. That keeps a generation
with 10,000 candidates from building 10,000 records nobody reads.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum

from charmemory.core.world_info.candidates import Candidates


class Outcome(StrEnum):
    # activated
    KEY = "key"
    CONSTANT = "constant"
    STICKY = "sticky"
    VECTOR = "vector"
    DECORATOR = "decorator"  # @@activate
    # not activated
    DISABLED = "disabled"
    TRIGGER = "trigger"  # the generation type is not among its triggers
    CHARACTER_FILTER = "character_filter"
    DELAY = "delay"
    COOLDOWN = "cooldown"
    RECURSION_DELAY = "delay_until_recursion"
    RECURSION_EXCLUDED = "exclude_recursion"
    SUPPRESSED = "dont_activate"  # @@dont_activate
    NO_KEYS = "no_keys"
    NO_MATCH = "no_key_match"
    SECONDARY_KEYS = "secondary_keys"
    PROBABILITY = "probability"
    INCLUSION_GROUP = "inclusion_group"
    BUDGET = "budget"

    @property
    def activates(self) -> bool:
        return self in _ACTIVATING


_ACTIVATING = frozenset(
    {Outcome.KEY, Outcome.CONSTANT, Outcome.STICKY, Outcome.VECTOR, Outcome.DECORATOR}
)


@dataclass(frozen=True)
class Decision:
    outcome: Outcome
    text: str
    step: int | None = None  # the scan pass (1: the chat; later: recursion or a wider scan)


@dataclass(frozen=True)
class Explanation:
    """One candidate's fate: activated or not, the kind of reason, and the reason in words."""

    book: str
    uid: int
    comment: str
    activated: bool
    reason: Outcome
    text: str
    step: int | None = None


def explain(
    candidates: Candidates, decisions: Mapping[int, Decision], scan_depth: int
) -> list[Explanation]:
    """An explanation for every candidate, in candidate order."""
    explanations = []
    for position, item in enumerate(candidates.entries):
        entry = item.entry
        decision = decisions.get(position) or _undecided(entry.keys, entry.scan_depth, scan_depth)
        explanations.append(
            Explanation(
                entry.book,
                entry.uid,
                entry.comment,
                decision.outcome.activates,
                decision.outcome,
                decision.text,
                decision.step,
            )
        )
    return explanations


def _undecided(keys: tuple[str, ...], own_depth: int | None, scan_depth: int) -> Decision:
    if not keys:
        return Decision(Outcome.NO_KEYS, "has no keys")
    depth = scan_depth if own_depth is None else own_depth
    noun = "message" if depth == 1 else "messages"
    return Decision(Outcome.NO_MATCH, f"no key matched in the last {depth} {noun}")
