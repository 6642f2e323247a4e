"""The World Info token budget: a share of the context, optionally capped.

The budget is `budget_percent` of the context left once the response is
reserved (SillyTavern's `maxContext`), rounded as JavaScript rounds, at least
one token, and no more than `budget_cap` when one is set. Entries are admitted
one by one, each followed by a newline: an entry that would bring the text of
all admitted entries to the budget or over is refused, and from then on only
`ignoreBudget` entries are admitted. `ignoreBudget` entries are never refused,
but their text counts against the budget of the entries after them.
"""

from __future__ import annotations

import math

from charmemory.core.injection import TokenCounter
from charmemory.core.world_info.settings import WorldInfoSettings


def world_info_budget(settings: WorldInfoSettings, max_context: int) -> int:
    budget = math.floor(settings.budget_percent * max_context / 100 + 0.5) or 1
    if settings.budget_cap is not None and 0 < settings.budget_cap < budget:
        return settings.budget_cap
    return budget


class BudgetLedger:
    """The text admitted so far and whether the budget has run out."""

    def __init__(self, budget: int, count_tokens: TokenCounter) -> None:
        self.budget = budget
        self.overflowed = False
        self._count = count_tokens
        self._text = ""

    @property
    def used(self) -> int:
        return self._count(self._text) if self._text else 0

    def admit(self, content: str, ignore_budget: bool) -> tuple[bool, int]:
        """Whether `content` fits, and the tokens the admitted text would reach with it."""
        trial = f"{self._text}{content}\n"
        tokens = self._count(trial)
        if not ignore_budget and tokens >= self.budget:
            self.overflowed = True
            return False, tokens
        self._text = trial
        return True, tokens
