"""The World Info engine: which candidate entries activate for one generation, and why.

It follows SillyTavern's checkWorldInfo. Before scanning, entries that cannot
activate this generation are set aside: disabled, not triggered by this
generation type, filtered out for this character, waiting for their delay,
on cooldown (unless sticky), or marked `@@dont_activate`. Then scan passes
run; in each, every entry not yet decided is checked in candidate order:

1. `delayUntilRecursion` entries wait for a recursion pass of their level,
   and `excludeRecursion` entries take no part in recursion passes (sticky
   entries skip both rules);
2. `@@activate`, a top vector similarity, `constant` and an active sticky
   effect activate an entry without looking at its keys;
3. otherwise a primary key must be found in the entry's scan text, and then
   its secondary keys must satisfy its logic (AND ANY, NOT ALL, NOT ANY, AND ALL).

The entries found are ordered sticky first, then in candidate order; inclusion
groups keep one entry per group; each entry then rolls its probability (sticky
entries do not) and must fit the token budget. What was admitted feeds the
next pass unless it has `preventRecursion`. Passes go on while recursion finds
new entries, then, when fewer than `min_activations` entries activated, with
the chat scanned one message deeper, and finally once per remaining
`delayUntilRecursion` level; `max_recursion_steps` caps the number of passes.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from charmemory.core.injection import TokenCounter, approximate_tokens
from charmemory.core.world_info.budget import BudgetLedger, world_info_budget
from charmemory.core.world_info.candidates import Candidates
from charmemory.core.world_info.eligibility import set_aside, vector_winners
from charmemory.core.world_info.entries import (
    LoreEntry,
    entry_hash,
)
from charmemory.core.world_info.explain import Decision, Explanation, Outcome, explain
from charmemory.core.world_info.groups import filter_inclusion_groups
from charmemory.core.world_info.haystack import part_sets
from charmemory.core.world_info.matching import KeyChecks
from charmemory.core.world_info.placement import WorldInfoPlacement, place_entries
from charmemory.core.world_info.scan import ScanBuffer, ScanContext
from charmemory.core.world_info.settings import DEFAULT_WORLD_INFO_SETTINGS, WorldInfoSettings
from charmemory.core.world_info.timed import check_timed_effects, record_timed_effects

Substitute = Callable[[str], str]


class _Pass(Enum):
    NONE = 0
    INITIAL = 1
    RECURSION = 2
    MIN_ACTIVATIONS = 3


@dataclass(frozen=True)
class ActivatedEntry:
    entry: LoreEntry
    content: str  # with macros substituted, as it goes into the prompt
    reason: Outcome
    text: str
    step: int


@dataclass(frozen=True)
class WorldInfoResult:
    activated: tuple[ActivatedEntry, ...]  # in activation order
    placement: WorldInfoPlacement
    timed_state: dict[str, Any]  # the new chat_metadata.timedWorldInfo
    budget: int
    used_tokens: int
    overflowed: bool
    steps: int  # scan passes run
    scan_depth: int  # the global scan depth reached (min activations widen it)
    candidates: Candidates = field(repr=False, compare=False)
    decisions: Mapping[int, Decision] = field(repr=False, compare=False)

    def explanations(self) -> list[Explanation]:
        """Why each candidate was activated or not, in candidate order."""
        return explain(self.candidates, self.decisions, self.scan_depth)


def activate_world_info(
    candidates: Candidates,
    scan: ScanContext,
    *,
    max_context: int,
    rng: random.Random,
    settings: WorldInfoSettings = DEFAULT_WORLD_INFO_SETTINGS,
    count_tokens: TokenCounter = approximate_tokens,
    substitute: Substitute = str,
    timed_state: Mapping[str, Any] | None = None,
    vector_scores: Mapping[tuple[str, int], float] | None = None,
) -> WorldInfoResult:
    """Run the World Info scan of one generation.

    `max_context` is the context size less the response length; `vector_scores`
    holds the retrieval index's similarity of vectorized entries to the scan
    text, by (book, uid); `substitute` replaces macros in keys and content.
    """
    return _Activation(
        candidates,
        scan,
        settings,
        max_context,
        rng,
        count_tokens,
        substitute,
        timed_state,
        vector_scores or {},
    ).run()


class _Activation:
    def __init__(
        self,
        candidates: Candidates,
        scan: ScanContext,
        settings: WorldInfoSettings,
        max_context: int,
        rng: random.Random,
        count_tokens: TokenCounter,
        substitute: Substitute,
        timed_state: Mapping[str, Any] | None,
        vector_scores: Mapping[tuple[str, int], float],
    ) -> None:
        self.candidates = candidates
        self.entries = candidates.entries
        self.settings = settings
        self.rng = rng
        self.substitute = substitute
        self.buffer = ScanBuffer(scan, settings)
        self.ledger = BudgetLedger(world_info_budget(settings, max_context), count_tokens)
        self.decisions: dict[int, Decision] = {}
        self.activated: dict[int, ActivatedEntry] = {}
        self.failed: set[int] = set()
        self.pending: dict[int, Decision] = {}
        self.keys = KeyChecks(substitute)
        self.hashes: dict[tuple[str, int], int] = {}
        self.first_keys: dict[int, int] = {}  # entry -> number of its first key found so far
        self.scanned: dict[tuple[int | None, tuple[bool, ...]], tuple[str, ...]] = {}
        self.timed = check_timed_effects(
            timed_state, candidates, self.buffer.chat_length, self.hash_of
        )
        self.blocked = set_aside(candidates, scan, self.timed, self.buffer.chat_length)
        self.vector, unranked = vector_winners(
            candidates, vector_scores, settings.vector_max_entries, self.blocked
        )
        self.decisions.update(self.blocked)
        self.decisions.update(unranked)
        self.immediate = sorted(
            {*candidates.constant, *self.timed.sticky, *self.vector, *candidates.decorated}
            - set(self.blocked)
        )

    def hash_of(self, entry: LoreEntry) -> int:
        found = self.hashes.get(entry.key)
        if found is None:
            found = self.hashes[entry.key] = entry_hash(entry)
        return found

    def run(self) -> WorldInfoResult:
        levels = list(self.candidates.recursion_levels)
        level = levels.pop(0) if levels else 0
        state = _Pass.INITIAL
        steps = 0
        maximum = self.settings.max_recursion_steps
        while state is not _Pass.NONE:
            if maximum and maximum <= steps:
                break
            steps += 1
            found = self._scan_pass(state, level, steps)
            found.sort(key=lambda position: (position not in self.timed.sticky, position))
            kept = self._inclusion_groups(found, state)
            fed = self._admit(kept, steps)
            state = self._next_pass(state, fed)
            if state is _Pass.NONE and levels:
                state, level = _Pass.RECURSION, levels.pop(0)
            if state is not _Pass.NONE:
                self.buffer.add_recursion(
                    [
                        (f"the content of {self.entries[p].entry.label}", self.activated[p].content)
                        for p in fed
                    ]
                )
        return self._result(steps)

    # -- one scan pass ----------------------------------------------------------------

    def _scan_pass(self, state: _Pass, level: int, step: int) -> list[int]:
        recursion = state is not _Pass.MIN_ACTIVATIONS
        hits = self._anchored(recursion)
        pool = {*self.immediate, *hits, *self.candidates.slow}
        found = []
        for position in sorted(pool):
            if position in self.activated or position in self.failed or position in self.blocked:
                continue
            decision = self._consider(position, state, level, step, recursion, hits.get(position))
            if decision is None:
                continue
            if decision.outcome.activates:
                self.pending[position] = decision
                found.append(position)
            else:
                self.decisions[position] = decision
        return found

    def _anchored(self, recursion: bool) -> dict[int, set[int]]:
        """Entries whose keys' anchors the scan text holds, with the numbers of those keys.

        A recursion pass only adds parts to the scan texts, so a key that matched
        still matches and a key that did not can only match in the new parts:
        then only the new parts are looked up, and the first key found earlier
        is carried over. Any other change (a wider scan) starts afresh.
        """
        indexes = {"words": self.candidates.word_index, "grams": self.candidates.gram_index}
        configs = {profile[:2] for index in indexes.values() for profile in index}
        now = {config: self.buffer.parts(*config, recursion) for config in configs}
        appended = all(
            config in self.scanned and parts[: len(self.scanned[config])] == self.scanned[config]
            for config, parts in now.items()
        )
        if not appended:
            self.first_keys.clear()
        hits: dict[int, set[int]] = {p: {number} for p, number in self.first_keys.items()}
        for kind, by_profile in indexes.items():
            for (scan_depth, flags, case_sensitive), index in by_profile.items():
                parts = now[(scan_depth, flags)]
                fresh = parts[len(self.scanned[(scan_depth, flags)]) :] if appended else parts
                if not fresh:
                    continue
                present = part_sets(fresh, kind, case_sensitive)
                if len(present) < len(index):
                    found = [index[anchor] for anchor in present if anchor in index]
                else:
                    found = [keyed for anchor, keyed in index.items() if anchor in present]
                for keyed in found:
                    for position, number in keyed:
                        hits.setdefault(position, set()).add(number)
        self.scanned = now
        return hits

    def _consider(
        self,
        position: int,
        state: _Pass,
        level: int,
        step: int,
        recursion: bool,
        keys: set[int] | None,
    ) -> Decision | None:
        found = self._activation(position, state, step, recursion, keys)
        if found is None:
            return None
        entry = self.entries[position].entry
        waits = entry.delay_until_recursion
        if position in self.timed.sticky:
            return found
        if waits and state is not _Pass.RECURSION:
            return Decision(Outcome.RECURSION_DELAY, f"waits for recursion (level {waits})", step)
        if waits and waits > level:
            text = f"waits for recursion level {waits} (this pass is level {level})"
            return Decision(Outcome.RECURSION_DELAY, text, step)
        if state is _Pass.RECURSION and self.settings.recursive and entry.exclude_recursion:
            return Decision(Outcome.RECURSION_EXCLUDED, "takes no part in recursion", step)
        return found

    def _activation(
        self, position: int, state: _Pass, step: int, recursion: bool, keys: set[int] | None
    ) -> Decision | None:
        """What would activate the entry in this pass, before the recursion rules.

        `keys` numbers the primary keys whose anchors the scan text holds; the
        others cannot match. None: all may.
        """
        item = self.entries[position]
        entry = item.entry
        if "@@activate" in entry.decorators:
            return Decision(Outcome.DECORATOR, "@@activate decorator", step)
        if position in self.vector:
            return Decision(Outcome.VECTOR, self.vector[position], step)
        if entry.constant:
            return Decision(Outcome.CONSTANT, "constant", step)
        if position in self.timed.sticky:
            end = self.timed.ends.get(("sticky", position))
            return Decision(Outcome.STICKY, f"sticky until the chat has {end} messages", step)
        if not entry.keys:
            return None
        haystack = self.buffer.haystack(entry.scan_depth, entry.scan_flags, recursion)
        numbers = range(len(item.primary)) if keys is None else sorted(keys)
        found_key = self.keys.first_match(item, numbers, haystack)
        if found_key is None:
            return None
        number, primary = found_key
        if keys is not None:
            self.first_keys[position] = number
        where = self.buffer.locate(primary, entry.scan_depth, entry.scan_flags, recursion)
        found = f"key '{primary.key}' matched in {where}"
        if state is _Pass.MIN_ACTIVATIONS:
            found += f" (scan widened to {self.buffer.depth} messages)"
        if entry.selective and entry.secondary_keys:
            passed, detail = self.keys.secondary(item, haystack)
            if not passed:
                return Decision(Outcome.SECONDARY_KEYS, f"{found}, but {detail}", step)
            found = f"{found}; {detail}"
        return Decision(Outcome.KEY, found, step)

    # -- after the scan of a pass -----------------------------------------------------

    def _inclusion_groups(self, found: list[int], state: _Pass) -> list[int]:
        taken = {name for p in self.activated for name in self.entries[p].entry.group_names}
        recursion = state is not _Pass.MIN_ACTIVATIONS
        kept, lost = filter_inclusion_groups(
            found,
            self.entries,
            taken=taken,
            sticky=self.timed.sticky,
            score=lambda position: self._score(position, recursion),
            use_group_scoring=self.settings.use_group_scoring,
            rng=self.rng,
        )
        for position, text in lost.items():
            earlier = self.decisions.get(position)
            if earlier is None or earlier.outcome is not Outcome.INCLUSION_GROUP:
                step = self.pending[position].step
                self.decisions[position] = Decision(Outcome.INCLUSION_GROUP, text, step)
        return kept

    def _score(self, position: int, recursion: bool) -> int:
        item = self.entries[position]
        entry = item.entry
        return self.keys.score(
            item, self.buffer.haystack(entry.scan_depth, entry.scan_flags, recursion)
        )

    def _admit(self, kept: list[int], step: int) -> list[int]:
        """Roll probabilities and fit the budget; returns the admitted entries feeding recursion."""
        fed = []
        ignoring = sum(1 for p in kept if self.entries[p].entry.ignore_budget)
        for index, position in enumerate(kept):
            entry = self.entries[position].entry
            found = self.pending[position]
            if entry.ignore_budget:
                ignoring -= 1
            if self.ledger.overflowed and not entry.ignore_budget:
                self._over_budget(position, step, None)
                if ignoring > 0:
                    continue
                for rest in kept[index + 1 :]:
                    self._over_budget(rest, step, None)
                break
            if not self._passes_probability(position, step):
                continue
            content = self.substitute(entry.content)
            fits, tokens = self.ledger.admit(content, entry.ignore_budget)
            if not fits:
                self._over_budget(position, step, tokens)
                continue
            text = found.text + (" (ignores the budget)" if entry.ignore_budget else "")
            self.activated[position] = ActivatedEntry(entry, content, found.outcome, text, step)
            self.decisions[position] = Decision(found.outcome, text, step)
            if not entry.prevent_recursion:
                fed.append(position)
        return fed

    def _passes_probability(self, position: int, step: int) -> bool:
        entry = self.entries[position].entry
        if not entry.use_probability or entry.probability == 100:
            return True
        if position in self.timed.sticky:
            return True
        roll = self.rng.random() * 100
        if roll <= entry.probability:
            return True
        self.failed.add(position)
        text = f"probability roll {roll:.1f} is over its {entry.probability:g}%"
        self.decisions[position] = Decision(Outcome.PROBABILITY, text, step)
        return False

    def _over_budget(self, position: int, step: int, tokens: int | None) -> None:
        budget = self.ledger.budget
        if tokens is None:
            text = f"over budget: the {budget}-token World Info budget was already spent"
        else:
            text = f"over budget: it would bring World Info to {tokens} of {budget} tokens"
        self.decisions[position] = Decision(Outcome.BUDGET, text, step)

    def _next_pass(self, state: _Pass, fed: list[int]) -> _Pass:
        settings = self.settings
        more = fed or (state is _Pass.MIN_ACTIVATIONS and self.buffer.has_recursion)
        if settings.recursive and not self.ledger.overflowed and more:
            return _Pass.RECURSION
        if (
            not self.ledger.overflowed
            and settings.min_activations > 0
            and len(self.activated) < settings.min_activations
        ):
            depth = self.buffer.depth
            limit = settings.min_activations_depth_max
            if not ((limit > 0 and depth > limit) or depth > self.buffer.chat_length):
                self.buffer.skew += 1
                return _Pass.MIN_ACTIVATIONS
        return _Pass.NONE

    def _result(self, steps: int) -> WorldInfoResult:
        activated = tuple(self.activated.values())
        placement = place_entries((item.entry, item.content) for item in activated)
        state = record_timed_effects(
            self.timed,
            (item.entry for item in activated),
            self.buffer.chat_length,
            self.hash_of,
        )
        return WorldInfoResult(
            activated=activated,
            placement=placement,
            timed_state=state,
            budget=self.ledger.budget,
            used_tokens=self.ledger.used,
            overflowed=self.ledger.overflowed,
            steps=steps,
            scan_depth=self.buffer.depth,
            candidates=self.candidates,
            decisions=dict(self.decisions),
        )
