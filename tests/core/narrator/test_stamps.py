"""Cast stamps on messages and swipes, as STMB writes them, and the snapshot of a generation."""

from datetime import UTC, datetime

from charmemory.core.chat import editing
from charmemory.core.chat.messages import Generated, character_reply, user_message
from charmemory.core.narrator.cast import NarratorConfig, add_member, read_config, set_active
from charmemory.core.narrator.stamps import last_stamped, snapshot, stamp, stamp_of, unstamp
from charmemory.formats.chat import Chat, ChatHeader, Message

AT = datetime(2026, 3, 1, 12, tzinfo=UTC)


def reply(text: str) -> Message:
    return character_reply("Narrator", Generated(text, AT, AT))


def test_a_reply_and_its_shown_swipe_carry_the_stamp() -> None:
    message = reply("Once upon a time.")
    message.set_extra("STMemoryBooks", {"other": 1})
    stamp(message, ["a", "b", "a"])
    expected = {"version": 1, "memberIds": ["a", "b"]}
    assert message.extra["STMemoryBooks"] == {"other": 1, "narratorCast": expected}
    assert message.data["swipe_info"][0]["extra"]["STMemoryBooks"] == {"narratorCast": expected}
    assert stamp_of(message) == ("a", "b")


def test_each_swipe_keeps_its_own_stamp_and_choosing_one_brings_it_back() -> None:
    message = reply("First.")
    stamp(message, ["a"])
    editing.add_swipe(message, Generated("Second.", AT, AT))
    stamp(message, ["b"])
    assert stamp_of(message) == ("b",)
    editing.choose_swipe(message, 0)
    assert stamp_of(message) == ("a",)
    editing.choose_swipe(message, 1)
    assert stamp_of(message) == ("b",)


def test_a_continuation_merges_its_snapshot_after_the_stamp_there() -> None:
    message = reply("Part one.")
    stamp(message, ["b", "a"])
    stamp(message, ["c", "a"], merge=True)
    assert stamp_of(message) == ("b", "a", "c")
    unstamped = reply("Legacy.")
    stamp(unstamped, ["c"], merge=True)
    assert stamp_of(unstamped) == ("c",)


def test_a_user_message_without_swipes_is_stamped_on_its_extra() -> None:
    message = user_message("Alex", "Hi", AT)
    stamp(message, [])
    assert message.extra["STMemoryBooks"]["narratorCast"] == {"version": 1, "memberIds": []}
    assert stamp_of(message) == ()
    assert stamp_of(user_message("Alex", "Hi", AT)) is None


def test_the_last_stamped_reply_skips_user_hidden_and_unstamped_messages() -> None:
    messages = [reply("one"), user_message("Alex", "hi", AT), reply("two"), reply("hidden")]
    stamp(messages[0], ["a"])
    stamp(messages[1], ["user"])
    stamp(messages[3], ["h"])
    messages[3].data["is_system"] = True
    chat = Chat(ChatHeader({}), messages)
    assert last_stamped(chat) == ("a",)
    assert last_stamped(Chat(ChatHeader({}), [reply("x")])) is None


def test_the_snapshot_holds_the_active_cast_and_only_books_of_their_own() -> None:
    config = NarratorConfig(enabled=True)
    for name in ("Alice", "Bob"):
        config = add_member(config, name, f"{name} Book", member_id=name, omniscient="Omni")
    found = snapshot(set_active(config, ["Bob", "Alice"]), "Omni")
    assert (found.member_ids, found.books) == (("Bob", "Alice"), ("Bob Book", "Alice Book"))
    bad = read_config(
        {
            "members": [
                {"id": "a", "name": "A", "lorebookName": "Omni"},
                {"id": "b", "name": "B", "lorebookName": "Shared"},
                {"id": "c", "name": "C", "lorebookName": "Shared", "retired": True},
            ],
            "activeCastIds": ["a", "b"],
        }
    ).config
    assert snapshot(bad, "Omni") == snapshot(bad, "Omni").__class__(("a", "b"), ())


def test_a_swipe_written_outside_narrator_mode_loses_the_stamp_it_inherited() -> None:
    message = reply("First.")
    stamp(message, ["a"])
    editing.add_swipe(message, Generated("Second.", AT, AT))
    assert stamp_of(message) == ("a",)  # copied from the first swipe's extra
    unstamp(message)
    assert stamp_of(message) is None
    assert "narratorCast" not in message.data["swipe_info"][1]["extra"]["STMemoryBooks"]
    editing.choose_swipe(message, 0)
    assert stamp_of(message) == ("a",)
