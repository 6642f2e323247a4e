"""Scene ranges, transcripts, overlaps, and which range comes next."""

import pytest

from charmemory.core.books.entry import EntrySettings, MemoryDraft, memory_entry
from charmemory.core.books.layout import check_scene_fits, memory_ranges
from charmemory.core.books.progress import auto_range, catch_up_ranges, hide_ranges
from charmemory.core.books.scenes import (
    OverlapError,
    SceneError,
    SceneRange,
    compile_scene,
    parse_range,
)
from charmemory.formats.chat import Chat, ChatHeader, Message
from charmemory.formats.lorebook import Lorebook


def chat_of(*texts: str, hidden: tuple[int, ...] = ()) -> Chat:
    messages = [
        Message.new(
            name="Alex" if i % 2 == 0 else "Mira",
            mes=text,
            is_user=i % 2 == 0,
            send_date="x",
            is_system=i in hidden,
        )
        for i, text in enumerate(texts)
    ]
    return Chat(ChatHeader({}), messages)


def test_ranges_are_parsed_and_refused_in_words() -> None:
    assert parse_range("10-25") == SceneRange(10, 25)
    assert parse_range(" 7 ") == SceneRange(7, 7)
    with pytest.raises(SceneError, match="runs backwards"):
        parse_range("9-3")
    with pytest.raises(SceneError, match="not a message range"):
        parse_range("ten")


def test_the_transcript_skips_hidden_and_empty_messages_unless_hidden_are_asked_for() -> None:
    chat = chat_of("Hello.", "Ahoy.", "  ", "Secret.", hidden=(3,))
    scene = compile_scene(chat, SceneRange(0, 3), chat_id="c", character="Mira", user="Alex")
    assert scene.transcript() == "Alex: Hello.\nMira: Ahoy."
    assert (scene.hidden_skipped, scene.message_count, scene.speakers) == (1, 2, ["Mira"])
    shown = compile_scene(
        chat, SceneRange(0, 3), chat_id="c", character="Mira", user="Alex", include_hidden=True
    )
    assert shown.transcript().endswith("Mira: Secret.")
    with pytest.raises(SceneError, match="no visible messages in range 3-3 \\(1 hidden"):
        compile_scene(chat, SceneRange(3, 3), chat_id="c", character="Mira", user="Alex")
    with pytest.raises(SceneError, match="outside the chat \\(messages 0-3\\)"):
        compile_scene(chat, SceneRange(2, 9), chat_id="c", character="Mira", user="Alex")


def book_with(first: int, last: int, chat: str) -> Lorebook:
    book = Lorebook()
    draft = MemoryDraft("001 - Old", "c", (), SceneRange(first, last), chat)
    book.put(memory_entry(0, draft, EntrySettings()))
    return book


def test_a_range_overlapping_a_memory_of_the_same_chat_is_refused() -> None:
    book = book_with(10, 20, "chat A")
    assert memory_ranges(book, "chat A") == [(SceneRange(10, 20), "001 - Old")]
    with pytest.raises(
        OverlapError, match="messages 20-30 overlap '001 - Old' \\(messages 10-20\\) in Book"
    ):
        check_scene_fits({"Book": book}, SceneRange(20, 30), "chat A", allow_overlap=False)
    check_scene_fits({"Book": book}, SceneRange(21, 30), "chat A", allow_overlap=False)
    check_scene_fits({"Book": book}, SceneRange(15, 30), "chat B", allow_overlap=False)
    check_scene_fits({"Book": book}, SceneRange(15, 30), "chat A", allow_overlap=True)


def test_automatic_memories_wait_for_the_interval_beyond_the_buffer() -> None:
    # 50 + 2 messages since none was processed: messages 0-51 exist at count 52.
    assert auto_range(51, None, 50, 2).due is False
    assert auto_range(51, None, 50, 2).waiting == 1
    due = auto_range(52, None, 50, 2)
    assert due.due and due.range == SceneRange(0, 49)
    later = auto_range(102, 49, 50, 2)
    assert later.range == SceneRange(50, 99)
    assert auto_range(101, 49, 50, 2).due is False


def test_catch_up_cuts_consecutive_ranges_the_last_one_shorter() -> None:
    assert catch_up_ranges(0, 245, 40)[-2:] == [SceneRange(200, 239), SceneRange(240, 245)]
    assert len(catch_up_ranges(0, 245, 40)) == 7
    assert catch_up_ranges(5, 4, 40) == []


def test_hiding_leaves_the_newest_messages_visible() -> None:
    scene = SceneRange(10, 20)
    assert hide_ranges("all", 2, scene) == [SceneRange(0, 18)]
    assert hide_ranges("last", 2, scene) == [SceneRange(10, 18)]
    assert hide_ranges("last", 11, scene) == []
    assert hide_ranges("none", 0, scene) == []
