"""The World Info activation settings, with SillyTavern's shipped defaults.

The defaults are those of SillyTavern's `default/content/settings.json`
(`world_info_settings`): scan depth 2, 25 % of the context, names included,
recursive scanning on, case-insensitive whole-word keys, character lore first.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal

from charmemory.core.settings.spec import Kind, Setting

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


def _setting(name: str, kind: Kind, help: str, **rules: Any) -> Setting:
    default = getattr(DEFAULT_WORLD_INFO_SETTINGS, name)
    return Setting(f"world_info.{name}", kind, default, help, **rules)


SETTINGS: tuple[Setting, ...] = (
    _setting("scan_depth", "int", "Messages scanned for keys, newest first", low=0, high=1000),
    _setting("budget_percent", "number", "World Info budget (% of the context)", low=1, high=100),
    _setting(
        "budget_cap", "int", "World Info budget cap in tokens (unset: none)", low=1, high=1_000_000
    ),
    _setting("include_names", "bool", "Scan messages as 'Name: text'"),
    _setting("recursive", "bool", "Scan activated entries' content again"),
    _setting(
        "max_recursion_steps", "int", "Scan passes in all (0: until nothing new)", low=0, high=100
    ),
    _setting(
        "min_activations", "int", "Widen the scan until this many entries activate", low=0, high=100
    ),
    _setting(
        "min_activations_depth_max",
        "int",
        "Deepest scan for minimum activations (0: the whole chat)",
        low=0,
        high=10000,
    ),
    _setting("case_sensitive", "bool", "Keys match case (entries that do not say)"),
    _setting("match_whole_words", "bool", "Keys match whole words (entries that do not say)"),
    _setting("use_group_scoring", "bool", "Inclusion groups by score (entries that do not say)"),
    _setting(
        "strategy",
        "choice",
        "How character and global books are merged",
        choices=("evenly", "character_first", "global_first"),
    ),
    _setting(
        "vector_max_entries", "int", "Vectorized entries activated by similarity", low=0, high=100
    ),
    _setting("scan_injections", "bool", "Also scan the Author's Note and the depth prompt"),
)
GLOBAL_BOOKS = Setting(
    "world_info.global_books",
    "json",
    [],
    "Lorebooks active in every chat (a JSON list of book names)",
    check=lambda value: _book_names(value),
    scopes=frozenset({"workspace"}),
)
EXTRA_BOOKS = Setting(
    "world_info.extra_books",
    "json",
    [],
    "A character's lorebooks beyond its card's own (a JSON list of book names)",
    check=lambda value: _book_names(value),
    scopes=frozenset({"character"}),
)


def _book_names(value: Any) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise ValueError('must be a JSON list of book names, e.g. ["Eldoria"]')
    return [v.strip() for v in value]


def world_info_settings(values: Mapping[str, Any]) -> WorldInfoSettings:
    """The settings from values by full name (`world_info.scan_depth`); missing ones default."""
    chosen = {s.short: values[s.name] for s in SETTINGS if values.get(s.name) is not None}
    return replace(DEFAULT_WORLD_INFO_SETTINGS, **chosen)
