"""Prompt assembly in SillyTavern's default Chat Completion order."""

from __future__ import annotations

import random

import pytest

from charmemory.core.injection import Injection
from charmemory.core.prompt import Persona, PromptRequest, PromptSettings, build_prompt
from charmemory.core.world_info import LoreSources, NamedBook, WorldInfoSettings, gather_candidates
from charmemory.errors import ContextTooSmallError
from charmemory.formats.chat import Message
from tests.support.lore import book, entry
from tests.support.prompts import NOW, card, chat, prompt, shape

MAIN = "Write Seraphina's next reply in a fictional chat between Seraphina and Wren."
FULL_CARD = card(
    description="{{char}} guards the glade.",
    personality="gentle",
    scenario="{{user}} wakes up.",
    mes_example="<START>\n{{user}}: Hi\n{{char}}: Hello.",
)
LORE = NamedBook(
    "Lore",
    book(
        entry(0, ["glade"], "Before: the glade is warded.", position=0),
        entry(1, ["glade"], "After: the glade heals.", position=1),
    ),
)


def memory(text: str = "Related information:\n- Wren fears wolves.", **place) -> Injection:
    options = {"position": "in_chat", "depth": 4, "role": "system", **place}
    return Injection(text, ("m1",), (), 9, options["position"], options["depth"], options["role"])


def test_sections_follow_the_default_order():
    result = prompt(
        FULL_CARD,
        chat("Welcome to the glade.", ("Wren", "Thanks.")),
        sources=LoreSources(character=(LORE,)),
        persona=Persona("Wren", "A traveller."),
    )

    assert shape(result) == [
        ("system", "main_prompt", MAIN),
        ("system", "world_info_before", "Before: the glade is warded."),
        ("system", "persona_description", "A traveller."),
        ("system", "char_description", "Seraphina guards the glade."),
        ("system", "char_personality", "[Seraphina's personality: gentle]"),
        ("system", "scenario", "[Circumstances and context of the dialogue: Wren wakes up.]"),
        ("system", "world_info_after", "After: the glade heals."),
        ("system", "dialogue_examples", "[Example Chat]"),
        ("system", "dialogue_examples", "Hi"),
        ("system", "dialogue_examples", "Hello."),
        ("system", "chat_history", "[Start a new Chat]"),
        ("assistant", "chat_history", "Welcome to the glade."),
        ("user", "chat_history", "Thanks."),
    ]
    names = [m.name for m in result.prompt.messages if m.section == "dialogue_examples"]
    assert names == [None, "example_user", "example_assistant"]


def test_empty_sections_are_left_out():
    assert shape(prompt(card(), chat())) == [
        ("system", "main_prompt", MAIN),
        ("system", "chat_history", "[Start a new Chat]"),
    ]


class TestCardOverrides:
    def test_the_card_replaces_main_and_post_history_with_original_inside(self):
        overriding = card(
            system_prompt="{{original}} Stay gentle.", post_history_instructions="Be brief."
        )

        result = prompt(
            overriding, chat("Hi."), settings=PromptSettings(post_history_instructions="Old.")
        )

        assert shape(result)[0] == ("system", "main_prompt", f"{MAIN} Stay gentle.")
        assert shape(result)[-1] == ("system", "post_history_instructions", "Be brief.")

    def test_overrides_can_be_forbidden(self):
        overriding = card(system_prompt="Card main.", post_history_instructions="Card post.")
        settings = PromptSettings(
            forbid_card_overrides=True, post_history_instructions="Preset post."
        )

        result = prompt(overriding, chat("Hi."), settings=settings)

        assert shape(result)[0][2] == MAIN
        assert shape(result)[-1] == ("system", "post_history_instructions", "Preset post.")


def test_the_chat_scenario_wins_over_the_cards():
    result = prompt(
        card(scenario="Card scenario."), chat("Hi.", metadata={"scenario": "Chat scenario."})
    )

    assert (
        "system",
        "scenario",
        "[Circumstances and context of the dialogue: Chat scenario.]",
    ) in shape(result)


def test_the_world_info_format_wraps_each_section():
    settings = PromptSettings(world_info_format="[Lore:\n{0}]")

    result = prompt(
        card(), chat("In the glade."), sources=LoreSources(character=(LORE,)), settings=settings
    )

    assert shape(result)[1] == (
        "system",
        "world_info_before",
        "[Lore:\nBefore: the glade is warded.]",
    )


class TestChatHistory:
    def test_hidden_messages_are_left_out_and_narration_is_a_system_message(self):
        history = chat("One.", ("Wren", "Two."), "Three.")
        history.messages[1].data["is_system"] = True
        history.messages[2].set_extra("type", "narrator")

        assert shape(prompt(card(), history))[2:] == [
            ("assistant", "chat_history", "One."),
            ("system", "chat_history", "Three."),
        ]

    def test_a_swipe_leaves_out_the_message_being_replaced(self):
        result = prompt(card(), chat(("Wren", "Hi."), "Old answer."), generation_type="swipe")

        assert [m.content for m in result.prompt.messages][-1] == "Hi."

    def test_macros_are_replaced_in_messages(self):
        result = prompt(card(), chat("Hello, {{user}}."))

        assert shape(result)[-1][2] == "Hello, Wren."

    @pytest.mark.parametrize(
        ("behavior", "expected"),
        [
            ("default", ["Hi.", "Kael: Psst."]),
            ("none", ["Hi.", "Psst."]),
            ("content", ["Wren: Hi.", "Kael: Psst."]),
        ],
    )
    def test_names_behavior(self, behavior: str, expected: list[str]):
        history = chat(("Wren", "Hi."), ("Kael", "Psst."))
        history.messages[0].data["force_avatar"] = "persona.png"
        history.messages[1].data["force_avatar"] = "kael.png"

        result = prompt(card(), history, settings=PromptSettings(names_behavior=behavior))

        assert [m.content for m in result.prompt.messages[2:]] == expected


class TestInjections:
    history = chat(*[(("Wren" if i % 2 else "Seraphina"), f"m{i}") for i in range(6)])

    def contents(self, result) -> list[str]:
        return [
            m.content
            for m in result.prompt.messages
            if m.section in ("chat_history", "in_chat_injections")
        ]

    def test_memory_goes_in_at_its_depth(self):
        result = prompt(card(), self.history, memory=memory(depth=2))

        assert self.contents(result) == [
            "[Start a new Chat]",
            "m0",
            "m1",
            "m2",
            "m3",
            "Related information:\n- Wren fears wolves.",
            "m4",
            "m5",
        ]
        injected = [m for m in result.prompt.messages if m.section == "in_chat_injections"]
        assert [(m.role, m.sources) for m in injected] == [("system", ("memory",))]

    def test_injections_at_one_depth_and_role_share_a_message_in_sillytaverns_order(self):
        depth_card = card(
            extensions={"depth_prompt": {"prompt": "Depth prompt.", "depth": 0, "role": "system"}}
        )
        lore = NamedBook("Lore", book(entry(0, ["m5"], "WI at depth.", position=4, depth=0)))
        metadata = {"note_prompt": "Note.", "note_depth": 0, "note_position": 1, "note_interval": 1}
        history = chat("m0", ("Wren", "m5"), metadata=metadata)

        result = prompt(
            depth_card, history, memory=memory(depth=0), sources=LoreSources(character=(lore,))
        )

        last = result.prompt.messages[-1]
        assert (
            last.content
            == "Note.\nRelated information:\n- Wren fears wolves.\nDepth prompt.\nWI at depth."
        )
        assert last.sources == ("authors_note", "memory", "depth_prompt", "world_info")

    def test_at_one_depth_the_system_message_is_closest_to_the_end(self):
        lore = NamedBook(
            "Lore",
            book(
                entry(0, ["m5"], "as user", position=4, depth=0, role=1),
                entry(1, ["m5"], "as assistant", position=4, depth=0, role=2),
            ),
        )
        result = prompt(
            card(),
            self.history,
            memory=memory("as system", depth=0),
            sources=LoreSources(character=(lore,)),
        )

        assert self.contents(result)[-3:] == ["as assistant", "as user", "as system"]

    def test_an_injection_deeper_than_the_chat_goes_first(self):
        result = prompt(card(), chat("only"), memory=memory("deep", depth=9))

        assert self.contents(result) == ["[Start a new Chat]", "deep", "only"]

    @pytest.mark.parametrize(
        ("position", "expected"),
        [
            ("in_prompt", ["main_prompt", "memory", "chat_history"]),
            ("before_prompt", ["memory", "main_prompt", "chat_history"]),
        ],
    )
    def test_memory_next_to_the_main_prompt(self, position: str, expected: list[str]):
        result = prompt(card(), chat(), memory=memory(position=position))

        assert [m.section for m in result.prompt.messages] == expected


class TestAuthorsNote:
    @pytest.mark.parametrize(
        ("metadata", "expected"),
        [
            (
                {"note_prompt": "Note.", "note_position": 0},
                ["main_prompt", "authors_note", "memory", "chat_history"],
            ),
            (
                {"note_prompt": "Note.", "note_position": 2},
                ["memory", "authors_note", "main_prompt", "chat_history"],
            ),
        ],
    )
    def test_next_to_the_main_prompt(self, metadata, expected):
        place = "in_prompt" if metadata["note_position"] == 0 else "before_prompt"

        result = prompt(card(), chat(metadata=metadata), memory=memory(position=place))

        assert [m.section for m in result.prompt.messages] == expected

    def test_in_chat_by_default_at_depth_four(self):
        history = chat(*[f"m{i}" for i in range(6)], metadata={"note_prompt": "Note."})

        contents = [m.content for m in prompt(card(), history).prompt.messages]

        assert (
            contents[-5:] == ["m1", "Note.", "m2", "m3", "m4", "m5"][-5:]
            or contents.index("Note.") == 4
        )

    @pytest.mark.parametrize(
        ("interval", "user_messages", "due"),
        [(0, 3, False), (1, 0, True), (2, 1, False), (2, 2, True), (3, 4, False), (3, 6, True)],
    )
    def test_the_interval_counts_user_messages(self, interval: int, user_messages: int, due: bool):
        metadata = {"note_prompt": "Note.", "note_interval": interval}
        history = chat(*[("Wren", f"u{i}") for i in range(user_messages)], metadata=metadata)

        contents = [m.content for m in prompt(card(), history).prompt.messages]

        assert ("Note." in contents) is due

    def test_world_info_joins_the_note_only_when_it_is_due(self):
        lore = NamedBook(
            "Lore",
            book(
                entry(0, ["glade"], "Top.", position=2), entry(1, ["glade"], "Bottom.", position=3)
            ),
        )
        due = chat(("Wren", "The glade."), metadata={"note_prompt": "Note.", "note_depth": 0})
        not_due = chat(
            ("Wren", "The glade."), metadata={"note_prompt": "Note.", "note_interval": 2}
        )

        assert prompt(card(), due, sources=LoreSources(character=(lore,))).prompt.messages[
            -1
        ].content == ("Top.\nNote.\nBottom.")
        assert "Top." not in [
            m.content
            for m in prompt(card(), not_due, sources=LoreSources(character=(lore,))).prompt.messages
        ]


class TestBudget:
    def long_chat(self):
        return chat(*[(("Wren" if i % 2 else "Seraphina"), "x" * 40) for i in range(10)])

    def test_the_oldest_messages_go_first(self):
        # 120 - 20 for the response - 3 to prime it = 97 tokens; the main prompt takes
        # 19 + 3 and the new-chat marker 5 + 3, which leaves 67: five messages of 10 + 3.
        settings = PromptSettings(context_size=120, response_length=20)

        result = prompt(card(), self.long_chat(), settings=settings)

        ids = [m.message_id for m in result.prompt.messages if m.message_id is not None]
        assert ids == [5, 6, 7, 8, 9]
        assert result.prompt.last_in_context_message_id == 5
        assert result.prompt.dropped_message_ids == (0, 1, 2, 3, 4)
        assert result.metadata_updates["lastInContextMessageId"] == 5
        assert result.prompt.tokens <= settings.context_size - settings.response_length

    def test_examples_give_way_to_the_chat_unless_pinned(self):
        examples = card(mes_example="<START>\nWren: " + "e" * 40 + "\nSeraphina: " + "f" * 40)
        settings = PromptSettings(context_size=160, response_length=20)

        loose = prompt(examples, self.long_chat(), settings=settings)
        pinned = prompt(
            examples,
            self.long_chat(),
            settings=PromptSettings(context_size=160, response_length=20, pin_examples=True),
        )

        assert "dialogue_examples" not in loose.prompt.section_tokens
        assert pinned.prompt.section_tokens["dialogue_examples"] > 0
        assert len(pinned.prompt.dropped_message_ids) > len(loose.prompt.dropped_message_ids)

    def test_fixed_parts_that_do_not_fit_are_an_error(self):
        with pytest.raises(ContextTooSmallError, match="fixed parts need"):
            prompt(
                card(description="d" * 4000), chat("Hi."), settings=PromptSettings(context_size=600)
            )

    def test_the_world_info_budget_is_a_share_of_the_context_less_the_response(self):
        result = prompt(
            card(), chat("Hi."), settings=PromptSettings(context_size=1000, response_length=200)
        )

        assert result.world_info.budget == 200

    def test_section_tokens_add_up(self):
        result = prompt(
            FULL_CARD, chat("Hi.", ("Wren", "Hello.")), sources=LoreSources(character=(LORE,))
        )

        assert sum(result.prompt.section_tokens.values()) + 3 == result.prompt.tokens


def test_squashing_merges_runs_of_unnamed_system_messages():
    result = prompt(FULL_CARD, chat("Hi."), settings=PromptSettings(squash_system_messages=True))

    assert [(m.role, m.sections, m.name) for m in result.prompt.messages] == [
        ("system", ("main_prompt", "char_description", "char_personality", "scenario"), None),
        ("system", ("dialogue_examples",), None),
        ("system", ("dialogue_examples",), "example_user"),
        ("system", ("dialogue_examples",), "example_assistant"),
        ("system", ("chat_history",), None),
        ("assistant", ("chat_history",), None),
    ]
    assert result.prompt.messages[0].content.startswith(f"{MAIN}\nSeraphina guards the glade.")


def test_timed_effects_and_the_context_marker_are_returned_for_the_chat_metadata():
    lore = NamedBook("Lore", book(entry(0, ["glade"], "Warded.", sticky=2)))

    result = prompt(card(), chat("The glade."), sources=LoreSources(character=(lore,)))

    assert result.metadata_updates["timedWorldInfo"]["sticky"]["Lore.0"]["end"] == 3
    assert result.metadata_updates["lastInContextMessageId"] == 0


def test_entries_may_scan_the_card_and_persona():
    lore = NamedBook(
        "Lore",
        book(entry(0, ["traveller"], "Travellers are welcome.", matchPersonaDescription=True)),
    )

    result = prompt(
        card(),
        chat("Hi."),
        sources=LoreSources(character=(lore,)),
        persona=Persona("Wren", "A traveller."),
    )

    assert [a.entry.uid for a in result.world_info.activated] == [0]


def test_the_authors_note_is_scanned_when_the_setting_says_so():
    lore = NamedBook("Lore", book(entry(0, ["moon"], "The moon is full.")))
    history = chat("Hi.", metadata={"note_prompt": "Mention the moon."})

    plain = prompt(card(), history, sources=LoreSources(character=(lore,)))
    scanning = prompt(
        card(),
        history,
        sources=LoreSources(character=(lore,)),
        world_info=WorldInfoSettings(scan_injections=True),
    )

    assert plain.world_info.activated == ()
    assert [a.entry.uid for a in scanning.world_info.activated] == [0]


def test_outlets_are_filled_in_prompts_that_ask_for_them():
    lore = NamedBook(
        "Lore", book(entry(0, ["glade"], "Rain falls.", position=7, outletName="Weather"))
    )
    settings = PromptSettings(main_prompt="Weather: {{outlet::Weather}}")

    result = prompt(
        card(), chat("The glade."), sources=LoreSources(character=(lore,)), settings=settings
    )

    assert shape(result)[0] == ("system", "main_prompt", "Weather: Rain falls.")


def test_messages_carry_their_chat_ids():
    history = chat("a", ("Wren", "b"))
    history.messages.insert(
        1, Message.new(name="Wren", mes="hidden", is_user=True, send_date="x", is_system=True)
    )

    ids = [m.message_id for m in prompt(card(), history).prompt.messages]

    assert ids == [None, None, 0, 2]


def test_the_greeting_is_scanned_with_its_macros_replaced():
    lore = NamedBook("Lore", book(entry(0, ["Wren"], "Wren is a herbalist.")))

    result = prompt(card(), chat("Welcome, {{user}}."), sources=LoreSources(character=(lore,)))

    assert [a.entry.uid for a in result.world_info.activated] == [0]


def test_idle_duration_counts_from_the_users_message_before_the_last():
    settings = PromptSettings(main_prompt="Idle for {{idle_duration}}.")
    history = chat("m0", ("Wren", "m1"), "m2")  # sent 19:00, 19:01, 19:02; now is 20:00

    assert shape(prompt(card(), history, settings=settings))[0][2] == "Idle for an hour."


def test_extra_candidates_reach_the_prompt_and_the_explanations():
    lore = LoreSources(character=(LORE,))
    history = chat("Kael waits in the glade.")
    cast = [entry(0, ["Kael"], "Kael is a ranger.")]
    candidates = gather_candidates(lore).with_extra("Cast: Kael", cast)
    request = PromptRequest(card(), history, Persona("Wren"))

    base = prompt(card(), history, sources=lore)
    extended = build_prompt(request, candidates, rng=random.Random(1), now=NOW)

    assert "Kael is a ranger." not in shape(base)[1][2]
    assert "Kael is a ranger." in shape(extended)[1][2]
    explained = [(x.book, x.uid, x.activated) for x in extended.world_info.explanations()]
    assert ("Cast: Kael", 0, True) in explained
