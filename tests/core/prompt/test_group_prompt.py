"""A group member's prompt, as SillyTavern builds it for the speaking member."""

from __future__ import annotations

from charmemory.core.prompt import PromptSettings
from tests.support.prompts import card, chat, prompt, shape

CREW = ("Seraphina", "Mira", "Abel")


def group_chat():
    return chat(
        "Welcome to the glade.",
        ("Mira", "Captain Mira Vance."),
        ("Wren", "Hello, both of you."),
        ("System", "Night falls."),
    )


def test_the_speaker_sees_the_group_opening_names_on_every_line_and_a_nudge() -> None:
    result = prompt(card(), group_chat(), group=CREW)
    assert shape(result) == [
        (
            "system",
            "main_prompt",
            "Write Seraphina's next reply in a fictional chat between Seraphina, Mira, Abel "
            "and Wren.",
        ),
        (
            "system",
            "chat_history",
            "[Start a new group chat. Group members: Seraphina, Mira, Abel]",
        ),
        ("assistant", "chat_history", "Seraphina: Welcome to the glade."),
        ("assistant", "chat_history", "Mira: Captain Mira Vance."),
        ("user", "chat_history", "Hello, both of you."),
        ("assistant", "chat_history", "System: Night falls."),
        ("system", "chat_history", "[Write the next reply only as Seraphina.]"),
    ]


def test_the_nudge_comes_before_the_post_history_instructions_and_is_never_squashed() -> None:
    settings = PromptSettings(post_history_instructions="Be brief.", squash_system_messages=True)
    messages = shape(prompt(card(), chat("Hi."), group=CREW, settings=settings))
    assert messages[-2:] == [
        ("system", "chat_history", "[Write the next reply only as Seraphina.]"),
        ("system", "post_history_instructions", "Be brief."),
    ]


def test_group_macros_name_every_member() -> None:
    speaker = card(description="{{char}} travels with {{group}}. <GROUP>")
    messages = shape(prompt(speaker, chat(), group=CREW))
    assert (
        "system",
        "char_description",
        "Seraphina travels with Seraphina, Mira, Abel. Seraphina, Mira, Abel",
    ) in messages


def test_a_solo_chat_is_unchanged() -> None:
    messages = shape(prompt(card(description="{{group}}"), chat(("Mira", "Hi."))))
    assert ("system", "char_description", "Seraphina") in messages
    assert ("system", "chat_history", "[Start a new Chat]") in messages
    assert ("assistant", "chat_history", "Hi.") in messages
    assert not any("Write the next reply only" in content for _, _, content in messages)
