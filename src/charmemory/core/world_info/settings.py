"""The World Info activation settings, with SillyTavern's shipped defaults.

The defaults are those of SillyTavern's `default/content/settings.json`
(`world_info_settings`): scan depth 2, 25 % of the context, names included,
recursive scanning on, case-insensitive whole-word keys, character lore first.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

# How the character's books and the global books are merged into one list.
Strategy = Literal["evenly", "character_first", "global_first"]


@dataclass(frozen=True)
class WorldInfoSettings:
    scan_depth: int = 2  # messages scanned for keys, newest first
    budget_percent: float = 25  # of the context left once the response is reserved
    budget_cap: int | None = None  # tokens; None: the percentage alone decides
    include_names: bool = True  # scan "Name: text" rather than the bare text
    recursive: bool = True  # activated content is scanned again
    max_recursion_steps: int = 0  # scan passes in all; 0: until nothing new activates
    min_activations: int = 0  # widen the scan depth until this many entries activated
    min_activations_depth_max: int = 0  # deepest scan min_activations may reach; 0: the chat
    case_sensitive: bool = False  # the default of entries whose caseSensitive is null
    match_whole_words: bool = True  # the default of entries whose matchWholeWords is null
    use_group_scoring: bool = False  # the default of entries whose useGroupScoring is null
    strategy: Strategy = "character_first"
    vector_max_entries: int = 5  # vectorized entries activated by similarity, at most
    scan_injections: bool = False  # also scan the Author's Note and the card's depth prompt


DEFAULT_WORLD_INFO_SETTINGS = WorldInfoSettings()
