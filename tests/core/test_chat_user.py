"""The person's name in a chat: never SillyTavern's "unused" placeholder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from charmemory.core.chat_user import chat_user_name
from charmemory.formats.chat import Chat, parse_chat
from tests.support.sillytavern_samples import sillytavern_sample

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "chats"
UNUSED = {"chat_metadata": {}, "user_name": "unused", "character_name": "unused"}


def chat_of(header: dict[str, object] | None, *messages: tuple[object, bool]) -> Chat:
    """A chat with the given header and (name, is_user) messages."""
    lines = [] if header is None else [json.dumps(header)]
    lines += [json.dumps({"name": name, "is_user": user, "mes": "..."}) for name, user in messages]
    return parse_chat("\n".join(lines))


def test_a_1_15_chat_takes_the_name_from_the_person_s_messages() -> None:
    text = sillytavern_sample("Seraphina - 2026-11-28@19h02m11s482ms.jsonl").read_text("utf-8")

    assert chat_user_name(parse_chat(text)) == "Wren"


def test_a_pre_1_15_chat_takes_the_header_s_name() -> None:
    text = (FIXTURES / "Seraphina - 2024-07-05@14h20m05s.jsonl").read_text("utf-8")

    assert chat_user_name(parse_chat(text)) == "Wren"


def test_the_header_wins_over_the_messages() -> None:
    chat = chat_of({"user_name": "Sam", "character_name": "Hale"}, ("Traveller", True))

    assert chat_user_name(chat) == "Sam"


def test_the_most_common_name_on_the_person_s_messages_wins() -> None:
    chat = chat_of(
        UNUSED,
        ("Traveller", True),
        ("Wren", True),
        ("Traveller", True),
        ("Wren", False),  # a character of that name does not count
        ("Wren", False),
    )

    assert chat_user_name(chat) == "Traveller"


def test_of_equally_common_names_the_later_persona_wins() -> None:
    chat = chat_of(UNUSED, ("Traveller", True), ("Traveller", True), ("Wren", True), ("Wren", True))

    assert chat_user_name(chat) == "Wren"


def test_a_persona_given_wins_over_everything() -> None:
    chat = chat_of({"user_name": "Sam", "character_name": "Hale"}, ("Sam", True))

    assert chat_user_name(chat, persona="Ana") == "Ana"
    assert chat_user_name(chat, persona="  Ana ") == "Ana"
    assert chat_user_name(chat, persona="  ") == "Sam"


@pytest.mark.parametrize(
    "chat",
    [
        chat_of(UNUSED),
        chat_of(UNUSED, ("Seraphina", False)),
        chat_of(UNUSED, ("", True), ("  ", True), (None, True)),
        chat_of({"user_name": "", "character_name": "Hale"}),
        chat_of(None),
    ],
    ids=["no messages", "only the character", "blank names", "blank header", "empty file"],
)
def test_with_no_name_anywhere_the_person_is_user(chat: Chat) -> None:
    assert chat_user_name(chat) == "User"


def test_unused_in_any_case_is_never_the_name() -> None:
    chat = chat_of({"user_name": " Unused", "character_name": "unused"}, ("Wren", True))

    assert chat_user_name(chat) == "Wren"
