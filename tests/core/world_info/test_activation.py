"""The activation rules of SillyTavern's World Info, one table per rule."""

from __future__ import annotations

from typing import Any

import pytest

from charmemory.core.world_info import CardFields, ScanContext
from tests.support.lore import activated, entry, messages, reason_of, scan

CHAT = ("Wren: I walked through the old forest.", "The guardian smiled at me.")


@pytest.mark.parametrize(
    ("fields", "chat", "active"),
    [
        ({"key": ["forest"]}, CHAT, True),
        ({"key": ["Forest"]}, CHAT, True),  # case-insensitive by default
        ({"key": ["Forest"], "caseSensitive": True}, CHAT, False),
        ({"key": ["for"]}, CHAT, False),  # whole words by default
        ({"key": ["for"], "matchWholeWords": False}, CHAT, True),
        ({"key": ["castle", "guardian"]}, CHAT, True),  # any primary key
        ({"key": ["castle"]}, CHAT, False),
        ({"key": []}, CHAT, False),
        ({"key": [""]}, CHAT, False),
        ({"key": [], "constant": True}, CHAT, True),
        ({"key": ["forest"], "disable": True}, CHAT, False),
        ({"key": ["forest"], "constant": True, "disable": True}, CHAT, False),
        ({"key": [], "content": "@@activate\nLore"}, CHAT, True),
        ({"key": ["forest"], "content": "@@dont_activate\nLore"}, CHAT, False),
        ({"key": ["forest"], "constant": True, "content": "@@dont_activate\nLore"}, CHAT, False),
        ({"key": ["/old \\w+est/"]}, CHAT, True),
        ({"key": ["{{user}}"]}, ("Wren: hello",), True),  # keys have their macros replaced
    ],
)
def test_primary_keys(fields: dict[str, Any], chat: tuple[str, ...], active: bool):
    keys = fields.pop("key")
    content = fields.pop("content", "Lore")
    substitute = lambda text: text.replace("{{user}}", "Wren")  # noqa: E731

    result = scan([entry(0, keys, content, **fields)], chat, substitute=substitute)

    assert activated(result) == ([0] if active else [])


@pytest.mark.parametrize(
    ("logic", "secondary", "active"),
    [
        (0, ["guardian"], True),  # AND ANY
        (0, ["castle"], False),
        (0, ["castle", "smiled"], True),
        (1, ["guardian", "smiled"], False),  # NOT ALL: blocked when every one is found
        (1, ["guardian", "castle"], True),
        (1, ["guardian", ""], True),  # an empty key is never found
        (2, ["castle", "moat"], True),  # NOT ANY
        (2, ["castle", "guardian"], False),
        (3, ["guardian", "smiled"], True),  # AND ALL
        (3, ["guardian", "castle"], False),
        (3, ["guardian", ""], False),
        (3, [], True),  # no secondary keys: the primary key decides
        (2, [], True),
    ],
)
def test_secondary_key_logic(logic: int, secondary: list[str], active: bool):
    lore = entry(0, ["forest"], keysecondary=secondary, selectiveLogic=logic)

    assert activated(scan([lore], CHAT)) == ([0] if active else [])


def test_secondary_keys_are_ignored_when_the_entry_is_not_selective():
    lore = entry(0, ["forest"], keysecondary=["castle"], selective=False)

    assert activated(scan([lore], CHAT)) == [0]


@pytest.mark.parametrize(
    ("options", "fields", "active"),
    [
        ({}, {}, False),  # the key is three messages back, the scan depth is 2
        ({"scan_depth": 3}, {}, True),
        ({}, {"scanDepth": 3}, True),
        ({"scan_depth": 3}, {"scanDepth": 1}, False),
        ({"scan_depth": 0}, {"constant": True}, True),
        ({"scan_depth": 0}, {}, False),
    ],
)
def test_scan_depth(options: dict[str, Any], fields: dict[str, Any], active: bool):
    chat = ("A dragon sleeps here.", "Nothing to see.", "Still nothing.")

    result = scan([entry(0, ["dragon"], **fields)], chat, **options)

    assert activated(result) == ([0] if active else [])


def test_names_are_scanned_unless_left_out():
    lore = [entry(0, ["Seraphina"])]
    chat = messages(("Seraphina", "Rest now."))

    assert activated(scan(lore, chat)) == [0]
    assert activated(scan(lore, chat, include_names=False)) == []


def test_a_scan_depth_of_zero_scans_not_even_opted_in_fields():
    context = ScanContext(fields=CardFields(character_description="A guardian of the glade."))
    lore = entry(0, ["glade"], matchCharacterDescription=True, scanDepth=0)

    assert activated(scan([lore], context=context)) == []


@pytest.mark.parametrize(
    ("flag", "field"),
    [
        ("matchPersonaDescription", "persona_description"),
        ("matchCharacterDescription", "character_description"),
        ("matchCharacterPersonality", "character_personality"),
        ("matchCharacterDepthPrompt", "character_depth_prompt"),
        ("matchScenario", "scenario"),
        ("matchCreatorNotes", "creator_notes"),
    ],
)
def test_entries_opt_into_scanning_card_and_persona_fields(flag: str, field: str):
    context = ScanContext(
        messages=messages("Hello."), fields=CardFields(**{field: "A silver spring."})
    )
    opted, other = entry(0, ["spring"], **{flag: True}), entry(1, ["spring"])

    result = scan([opted, other], context=context)

    assert activated(result) == [0]
    assert reason_of(result, 0)[1] == f"key 'spring' matched in {field.replace('_', ' ')}"


def test_prompts_scanned_with_the_chat_can_activate_entries():
    context = ScanContext(
        messages=messages("Hello."), injections=(("Author's Note", "Mention the moon."),)
    )

    result = scan([entry(0, ["moon"])], context=context)

    assert reason_of(result, 0) == ("key", "key 'moon' matched in Author's Note")


class TestRecursion:
    chain = (
        entry(0, ["Bessie"], "Bessie is a cow and is friends with Rufus."),
        entry(1, ["Rufus"], "Rufus is a dog who chases the Mailman."),
        entry(2, ["Mailman"], "The Mailman fears dogs."),
    )

    def test_activated_content_activates_further_entries(self):
        result = scan(self.chain, ["I met Bessie."])

        assert activated(result) == [0, 1, 2]
        assert reason_of(result, 1) == ("key", "key 'Rufus' matched in the content of Lore#0")
        assert [item.step for item in result.activated] == [1, 2, 3]

    def test_recursion_can_be_turned_off(self):
        assert activated(scan(self.chain, ["I met Bessie."], recursive=False)) == [0]

    def test_max_recursion_steps_caps_the_passes(self):
        assert activated(scan(self.chain, ["I met Bessie."], max_recursion_steps=2)) == [0, 1]
        assert activated(scan(self.chain, ["I met Bessie."], max_recursion_steps=1)) == [0]

    def test_prevent_recursion_keeps_content_out_of_later_scans(self):
        first = entry(0, ["Bessie"], "Bessie is friends with Rufus.", preventRecursion=True)

        assert activated(scan([first, *self.chain[1:]], ["I met Bessie."])) == [0]

    def test_exclude_recursion_allows_only_the_chat_to_activate(self):
        dog = entry(1, ["Rufus"], "Rufus is a dog.", excludeRecursion=True)

        assert activated(scan([self.chain[0], dog], ["I met Bessie."])) == [0]
        assert activated(scan([self.chain[0], dog], ["I met Bessie and Rufus."])) == [0, 1]
        assert reason_of(scan([self.chain[0], dog], ["I met Bessie."]), 1)[0] == "exclude_recursion"

    def test_delay_until_recursion_waits_for_a_recursion_pass(self):
        dog = entry(1, ["Rufus"], "Rufus is a dog.", delayUntilRecursion=True)

        alone = scan([dog], ["Rufus barks."])
        assert activated(alone) == []
        assert reason_of(alone, 1) == ("delay_until_recursion", "waits for recursion (level 1)")
        with_cow = scan([self.chain[0], dog], ["Rufus barks at Bessie."])
        assert activated(with_cow) == [0, 1]
        assert [item.step for item in with_cow.activated] == [1, 2]

    def test_delay_levels_open_one_after_another(self):
        start = entry(0, ["moon"], "The night begins.")
        level_one = entry(1, ["moon"], "Moonlight.", delayUntilRecursion=1)
        level_two = entry(2, ["moon"], "Moonrise.", delayUntilRecursion=2)

        result = scan([start, level_one, level_two], ["The moon."])

        assert activated(result) == [0, 1, 2]
        assert [item.step for item in result.activated] == [1, 2, 4]

    def test_without_a_first_activation_the_next_level_opens_at_once(self):
        # SillyTavern starts at the lowest level; when the first pass activates
        # nothing, the next pass already runs at the following level.
        level_one = entry(1, ["moon"], "The moon rises over the tide.", delayUntilRecursion=1)
        level_two = entry(2, ["tide"], "The tide turns.", delayUntilRecursion=2)
        also_two = entry(3, ["moon"], "Moonlight.", delayUntilRecursion=2)

        result = scan([level_one, level_two, also_two], ["The moon."])

        assert activated(result) == [1, 3, 2]
        assert [item.step for item in result.activated] == [2, 2, 3]


class TestMinimumActivations:
    chat = ("A dragon sleeps.", "Far away.", "Nothing.", "Still nothing.")

    def test_the_scan_widens_until_enough_entries_activated(self):
        result = scan([entry(0, ["dragon"])], self.chat, min_activations=1)

        assert activated(result) == [0]
        assert result.scan_depth == 4
        assert "scan widened to 4 messages" in reason_of(result, 0)[1]

    def test_the_widening_stops_past_the_maximum_depth(self):
        # As in SillyTavern, the depth is checked before it grows: one past the maximum.
        lore = [entry(0, ["dragon"])]

        assert activated(scan(lore, self.chat, min_activations=1, min_activations_depth_max=3)) == [
            0
        ]
        assert (
            activated(scan(lore, self.chat, min_activations=1, min_activations_depth_max=2)) == []
        )

    def test_widening_does_not_rescan_recursed_content(self):
        lore = [
            entry(0, ["far"], "A dragon was seen.", preventRecursion=False),
            entry(1, ["dragon"], "Dragons hoard gold."),
        ]
        result = scan(lore, ("Far away.", "x", "y"), min_activations=3, recursive=False)

        assert activated(result) == [0]


@pytest.mark.parametrize(
    ("trigger", "triggers", "active"),
    [
        ("normal", [], True),
        ("swipe", [], True),
        ("normal", ["normal"], True),
        ("swipe", ["normal", "continue"], False),
        ("quiet", ["quiet"], True),
        ("impersonate", ["normal"], False),
    ],
)
def test_generation_type_triggers(trigger: str, triggers: list[str], active: bool):
    context = ScanContext(messages=messages("The forest."), generation_type=trigger)

    result = scan([entry(0, ["forest"], triggers=triggers)], context=context)

    assert activated(result) == ([0] if active else [])


@pytest.mark.parametrize(
    ("character_filter", "character", "tags", "active"),
    [
        ({"names": ["Seraphina"], "tags": [], "isExclude": False}, "Seraphina", (), True),
        ({"names": ["Seraphina"], "tags": [], "isExclude": False}, "Kael", (), False),
        ({"names": ["Seraphina"], "tags": [], "isExclude": True}, "Seraphina", (), False),
        ({"names": ["Seraphina"], "tags": [], "isExclude": True}, "Kael", (), True),
        ({"names": [], "tags": ["elf"], "isExclude": False}, "Kael", ("elf",), True),
        ({"names": [], "tags": ["elf"], "isExclude": False}, "Kael", ("human",), False),
        ({"names": [], "tags": ["elf"], "isExclude": True}, "Kael", ("elf",), False),
        ({"names": ["Kael"], "tags": ["elf"], "isExclude": False}, "Kael", ("human",), False),
    ],
)
def test_character_filter(
    character_filter: dict, character: str, tags: tuple[str, ...], active: bool
):
    context = ScanContext(
        messages=messages("The forest."), character=character, character_tags=tags
    )

    result = scan([entry(0, ["forest"], characterFilter=character_filter)], context=context)

    assert activated(result) == ([0] if active else [])
    if not active:
        assert reason_of(result, 0)[0] == "character_filter"


class TestProbability:
    def test_the_roll_uses_the_seeded_random_source(self):
        lore = [entry(uid, ["forest"], probability=50) for uid in range(40)]

        first, again = scan(lore, CHAT, seed=3), scan(lore, CHAT, seed=3)

        assert activated(first) == activated(again)
        assert 5 < len(activated(first)) < 35

    @pytest.mark.parametrize(
        ("probability", "use", "expected"), [(0, True, 0), (100, True, 20), (0, False, 20)]
    )
    def test_edges(self, probability: int, use: bool, expected: int):
        lore = [
            entry(uid, ["forest"], probability=probability, useProbability=use) for uid in range(20)
        ]

        assert len(activated(scan(lore, CHAT))) == expected

    def test_a_failed_roll_is_explained_and_not_retried_by_recursion(self):
        lore = [
            entry(0, ["forest"], "The forest hides a dragon."),
            entry(1, ["forest", "dragon"], "Dragons.", probability=0),
        ]
        result = scan(lore, CHAT)

        assert activated(result) == [0]
        kind, text = reason_of(result, 1)
        assert kind == "probability" and "over its 0%" in text


class TestBudget:
    def test_entries_are_taken_in_candidate_order_so_higher_order_wins(self):
        lore = [
            entry(0, ["forest"], "a" * 40, order=10),
            entry(1, ["forest"], "b" * 40, order=30),
            entry(2, ["forest"], "c" * 40, order=20),
        ]
        # 25 % of 100 tokens = 25; each entry is 11 tokens with its newline.
        result = scan(lore, CHAT, max_context=100)

        assert activated(result) == [1, 2]
        assert result.budget == 25 and result.overflowed
        assert reason_of(result, 0)[0] == "budget"

    def test_ignore_budget_entries_go_in_after_an_overflow(self):
        lore = [
            entry(0, ["forest"], "a" * 200, order=30),
            entry(1, ["forest"], "b" * 40, order=20),
            entry(2, ["forest"], "c" * 40, order=10, ignoreBudget=True),
        ]
        result = scan(lore, CHAT, max_context=100)

        assert activated(result) == [2]
        assert "ignores the budget" in reason_of(result, 2)[1]

    def test_the_cap_lowers_the_budget(self):
        assert scan([], CHAT, max_context=1000).budget == 250
        assert scan([], CHAT, max_context=1000, budget_cap=100).budget == 100
        assert scan([], CHAT, max_context=1000, budget_cap=500).budget == 250
        assert scan([], CHAT, max_context=1000, budget_percent=10).budget == 100
        assert scan([], CHAT, max_context=2, budget_percent=10).budget == 1

    def test_an_overflow_stops_recursion(self):
        lore = [
            entry(0, ["forest"], "x" * 90 + " dragon", order=20),
            entry(1, ["forest"], "y" * 200, order=10),
            entry(2, ["dragon"], "Dragons."),
        ]
        assert activated(scan(lore, CHAT, max_context=200)) == [0]


class TestVectors:
    def entries(self):
        return [entry(uid, [], f"Lore {uid}", vectorized=True) for uid in range(4)]

    def test_the_top_scored_vectorized_entries_activate(self):
        scores = {
            ("Lore", 0): 0.2,
            ("Lore", 1): 0.9,
            ("Lore", 2): 0.5,
            ("Lore", 3): 0.4,
            ("Other", 0): 1.0,
        }

        result = scan(self.entries(), CHAT, vector_scores=scores, vector_max_entries=2)

        assert activated(result) == [1, 2]
        assert reason_of(result, 1) == ("vector", "vector similarity 0.900 (top 2)")
        assert reason_of(result, 3) == (
            "no_key_match",
            "no key matched; vector similarity 0.400 is not in the top 2",
        )

    def test_only_vectorized_entries_are_activated_by_similarity(self):
        plain = entry(0, [], "Plain lore")

        assert activated(scan([plain], CHAT, vector_scores={("Lore", 0): 0.9})) == []

    def test_vector_activation_still_obeys_the_other_rules(self):
        lore = [entry(0, [], "Lore", vectorized=True, probability=0)]

        result = scan(lore, CHAT, vector_scores={("Lore", 0): 0.9})

        assert activated(result) == [] and reason_of(result, 0)[0] == "probability"


def test_every_candidate_is_explained_in_candidate_order():
    lore = [
        entry(0, ["forest"]),
        entry(1, ["castle"]),
        entry(2, []),
        entry(3, ["forest"], disable=True),
        entry(4, ["forest"], keysecondary=["moat"], selectiveLogic=3),
        entry(5, [], constant=True),
    ]
    explained = {
        item.uid: (item.activated, item.reason.value, item.text)
        for item in scan(lore, CHAT).explanations()
    }

    assert explained == {
        0: (True, "key", "key 'forest' matched in message 0 (Wren)"),
        1: (False, "no_key_match", "no key matched in the last 2 messages"),
        2: (False, "no_keys", "has no keys"),
        3: (False, "disabled", "disabled"),
        4: (
            False,
            "secondary_keys",
            "key 'forest' matched in message 0 (Wren), "
            "but AND ALL: only 0 of 1 secondary keys found",
        ),
        5: (True, "constant", "constant"),
    }
