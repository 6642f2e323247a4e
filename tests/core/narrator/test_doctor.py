"""`charmemory doctor`'s checks of a narrator chat, and its explanation of one generation."""

from datetime import UTC, datetime

from charmemory.core.chat.messages import Generated, character_reply, user_message
from charmemory.core.narrator.cast import read_config
from charmemory.core.narrator.doctor import check, explain, unstamped_stretches
from charmemory.core.narrator.mode import activation, write_config
from charmemory.core.narrator.stamps import stamp
from charmemory.formats.chat import Chat, ChatHeader, Message

AT = datetime(2026, 3, 1, 12, tzinfo=UTC)


def narrator_chat(stamps: list[list[str] | None], members: list[dict], omniscient: str) -> Chat:
    header = ChatHeader({"chat_metadata": {"STMemoryBooks": {"manualLorebook": omniscient}}})
    write_config(
        header, read_config({"enabled": True, "members": members, "activeCastIds": []}).config
    )
    messages: list[Message] = []
    for ids in stamps:
        messages.append(user_message("Alex", "hi", AT))
        answer = character_reply("Narrator", Generated("ok", AT, AT))
        if ids is not None:
            stamp(answer, ids)
        messages.append(answer)
    return Chat(header, messages)


MEMBERS = [
    {"id": "a", "name": "Alice", "lorebookName": "Alice Book"},
    {"id": "b", "name": "Bob", "lorebookName": "Alice Book", "retired": True},
    {"id": "c", "name": "alicé", "lorebookName": "Omni"},
]


def test_every_check_with_its_problems_named() -> None:
    chat = narrator_chat([None, None, ["a"], ["ghost"], None], MEMBERS, "Omni")
    state = activation(chat.header, group_chat=False, lorebook_mode="manual")
    found = [
        str(f)
        for f in check(
            state,
            group_chat=False,
            lorebook_mode="manual",
            books=["Alice Book"],
            chat=chat,
            dropped=["cast member 4 is not an object"],
        )
    ]
    assert found == [
        "ok: a one-on-one chat",
        "ok: manual lorebook mode is on (books.lorebook_mode: manual)",
        "ok: narrator mode is enabled",
        "PROBLEM: omniscient book 'Omni' is missing",
        "PROBLEM: dropped while reading the cast: cast member 4 is not an object",
        "ok: Alice: 'Alice Book'",
        "PROBLEM: Bob (retired) shares the memory book 'Alice Book' with Alice",
        "PROBLEM: the memory book 'Omni' of alicé does not exist",
        "PROBLEM: alicé and Alice are one name (case or accents)",
        "PROBLEM: messages 7 are stamped with ghost: no member",
        "PROBLEM: replies without a cast stamp in messages 1-3, 9: scenes there need their "
        "participants confirmed (charmemory scene ... --participants)",
    ]


def test_the_stretches_of_unstamped_replies() -> None:
    chat = narrator_chat([None, ["a"], None, None, ["a"]], MEMBERS, "Omni")
    assert unstamped_stretches(chat) == [(1, 1), (5, 7)]


def test_explaining_a_generation_from_its_stamp_and_its_record() -> None:
    members = [MEMBERS[0], {"id": "d", "name": "Dora", "lorebookName": "Dora Book"}]
    chat = narrator_chat([["a"], None], members, "Omni")
    state = activation(chat.header, group_chat=False, lorebook_mode="manual")
    alice, dora = state.config.members
    books = ["Omni", "Alice Book", "Dora Book"]
    record = {
        "number": 4,
        "kind": "normal",
        "lorebooks": [{"source": "narrator cast", "name": "Alice Book", "entries": 2}],
        "narrator_cast": ["a"],
    }
    lines = explain(state, alice, 1, chat, books=books, record=record)
    assert lines[0] == "message 1 is stamped with the cast of its generation: Alice"
    assert lines[-1] == "so Alice's book 'Alice Book' was in the generation of message 1"
    assert "generation 4 (normal), the newest kept for message 1, read 'Alice Book'" in lines[3]
    lines = explain(state, dora, 1, chat, books=books, record=None)
    assert "Dora was not in that snapshot" in lines[1]
    assert lines[-1] == "so Dora's book 'Dora Book' was not in the generation of message 1"
    lines = explain(state, alice, 3, chat, books=books, record=None)
    assert "carries no cast stamp" in lines[0] and lines[-1].endswith(
        "was not in the generation of message 3"
    )
    assert "is the user's" in explain(state, alice, 0, chat, books=books, record=None)[0]
