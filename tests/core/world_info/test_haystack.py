"""The scan text's indexes: the union of its parts' words and 4-grams."""

from __future__ import annotations

from charmemory.core.world_info.haystack import Haystack, grams_of


def test_words_and_grams_are_the_union_of_the_parts():
    haystack = Haystack("\x01Wren: an Oak\n\x01Elm", ["Wren: an Oak", "Elm"])

    assert haystack.words(True) == {"Wren", "an", "Oak", "Elm"}
    assert haystack.words(False) == {"wren", "an", "oak", "elm"}
    assert haystack.grams(False) == grams_of("wren: an oak")
    assert "Wren" in haystack.grams(True) and "wren" not in haystack.grams(True)


def test_a_text_alone_is_its_own_part():
    haystack = Haystack("Café au lait")

    assert haystack.words(False) == {"caf", "au", "lait"}  # "é" is no word character to JavaScript
    assert haystack.lower == "café au lait"
    assert grams_of("abc") == frozenset()
