"""Checking an entry's keys against a scan text: primary keys, secondary logic, group score."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from charmemory.core.world_info.catalog import CompiledEntry, Key, resolve_key
from charmemory.core.world_info.entries import AND_ALL, AND_ANY, LOGIC_NAMES, NOT_ALL, NOT_ANY
from charmemory.core.world_info.haystack import Haystack
from charmemory.core.world_info.keys import KeyMatcher


class KeyChecks:
    """Key checks of one generation: macros in keys are replaced once per key."""

    def __init__(self, substitute: Callable[[str], str]) -> None:
        self._substitute = substitute
        self._cache: dict[str, KeyMatcher | None] = {}

    def matcher(self, key: Key, item: CompiledEntry) -> KeyMatcher | None:
        return resolve_key(key, item, self._substitute, self._cache)

    def first_match(
        self, item: CompiledEntry, numbers: Iterable[int], haystack: Haystack
    ) -> tuple[int, KeyMatcher] | None:
        """The first of these primary keys (by number) found, with its number."""
        for number in numbers:
            matcher = self.matcher(item.primary[number], item)
            if matcher is not None and matcher.matches(haystack):
                return number, matcher
        return None

    def matched(self, item: CompiledEntry, keys: tuple[Key, ...], haystack: Haystack) -> list[str]:
        found = []
        for key in keys:
            matcher = self.matcher(key, item)
            if matcher is not None and matcher.matches(haystack):
                found.append(matcher.key)
        return found

    def secondary(self, item: CompiledEntry, haystack: Haystack) -> tuple[bool, str]:
        """Whether the secondary keys satisfy the entry's logic, and how, in words."""
        logic = item.entry.selective_logic
        name = LOGIC_NAMES.get(logic, f"logic {logic}")
        matched = self.matched(item, item.secondary, haystack)
        total = len(item.entry.secondary_keys)
        listed = ", ".join(f"'{key}'" for key in matched)
        if logic == AND_ANY:
            return (True, f"{name}: {listed} found") if matched else (False, f"{name}: none found")
        if logic == NOT_ALL:
            if len(matched) < total:
                return True, f"{name}: not every secondary key found"
            return False, f"{name}: every secondary key found"
        if logic == NOT_ANY:
            return (False, f"{name}: {listed} found") if matched else (True, f"{name}: none found")
        if logic == AND_ALL:
            if len(matched) == total:
                return True, f"{name}: every secondary key found"
            return False, f"{name}: only {len(matched)} of {total} secondary keys found"
        return False, f"unknown secondary key logic {logic}"

    def score(self, item: CompiledEntry, haystack: Haystack) -> int:
        """Group scoring: primary keys found, plus secondary ones under AND ANY / AND ALL."""
        entry = item.entry
        if not entry.keys:
            return 0
        primary = len(self.matched(item, item.primary, haystack))
        if not entry.secondary_keys:
            return primary
        secondary = len(self.matched(item, item.secondary, haystack))
        if entry.selective_logic == AND_ANY:
            return primary + secondary
        if entry.selective_logic == AND_ALL and secondary == len(entry.secondary_keys):
            return primary + secondary
        return primary
