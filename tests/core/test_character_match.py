from __future__ import annotations

from dataclasses import dataclass

import pytest

from charmemory.core.character_match import find_character, matching_characters
from charmemory.errors import NotFoundError


@dataclass(frozen=True)
class Known:
    name: str
    stem: str


SERAPHINA = Known("Seraphina", "default_Seraphina")
MIRA = Known("Captain Mira Vance", "Mira")
WHO = Known('Dr. "Who"', "who")
KNOWN = [SERAPHINA, MIRA, WHO]


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("default_Seraphina", SERAPHINA),
        ("Seraphina", SERAPHINA),
        ("seraphina", SERAPHINA),
        ("DEFAULT_SERAPHINA", SERAPHINA),
        ("  Seraphina ", SERAPHINA),
        ("Mira", MIRA),
        ("captain mira vance", MIRA),
        ('Dr. "Who"', WHO),
        ("Dr. Who", WHO),
    ],
)
def test_a_character_is_found_by_stem_or_name_ignoring_case(name: str, expected: Known) -> None:
    assert matching_characters(name, KNOWN) == [expected]
    assert find_character(name, KNOWN) is expected


@pytest.mark.parametrize("name", ["Sera", "", "   ", "default", "Seraphina - 2024"])
def test_other_names_match_no_one(name: str) -> None:
    assert matching_characters(name, KNOWN) == []


def test_an_exact_stem_wins_over_a_name_and_exact_case_over_folded() -> None:
    named_seraphina = Known("Forest Healer", "Seraphina")
    lower = Known("x", "seraphina")

    assert matching_characters("Seraphina", [SERAPHINA, named_seraphina]) == [named_seraphina]
    assert matching_characters("seraphina", [SERAPHINA, lower]) == [lower]


def test_two_cards_of_one_name_both_match() -> None:
    twin = Known("Seraphina", "Seraphina_v2")

    assert matching_characters("seraphina", [SERAPHINA, twin]) == [SERAPHINA, twin]
    with pytest.raises(NotFoundError) as raised:
        find_character("seraphina", [SERAPHINA, twin])

    assert str(raised.value) == (
        "'seraphina' names several characters (default_Seraphina, Seraphina_v2); "
        "use the card file name"
    )


def test_an_unknown_name_lists_who_is_known() -> None:
    with pytest.raises(NotFoundError) as raised:
        find_character("Nobody", KNOWN)

    assert str(raised.value) == (
        "unknown character 'Nobody'; known: Seraphina, Captain Mira Vance, Dr. \"Who\""
    )


def test_with_no_characters_the_error_says_how_to_add_one() -> None:
    with pytest.raises(NotFoundError, match=r"known: none yet \(charmemory import CARD\)"):
        find_character("Seraphina", [])
