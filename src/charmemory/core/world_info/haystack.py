"""A scan text and the indexes key matching reads: its lower-cased copy, words and 4-grams.

A scan text joins parts (messages, fields, activated content) with non-word
characters, so its words are the union of its parts' words, and a key that
holds no `\\x01` (the mark every part starts with) lies inside one part, so its
4-grams are among the parts' 4-grams. Each part's sets are made once and kept
for later scans: a chat's messages come back generation after generation.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

WORD_RUN = re.compile(r"[A-Za-z0-9_]+")
GRAM = 4  # characters in the substrings plain keys are indexed by


def grams_of(text: str) -> frozenset[str]:
    return frozenset(text[start : start + GRAM] for start in range(len(text) - GRAM + 1))


class _Part:
    """One part of a scan text with its sets, each made when first needed."""

    __slots__ = ("_grams", "_lower", "_lower_grams", "_lower_words", "_words", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        self._lower: str | None = None
        self._words: frozenset[str] | None = None
        self._lower_words: frozenset[str] | None = None
        self._grams: frozenset[str] | None = None
        self._lower_grams: frozenset[str] | None = None

    @property
    def lower(self) -> str:
        if self._lower is None:
            self._lower = self.text.lower()
        return self._lower

    def words(self, case_sensitive: bool) -> frozenset[str]:
        if case_sensitive:
            if self._words is None:
                self._words = frozenset(WORD_RUN.findall(self.text))
            return self._words
        if self._lower_words is None:
            self._lower_words = frozenset(WORD_RUN.findall(self.lower))
        return self._lower_words

    def grams(self, case_sensitive: bool) -> frozenset[str]:
        if case_sensitive:
            if self._grams is None:
                self._grams = grams_of(self.text)
            return self._grams
        if self._lower_grams is None:
            self._lower_grams = grams_of(self.lower)
        return self._lower_grams


@lru_cache(maxsize=8192)
def _part(text: str) -> _Part:
    return _Part(text)


class Haystack:
    """A scan text: the text itself, lower-cased, and the union of its parts' sets."""

    __slots__ = ("_lower", "_parts", "_sets", "text")

    def __init__(self, text: str, parts: Sequence[str] | None = None) -> None:
        self.text = text
        self._parts = [_part(part) for part in (parts if parts is not None else (text,))]
        self._lower: str | None = None
        self._sets: dict[tuple[str, bool], frozenset[str]] = {}

    @property
    def lower(self) -> str:
        if self._lower is None:
            self._lower = self.text.lower()
        return self._lower

    def words(self, case_sensitive: bool) -> frozenset[str]:
        """The maximal runs of `[A-Za-z0-9_]`, lower-cased unless case-sensitive."""
        return self._union("words", case_sensitive)

    def grams(self, case_sensitive: bool) -> frozenset[str]:
        """Every 4-character substring of every part, lower-cased unless case-sensitive."""
        return self._union("grams", case_sensitive)

    def _union(self, kind: str, case_sensitive: bool) -> frozenset[str]:
        found = self._sets.get((kind, case_sensitive))
        if found is None:
            found = self._sets[(kind, case_sensitive)] = part_sets(
                [part.text for part in self._parts], kind, case_sensitive
            )
        return found


def part_sets(parts: Sequence[str], kind: str, case_sensitive: bool) -> frozenset[str]:
    """The union of the parts' `kind` ("words" or "grams") sets."""
    sets = [getattr(_part(text), kind)(case_sensitive) for text in parts]
    if len(sets) == 1:
        return sets[0]
    return frozenset().union(*sets)
