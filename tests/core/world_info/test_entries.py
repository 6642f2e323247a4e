"""Reading entries as SillyTavern does: lenient fields, decorators, and its entry hash."""

from __future__ import annotations

from typing import Any

import pytest

from charmemory.core.world_info.entries import (
    CharacterFilter,
    entry_hash,
    lore_entry,
    parse_decorators,
    string_hash,
)
from charmemory.formats.lorebook import LorebookEntry, parse_lorebook
from tests.support.sillytavern_samples import sillytavern_sample


def read(**fields: Any):
    return lore_entry("Lore", LorebookEntry.from_dict({"uid": 3, **fields}))


def test_a_bare_entry_takes_sillytaverns_defaults():
    entry = read()

    assert (entry.order, entry.position, entry.depth, entry.role) == (100, 0, 4, "system")
    assert (entry.probability, entry.use_probability, entry.group_weight) == (100, True, 100)
    assert (entry.sticky, entry.cooldown, entry.delay, entry.delay_until_recursion) == (0, 0, 0, 0)
    assert entry.scan_depth is entry.case_sensitive is entry.match_whole_words is None
    assert entry.selective and entry.selective_logic == 0
    assert entry.character_filter == CharacterFilter()
    assert entry.triggers == ()


@pytest.mark.parametrize(
    ("fields", "attribute", "value"),
    [
        ({"role": None}, "role", "system"),
        ({"role": 2}, "role", "assistant"),
        ({"role": "user"}, "role", "user"),
        ({"delayUntilRecursion": True}, "delay_until_recursion", 1),
        ({"delayUntilRecursion": False}, "delay_until_recursion", 0),
        ({"delayUntilRecursion": 3}, "delay_until_recursion", 3),
        ({"sticky": 0}, "sticky", 0),
        ({"sticky": None}, "sticky", 0),
        ({"cooldown": 2}, "cooldown", 2),
        ({"delay": -4}, "delay", 0),
        ({"probability": None}, "probability", 100),
        ({"scanDepth": 0}, "scan_depth", 0),
        ({"caseSensitive": True}, "case_sensitive", True),
        ({"matchWholeWords": False}, "match_whole_words", False),
        ({"group": "weather, mood,,"}, "group_names", ("weather", "mood")),
        ({"triggers": ["swipe", "bogus", "normal"]}, "triggers", ("normal", "swipe")),
        (
            {"matchPersonaDescription": True},
            "scan_flags",
            (True, False, False, False, False, False),
        ),
        ({"matchCreatorNotes": 1}, "scan_flags", (False, False, False, False, False, True)),
        (
            {"characterFilter": {"isExclude": True, "names": ["Seraphina", 4], "tags": ["t1"]}},
            "character_filter",
            CharacterFilter(("Seraphina",), ("t1",), True),
        ),
    ],
)
def test_fields_are_read_as_leniently_as_sillytavern(
    fields: dict[str, Any], attribute: str, value: Any
):
    assert getattr(read(**fields), attribute) == value


# Inputs and results of SillyTavern's parseDecorators, run in Node.js.
DECORATED = [
    ("plain", (), "plain"),
    ("@@activate\nText", ("@@activate",), "Text"),
    ("@@dont_activate\nA\nB", ("@@dont_activate",), "A\nB"),
    ("@@unknown\n@@@activate\nText", ("@@activate",), "Text"),
    ("@@activate\n@@@dont_activate\nText", ("@@activate",), "Text"),
    ("@@activate", ("@@activate",), "@@activate"),
    ("@@activate_now\nx", ("@@activate_now",), "x"),
    (" @@activate\nx", (), " @@activate\nx"),
    ("@@future\n@@@unknown2\nx", (), "x"),
    ("@@@activate\nx", (), "x"),
    ("@@activate\n\nx", ("@@activate",), "\nx"),
]


@pytest.mark.parametrize(("content", "decorators", "text"), DECORATED)
def test_decorators_are_split_off_the_content(content: str, decorators: tuple[str, ...], text: str):
    assert parse_decorators(content) == (decorators, text)
    assert read(content=content).content == text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a", 7929297801672961),
        ("b", 8684336938537663),
        ("revenge", 4051478007546757),
        ("revenue", 8309097637345594),
    ],
)
def test_string_hash_is_cyrb53(text: str, expected: int):
    assert string_hash(text) == expected


def test_entry_hash_equals_sillytaverns_for_the_eldoria_book():
    # getStringHash(JSON.stringify(entry)) as SillyTavern's getSortedEntries builds
    # the entry, computed with its code in Node.js.
    book = parse_lorebook(sillytavern_sample("Eldoria.json").read_text(encoding="utf-8"))
    hashes = [entry_hash(lore_entry("Eldoria", entry)) for entry in book.entries.values()]

    assert hashes == [4470182874830101, 8385239381501881, 5878202049954908, 6804702637314989]


def test_entry_hash_covers_decorators_and_non_bmp_text():
    raw = {"uid": 5, "key": ["a"], "content": "@@activate\nHello é 😀", "order": 100}

    assert entry_hash(lore_entry("Lore", LorebookEntry.from_dict(raw))) == 8436815150641136


def test_any_edit_changes_the_entry_hash():
    before = read(content="The oak is old.")
    after = read(content="The oak is older.")

    assert entry_hash(before) != entry_hash(after)
