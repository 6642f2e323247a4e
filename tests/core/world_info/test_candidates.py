"""Gathering candidates: sources in SillyTavern's order, strategies, de-duplication, extras."""

from __future__ import annotations

import copy

import pytest

from charmemory.core.world_info import LoreSources, NamedBook, WorldInfoSettings, gather_candidates
from tests.support.lore import book, entry


def keys(candidates) -> list[tuple[str, int]]:
    return [item.entry.key for item in candidates.entries]


CHAT = NamedBook("Chat", book(entry(0, order=5), entry(1, order=50)))
PERSONA = NamedBook("Persona", book(entry(0, order=1)))
CHARACTER = NamedBook("Char", book(entry(0, order=10), entry(1, order=30)))
EXTRA = NamedBook("CharExtra", book(entry(0, order=20)))
GLOBAL = NamedBook("World", book(entry(0, order=25), entry(1, order=40)))
SOURCES = LoreSources(
    chat=CHAT, persona=PERSONA, character=(CHARACTER, EXTRA), global_books=(GLOBAL,)
)


@pytest.mark.parametrize(
    ("strategy", "rest"),
    [
        (
            "character_first",
            [("Char", 1), ("CharExtra", 0), ("Char", 0), ("World", 1), ("World", 0)],
        ),
        ("global_first", [("World", 1), ("World", 0), ("Char", 1), ("CharExtra", 0), ("Char", 0)]),
        ("evenly", [("World", 1), ("Char", 1), ("World", 0), ("CharExtra", 0), ("Char", 0)]),
    ],
)
def test_chat_then_persona_then_character_and_global_lore_by_strategy(strategy, rest):
    found = gather_candidates(SOURCES, WorldInfoSettings(strategy=strategy))

    assert keys(found) == [("Chat", 1), ("Chat", 0), ("Persona", 0), *rest]


def test_equal_orders_keep_book_and_uid_order():
    lore = NamedBook("Lore", book(entry(2), entry(0), entry(1)))

    assert keys(gather_candidates(LoreSources(character=(lore,)))) == [
        ("Lore", 0),
        ("Lore", 1),
        ("Lore", 2),
    ]


def test_evenly_puts_global_entries_first_among_equal_orders():
    first = NamedBook("Char", book(entry(0)))
    second = NamedBook("World", book(entry(0)))
    found = gather_candidates(
        LoreSources(character=(first,), global_books=(second,)),
        WorldInfoSettings(strategy="evenly"),
    )

    assert keys(found) == [("World", 0), ("Char", 0)]


def test_a_book_is_read_once_from_its_first_source():
    shared = NamedBook("Shared", book(entry(0)))
    sources = LoreSources(
        chat=shared, persona=shared, character=(shared, shared), global_books=(shared,)
    )

    assert keys(gather_candidates(sources)) == [("Shared", 0)]


def test_the_chat_book_goes_before_a_persona_book_of_the_same_name():
    sources = LoreSources(
        chat=CHAT, persona=NamedBook("Chat", book(entry(9))), character=(NamedBook("Chat", book()),)
    )

    assert keys(gather_candidates(sources)) == [("Chat", 1), ("Chat", 0)]


def test_the_same_books_give_the_same_candidates_object():
    assert gather_candidates(SOURCES) is gather_candidates(SOURCES)


def test_a_book_changed_through_its_api_is_compiled_again():
    lore = book(entry(0, ["oak"]))
    sources = LoreSources(character=(NamedBook("Lore", lore),))
    before = gather_candidates(sources)

    lore.update(0, key=["elm"])
    after = gather_candidates(sources)

    assert after is not before
    assert after.entries[0].entry.keys == ("elm",)


class TestExtraCandidates:
    def test_extras_join_the_character_lore(self):
        cast = [entry(0, order=35), entry(7, order=1)]

        found = gather_candidates(SOURCES).with_extra("Cast", cast)

        assert keys(found)[3:] == [
            ("Cast", 0),
            ("Char", 1),
            ("CharExtra", 0),
            ("Char", 0),
            ("Cast", 7),
            ("World", 1),
            ("World", 0),
        ]

    def test_extras_are_deduplicated_by_book_and_uid(self):
        found = gather_candidates(SOURCES).with_extra("Char", [entry(0, order=99), entry(5)])
        found = found.with_extra("Cast", [entry(1)]).with_extra("Cast", [entry(1, order=99)])

        assert keys(found).count(("Char", 0)) == 1
        assert ("Char", 5) in keys(found)
        assert keys(found).count(("Cast", 1)) == 1
        assert found.skipped_duplicates == (("Char", 0), ("Cast", 1))

    def test_source_books_are_not_modified(self):
        lore = book(entry(0, ["oak"]))
        snapshot = copy.deepcopy(lore.to_dict())
        base = gather_candidates(LoreSources(character=(NamedBook("Lore", lore),)))

        extended = base.with_extra("Lore", [entry(1, ["elm"])]).with_extra("Cast", [entry(0)])

        assert lore.to_dict() == snapshot
        assert len(base) == 1 and len(extended) == 3
