from __future__ import annotations

from charmemory.core.chat.group_joins import heard_from, join_now
from charmemory.formats.chat import Chat, ChatHeader, Message, chat_fingerprints


def chat_of(*texts: str) -> Chat:
    return Chat(
        ChatHeader(),
        [Message.new(name="A", mes=t, is_user=False, send_date="d") for t in texts],
    )


def test_a_member_there_from_the_start_heard_everything() -> None:
    assert heard_from(None, ["x"]) == 0
    assert join_now(chat_of(), "d").at == 0
    assert heard_from(join_now(chat_of(), "d"), chat_fingerprints(chat_of("a"))) == 0


def test_a_late_member_hears_from_its_join_on() -> None:
    chat = chat_of("a", "b", "c")
    join = join_now(chat, "2026-01-01T00:00:00.000Z")
    chat.messages += chat_of("d", "e").messages
    assert heard_from(join, chat_fingerprints(chat)) == 3


def test_deleting_earlier_messages_keeps_the_join_where_it_was() -> None:
    chat = chat_of("a", "b", "c")
    join = join_now(chat, "d")
    chat.messages += chat_of("d", "e").messages
    del chat.messages[0]  # "a" deleted: "c" is now message 1, "d" message 2
    assert heard_from(join, chat_fingerprints(chat)) == 2
    assert chat.messages[2].mes == "d"


def test_a_changed_or_vanished_message_leaves_the_recorded_place() -> None:
    chat = chat_of("a", "b", "c")
    join = join_now(chat, "d")
    chat.messages[2] = chat_of("c edited").messages[0]
    chat.messages += chat_of("d").messages
    assert heard_from(join, chat_fingerprints(chat)) == 3
    del chat.messages[1:]  # cut back below the join: it hears whatever comes next
    assert heard_from(join, chat_fingerprints(chat)) == 1
