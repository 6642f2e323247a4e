"""Who was in a narrator scene, and the canonical entry and linked copies its memory makes."""

from datetime import UTC, datetime

import pytest

from charmemory.core.books.answer import SceneAnswer
from charmemory.core.books.entry import EntrySettings
from charmemory.core.books.layout import SceneWriting, place_scene
from charmemory.core.books.scenes import SceneRange, compile_scene
from charmemory.core.books.titles import TitleValues
from charmemory.core.chat.messages import Generated, character_reply, user_message
from charmemory.core.narrator.cast import CastError, read_config
from charmemory.core.narrator.scenes import (
    confirmed,
    narrator_targets,
    owner_ids,
    prompt_for,
    scene_cast,
    suggested,
)
from charmemory.core.narrator.stamps import stamp
from charmemory.formats.chat import Chat, ChatHeader, Message
from charmemory.formats.lorebook import Lorebook, LorebookEntry

AT = datetime(2026, 3, 1, 12, tzinfo=UTC)
CONFIG = read_config(
    {
        "enabled": True,
        "members": [
            {"id": "a", "name": "Alice", "lorebookName": "Alice Book"},
            {"id": "b", "name": "Bob", "lorebookName": "Bob Book"},
            {"id": "c", "name": "Clara", "lorebookName": "Clara Book", "retired": True},
        ],
        "activeCastIds": ["b"],
    }
).config


def chat(*stamps: list[str] | None, user_stamp: list[str] | None = None) -> Chat:
    """A user message before each reply; each reply stamped as given (None: no stamp)."""
    messages: list[Message] = []
    for number, ids in enumerate(stamps):
        asked = user_message("Alex", f"Line {number}", AT)
        if user_stamp is not None:
            stamp(asked, user_stamp)
        answered = character_reply("Narrator", Generated(f"Reply {number}", AT, AT))
        if ids is not None:
            stamp(answered, ids)
        messages += [asked, answered]
    return Chat(ChatHeader({}), messages)


def test_a_stamped_scene_is_the_union_of_its_replies_stamps() -> None:
    found = scene_cast(chat(["a"], ["c", "a"], []), range(6))
    assert (found.member_ids, found.stamped) == (("a", "c"), True)


def test_user_message_stamps_add_nobody_to_a_stamped_scene() -> None:
    found = scene_cast(chat(["a"], user_stamp=["b"]), range(2))
    assert found.member_ids == ("a",)


def test_one_unstamped_reply_makes_the_scene_legacy() -> None:
    found = scene_cast(
        chat(["a"], None, None),
        range(6),
    )
    assert found.unstamped == (3, 5) and not found.stamped
    assert found.member_ids == ("a",)
    with_users = scene_cast(chat(["a"], None, user_stamp=["b"]), range(4))
    assert with_users.member_ids == ("b", "a")  # every stamp of the range recovers ids


def test_the_confirmation_starts_from_stamps_and_the_active_cast_never_retired() -> None:
    found = scene_cast(chat(["c"], None), range(4))
    assert [m.name for m in suggested(CONFIG, found)] == ["Bob"]  # Clara is retired
    found = scene_cast(chat(["a"], None), range(4))
    assert [m.name for m in suggested(CONFIG, found)] == ["Alice", "Bob"]


def test_an_empty_confirmation_means_nobody_and_retired_members_are_refused() -> None:
    assert confirmed(CONFIG, []) == ()
    assert [m.id for m in confirmed(CONFIG, ["bob", "Alice", "Bob"])] == ["b", "a"]
    with pytest.raises(CastError, match="Clara is retired"):
        confirmed(CONFIG, ["Clara"])


def test_the_canonical_entry_and_copies_in_stmbs_narrator_shape() -> None:
    source = chat(["a", "c"])
    scene = compile_scene(
        source, SceneRange(0, 1), chat_id="Narrator - chat", character="Narrator", user="Alex"
    )
    targets = narrator_targets("Omni", CONFIG, ["a", "c"], label="Narrator - chat")
    assert targets.books == ["Omni", "Alice Book", "Clara Book"]  # a retired member too
    books = {name: Lorebook() for name in targets.books}
    writing = SceneWriting(
        scene,
        SceneAnswer("The ferry", "- They crossed.", ("ferry",)),
        "[000] - {{title}}",
        EntrySettings(),
        TitleValues(),
    )
    placed = place_scene(books, targets, writing)
    assert [(p.book, p.uid, p.canonical) for p in placed] == [
        ("Omni", 0, True),
        ("Alice Book", 0, False),
        ("Clara Book", 0, False),
    ]
    canonical = books["Omni"].entries[0].to_dict()
    stmb = {k: v for k, v in canonical.items() if k.startswith("STMB_")}
    assert stmb == {
        "STMB_start": 0,
        "STMB_end": 1,
        "STMB_chatId": "Narrator - chat",
        "STMB_canonical": True,
        "STMB_canonicalLorebook": "Omni",
        "STMB_canonicalEntryUid": 0,
        "STMB_canonicalMemoryNumber": 1,
        "STMB_inclusionGroup": "Narrator-chat-Memory-001",
        "STMB_narratorParticipantIds": ["a", "c"],
    }
    assert "characterFilter" not in canonical and canonical["group"] == "Narrator-chat-Memory-001"
    copy = books["Clara Book"].entries[0].to_dict()
    assert {k: v for k, v in copy.items() if k.startswith("STMB_canonical")} == {
        "STMB_canonical": False,
        "STMB_canonicalLorebook": "Omni",
        "STMB_canonicalEntryUid": 0,
        "STMB_canonicalMemoryNumber": 1,
    }
    assert copy["STMB_narratorOwnerIds"] == ["c"] and "characterFilter" not in copy
    assert list(copy)[-1] == "STMB_narratorOwnerIds"  # where STMB adds it


def test_no_participants_writes_the_canonical_entry_alone() -> None:
    targets = narrator_targets("Omni", CONFIG, [], label="x")
    assert targets.books == ["Omni"] and targets.is_linked
    assert targets.fields == {"STMB_narratorParticipantIds": []}


def entry(**fields: object) -> LorebookEntry:
    return LorebookEntry.from_dict({"uid": 1, "stmemorybooks": True, **fields})


def test_the_regeneration_prompt_follows_ownership() -> None:
    copy = entry(STMB_inclusionGroup="g", STMB_canonical=False, STMB_narratorOwnerIds=["a"])
    canonical = entry(STMB_inclusionGroup="g", STMB_narratorParticipantIds=["a", "b"])
    assert (prompt_for(copy), owner_ids(copy)) == ("character", ("a",))
    assert prompt_for(canonical) == "group"
    assert prompt_for(entry(STMB_narratorOwnerIds=["a"])) == "character"
    assert prompt_for(entry(STMB_narratorParticipantIds=[])) == "group"
    assert prompt_for(entry()) is None
