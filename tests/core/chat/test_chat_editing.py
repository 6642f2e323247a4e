"""Chat changes as SillyTavern makes them, checked against the shapes SillyTavern writes."""

import json
from datetime import UTC, datetime, timedelta

import pytest

from charmemory.core.chat.commands import Command, UnknownCommandError, parse_command
from charmemory.core.chat.editing import (
    add_swipe,
    branch,
    choose_swipe,
    continue_reply,
    delete_last,
    edit_message,
    last_reply,
    set_hidden,
)
from charmemory.core.chat.messages import (
    Generated,
    character_reply,
    greeting,
    iso_time,
    user_message,
)
from charmemory.errors import CharMemoryError, NotFoundError
from charmemory.formats.chat import Chat, ChatHeader, parse_chat
from tests.support.sillytavern_samples import sillytavern_sample

T0 = datetime(2026, 11, 28, 19, 2, 11, 482000, tzinfo=UTC)


def generated(
    text: str, seconds: int = 0, *, reasoning: str = "", stamps: dict | None = None
) -> Generated:
    start = T0 + timedelta(seconds=seconds)
    finish = start + timedelta(seconds=2)
    return Generated(text, start, finish, "openrouter", "m", reasoning, stamps or {})


def chat_of(*messages) -> Chat:
    return Chat(ChatHeader({"chat_metadata": {}, "user_name": "unused"}), list(messages))


def test_dates_are_written_as_javascript_writes_them() -> None:
    assert iso_time(T0) == "2026-11-28T19:02:11.482Z"


def test_new_messages_have_the_keys_sillytavern_writes_in_its_order() -> None:
    lines = (
        sillytavern_sample("Seraphina - 2026-11-28@19h02m11s482ms.jsonl").read_text().split("\n")
    )
    written_reply, written_user = json.loads(lines[1]), json.loads(lines[2])
    reply = character_reply("Seraphina", generated("Hello."))
    assert list(reply.data) == list(written_reply)
    assert list(reply.data["swipe_info"][0]) == list(written_reply["swipe_info"][0])
    user = user_message("Wren", "Hi.", T0)
    assert [k for k in written_user if k != "force_avatar"] == list(user.data)
    # And SillyTavern's own chat round-trips through the parser untouched.
    text = "\n".join(lines)
    assert parse_chat(text).render() == text


def test_a_reply_keeps_its_reasoning_apart_and_each_swipe_its_own_extra() -> None:
    reply = character_reply("Mira", generated("Aye.", reasoning="She weighs it."))
    assert reply.extra["reasoning"] == "She weighs it." and reply.mes == "Aye."
    assert reply.extra["reasoning_duration"] == 2000
    assert add_swipe(reply, generated("Nay.", 60)) == 1
    assert (reply.mes, reply.swipe_id, reply.swipes) == ("Nay.", 1, ("Aye.", "Nay."))
    assert reply.extra["reasoning"] == "" and reply.data["gen_started"].endswith("03:11.482Z")
    choose_swipe(reply, 0)
    assert (reply.mes, reply.extra["reasoning"]) == ("Aye.", "She weighs it.")
    assert reply.data["send_date"] == "2026-11-28T19:02:11.482Z"
    with pytest.raises(NotFoundError, match="no swipe 3: the reply has 2"):
        choose_swipe(reply, 2)


def test_a_continuation_is_appended_to_the_shown_swipe() -> None:
    reply = character_reply("Mira", generated("The storm"))
    add_swipe(reply, generated("The calm", 30))
    continue_reply(reply, generated(" broke at dawn.", 60, reasoning="more"))
    assert reply.mes == "The calm broke at dawn."
    assert reply.swipes == ("The storm", "The calm broke at dawn.")
    assert reply.swipe_info[1]["extra"]["reasoning"] == "more"
    assert reply.swipe_info[0]["extra"]["reasoning"] == ""


def test_stamps_other_parts_add_follow_each_swipe() -> None:
    reply = character_reply(
        "Narrator", generated("A.", stamps={"narratorCast": {"memberIds": ["a"]}})
    )
    add_swipe(reply, generated("B.", 10, stamps={"narratorCast": {"memberIds": ["b"]}}))
    choose_swipe(reply, 0)
    assert reply.extra["narratorCast"] == {"memberIds": ["a"]}
    choose_swipe(reply, 1)
    assert reply.extra["narratorCast"] == {"memberIds": ["b"]}


def test_a_greeting_offers_the_alternate_greetings_as_swipes() -> None:
    plain = greeting("Mira", "Hello.", [], T0)
    assert "swipes" not in plain.data and plain.mes == "Hello."
    with_alternates = greeting("Mira", "Hello.", ["Ahoy.", "Well met."], T0)
    assert with_alternates.swipes == ("Hello.", "Ahoy.", "Well met.")
    assert with_alternates.swipe_id == 0 and with_alternates.data["swipe_info"] == []
    assert greeting("Mira", "", ["Ahoy."], T0).mes == "Ahoy."


def test_edit_delete_and_hide() -> None:
    chat = chat_of(
        greeting("Mira", "Hello.", [], T0),
        user_message("Alex", "Hi.", T0),
        character_reply("Mira", generated("Welcome aboard.")),
    )
    edit_message(chat, 2, "Welcome aboard, Alex.")
    assert chat.messages[2].mes == chat.messages[2].swipes[0] == "Welcome aboard, Alex."
    assert set_hidden(chat, 0, 1, True) == [0, 1] and chat.messages[1].is_hidden
    assert set_hidden(chat, 0, 2, True) == [2]
    assert last_reply(chat)[0] == 2
    assert [m.mes for m in delete_last(chat, 2)] == ["Hi.", "Welcome aboard, Alex."]
    with pytest.raises(CharMemoryError, match="only 1 messages"):
        delete_last(chat, 2)
    with pytest.raises(NotFoundError, match="no message 5"):
        edit_message(chat, 5, "x")


def test_a_branch_holds_the_chat_up_to_a_message_and_points_back() -> None:
    chat = chat_of(
        greeting("Mira", "Hello.", [], T0),
        user_message("Alex", "Hi.", T0),
        character_reply("Mira", generated("Welcome.")),
    )
    name, copy = branch(chat, 1, "Mira - 2026-11-28@19h02m11s482ms", existing=())
    assert name == "Mira - 2026-11-28@19h02m11s482ms - Branch #1"
    assert [m.mes for m in copy.messages] == ["Hello.", "Hi."]
    assert copy.header.chat_metadata["main_chat"] == "Mira - 2026-11-28@19h02m11s482ms"
    assert chat.messages[1].extra["branches"] == [name]
    again, _ = branch(chat, 1, "Mira - 2026-11-28@19h02m11s482ms", existing=(name,))
    assert again == f"{name} (2)"
    copy.messages[0].data["mes"] = "changed"
    assert chat.messages[0].mes == "Hello."  # the branch is a copy


@pytest.mark.parametrize(
    ("typed", "command"),
    [
        ("/extract-memories", Command("extract-memories")),
        ("/hide 4-9", Command("hide", 4, 9)),
        ("/unhide 3", Command("unhide", 3, 3)),
        ("/branch", Command("branch")),
        ("/branch 12", Command("branch", 12)),
        ("/swipe 2", Command("swipe", 2)),
        ("/del 3", Command("del", 3)),
        ("  /Continue ", Command("continue")),
    ],
)
def test_chat_commands(typed: str, command: Command) -> None:
    assert parse_command(typed) == command


@pytest.mark.parametrize(
    ("typed", "message"),
    [
        ("/teleport", "unknown command /teleport; commands: /extract-memories"),
        ("/hide", "/hide needs A-B"),
        ("/swipe 1-2", "/swipe needs N"),
        ("/del 0", "a number from 1"),
        ("/continue now", "takes nothing"),
    ],
)
def test_bad_commands_say_what_they_need(typed: str, message: str) -> None:
    with pytest.raises((UnknownCommandError, CharMemoryError), match=message):
        parse_command(typed)
