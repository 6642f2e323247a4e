"""Where a character's memories live: every rule in one value."""

import pytest

from charmemory.core.memory_location import memory_location
from charmemory.core.retrieval import Collection
from charmemory.errors import UnsafePathError

CHAT = "Mira - 2026-02-15@10h00m00s123ms"


def test_one_file_and_one_collection_per_character_by_default() -> None:
    place = memory_location("Captain Mira", CHAT)
    assert place.file == "user/files/Captain_Mira-memories.md"
    assert place.chat is None
    assert place.collection == place.bullets == Collection("char:Captain Mira", "Captain Mira")


def test_per_chat_mode_gives_each_chat_its_file_and_collection() -> None:
    place = memory_location("Mira", CHAT, per_chat=True)
    assert place.file == "user/files/Mira-chatMira_-_2026-02-15_10h00m00s123ms-memories.md"
    assert place.chat == CHAT
    assert place.bullets == Collection(f"char:Mira/chat:{CHAT}", "Mira")
    # Without a chat, per-chat mode falls back to the character's own file.
    assert memory_location("Mira", None, per_chat=True).file == "user/files/Mira-memories.md"


def test_the_override_names_the_file_and_per_chat_mode_adds_the_chat() -> None:
    assert memory_location("Mira", CHAT, override="mira-notes").file == "user/files/mira-notes.md"
    assert memory_location("Mira", CHAT, override="notes.md").file_name == "notes.md"
    per_chat = memory_location("Mira", "c1", per_chat=True, override="notes.md")
    assert per_chat.file == "user/files/notes-chatc1.md"
    with pytest.raises(UnsafePathError):
        memory_location("Mira", override="../escape.md")


def test_chunk_granularity_searches_chunks_but_extraction_keeps_bullets() -> None:
    place = memory_location("Mira", "c1", per_chat=True, granularity="chunk")
    assert place.collection == Collection("char:Mira/chat:c1/chunks", "Mira", chunks=True)
    assert place.bullets == Collection("char:Mira/chat:c1", "Mira")


def test_characters_whose_names_sanitise_alike_get_files_of_their_own() -> None:
    names = ["Ann B", "Ann_B"]
    one, two = (memory_location(name, names=names) for name in names)

    assert one.file != two.file
    assert one.collection != two.collection
    assert memory_location("Ann B", names=["Ann B"]).file == "user/files/Ann_B-memories.md"
