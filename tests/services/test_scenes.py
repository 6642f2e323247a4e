"""Scene memories: written, previewed, edited, retried, refused, automatic and caught up."""

from pathlib import Path

import pytest

from charmemory.adapters.llm.provider_errors import BadRequestError
from charmemory.adapters.workspace import Workspace
from charmemory.core.books.answer import MalformedJsonError, NoJsonError, TruncatedAnswerError
from charmemory.core.books.scenes import OverlapError, SceneRange
from charmemory.errors import ConfigError, ConflictError
from charmemory.ports import Completion, FreeText
from tests.support.books import (
    CHARACTER,
    answering,
    book_app,
    book_workspace,
    chat_header,
    chat_messages,
    read_book,
    scene_json,
    speaker_lines,
    titled_after_request,
    was_json,
    write_book,
    write_chat,
)
from tests.support.extraction_fixtures import CHAT_ID
from tests.support.fake_chat_model import ChatRequest, FakeChatModel

BOOK = "Mira Memories"


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    ws = book_workspace(tmp_path / "ws")
    write_chat(ws, speaker_lines(30), {"world_info": BOOK})
    write_book(ws, BOOK)
    return ws


async def test_a_scene_becomes_an_entry_in_the_chats_book(ws: Workspace) -> None:
    model = answering(scene_json("The Harbour", "- Mira met Alex.", ["harbour", "Alex"]))
    app = book_app(ws, model)
    saved = await app.scenes.create(CHARACTER, SceneRange(0, 9))
    [placed] = saved.entries
    assert (placed.book, placed.uid, placed.title) == (BOOK, 0, "001 - The Harbour")
    entry = read_book(ws, BOOK).entries[0].to_dict()
    assert entry["content"] == "- Mira met Alex." and entry["key"] == ["harbour", "Alex"]
    assert (entry["STMB_start"], entry["STMB_end"], entry["STMB_chatId"]) == (0, 9, CHAT_ID)
    assert entry["stmemorybooks"] is True and entry["vectorized"] is True
    assert chat_header(ws)["chat_metadata"]["STMemoryBooks"] == {"highestMemoryProcessed": 9}
    [request] = model.requests
    assert was_json(request)
    system, user = request.messages
    assert "role-play between Mira and Alex" in system.content and '"keywords"' in system.content
    assert user.content.startswith("=== SCENE TRANSCRIPT ===\nAlex: Alex says line 0.")
    assert user.content.endswith("Mira: Mira says line 9.\n=== END SCENE ===")
    assert [v.cause for v in app.books.versions(BOOK)] == ["found", "scene memory"]


async def test_a_preview_writes_nothing_and_can_be_edited_or_retried(ws: Workspace) -> None:
    app = book_app(ws, answering(scene_json("First try"), scene_json("Second try")))
    before = (ws.worlds_dir / f"{BOOK}.json").read_text(encoding="utf-8")
    plan = await app.scenes.prepare(CHARACTER, SceneRange(0, 9))
    assert plan.answer.title == "First try"
    assert (ws.worlds_dir / f"{BOOK}.json").read_text(encoding="utf-8") == before
    retried = await app.scenes.prepare(CHARACTER, SceneRange(0, 9))
    assert retried.answer.title == "Second try"
    edited = retried.edited("My own title", "- What I say happened.", ["mine", " ", "mine"])
    saved = app.scenes.save(edited)
    assert saved.entries[0].title == "001 - My own title"
    entry = read_book(ws, BOOK).entries[0]
    assert (entry.content, entry.keys) == ("- What I say happened.", ("mine",))


async def test_numbers_continue_and_previous_memories_are_context_only(ws: Workspace) -> None:
    app = book_app(ws, answering(scene_json("One"), scene_json("Two"), scene_json("Three")))
    app.settings.set("books.previous_memories", "1")
    await app.scenes.create(CHARACTER, SceneRange(0, 9))
    await app.scenes.create(CHARACTER, SceneRange(10, 19))
    third = await app.scenes.create(CHARACTER, SceneRange(20, 29))
    assert third.entries[0].title == "003 - Three"
    prompt = app._chat_model().requests[-1].messages[-1].content  # type: ignore[misc]
    assert "=== PREVIOUS MEMORIES (context only - DO NOT PROCESS) ===" in prompt
    assert "Memory 1 - 002 - Two:" in prompt and "001 - One" not in prompt


async def test_an_overlapping_range_is_refused_before_the_model_is_asked(ws: Workspace) -> None:
    model = answering(scene_json("One"))
    app = book_app(ws, model)
    await app.scenes.create(CHARACTER, SceneRange(0, 9))
    with pytest.raises(OverlapError, match="messages 5-14 overlap '001 - One'"):
        await app.scenes.prepare(CHARACTER, SceneRange(5, 14))
    assert len(model.requests) == 1
    app.settings.set("books.allow_overlap", "on")
    model2 = answering(scene_json("Two"))
    app2 = book_app(ws, model2)
    app2.settings.set("books.allow_overlap", "on")
    assert (await app2.scenes.create(CHARACTER, SceneRange(5, 14))).entries[0].uid == 1


async def test_an_unreadable_answer_is_asked_for_again_twice(ws: Workspace) -> None:
    model = answering("I'd rather not.", '{"title": "x" "content": 1}', scene_json("Third time"))
    saved = await book_app(ws, model).scenes.create(CHARACTER, SceneRange(0, 9))
    assert saved.plan.calls == 3 and saved.entries[0].title == "001 - Third time"
    model = answering("no", "still no", "never")
    with pytest.raises(NoJsonError):
        await book_app(ws, model).scenes.prepare(CHARACTER, SceneRange(10, 19))
    assert len(model.requests) == 3
    app = book_app(ws, answering(*['{"title": "x", "content": "a" "b"}'] * 3))
    with pytest.raises(MalformedJsonError):
        await app.scenes.prepare(CHARACTER, SceneRange(10, 19))


async def test_an_answer_cut_by_the_length_limit_is_not_asked_again(ws: Workspace) -> None:
    model = answering(
        lambda r: Completion('{"title": "x", "content": "- Mira', finish_reason="length")
    )
    with pytest.raises(TruncatedAnswerError, match=r"raise model\.max_tokens"):
        await book_app(ws, model).scenes.prepare(CHARACTER, SceneRange(0, 9))
    assert len(model.requests) == 1


async def test_a_provider_refusing_the_schema_is_asked_in_plain_text(ws: Workspace) -> None:
    def refuse(request: ChatRequest) -> str:
        raise BadRequestError(
            "custom",
            "the request was refused",
            status=400,
            provider_message="response_format json_schema is not supported",
        )

    model = answering(refuse, scene_json("Plain"))
    saved = await book_app(ws, model).scenes.create(CHARACTER, SceneRange(0, 9))
    assert saved.entries[0].title == "001 - Plain"
    assert was_json(model.requests[0]) and isinstance(model.requests[1].answer_format, FreeText)


async def test_saving_moves_progress_and_hides_what_the_settings_say(ws: Workspace) -> None:
    app = book_app(ws, answering(scene_json("One")))
    app.settings.set("books.auto_hide", "last")
    app.settings.set("books.keep_unhidden", "2")
    saved = await app.scenes.create(CHARACTER, SceneRange(4, 13))
    assert saved.hidden == list(range(4, 12))
    hidden = [i for i, m in enumerate(chat_messages(ws)) if m["is_system"]]
    assert hidden == list(range(4, 12))


async def test_hidden_messages_stay_out_of_a_scene_unless_unhidden_for_it(ws: Workspace) -> None:
    messages = speaker_lines(12)
    messages[3]["is_system"] = True
    write_chat(ws, messages, {"world_info": BOOK})
    model = answering(scene_json("One"), scene_json("Two"))
    app = book_app(ws, model)
    plan = await app.scenes.prepare(CHARACTER, SceneRange(0, 5))
    assert "line 3" not in model.requests[0].messages[-1].content and plan.scene.hidden_skipped == 1
    app.settings.set("books.include_hidden", "on")
    await app.scenes.prepare(CHARACTER, SceneRange(0, 5))
    assert "line 3" in model.requests[1].messages[-1].content


async def test_messages_edited_after_the_preview_stop_the_save(ws: Workspace) -> None:
    app = book_app(ws, answering(scene_json("One")))
    plan = await app.scenes.prepare(CHARACTER, SceneRange(0, 9))
    await app.chat.edit(CHARACTER, 3, "Something else entirely.")
    with pytest.raises(ConflictError, match="messages 0-9 changed"):
        app.scenes.save(plan)
    assert read_book(ws, BOOK).entries == {}


# -- lorebook modes -------------------------------------------------------------------------


async def test_automatic_mode_needs_a_bound_book(ws: Workspace) -> None:
    write_chat(ws, speaker_lines(12))
    app = book_app(ws, answering())
    with pytest.raises(ConfigError, match="no lorebook is bound"):
        await app.scenes.prepare(CHARACTER, SceneRange(0, 9))


async def test_auto_create_makes_and_binds_a_book_with_a_free_name(ws: Workspace) -> None:
    write_chat(ws, speaker_lines(12))
    write_book(ws, f"LTM - Mira - {CHAT_ID}")
    app = book_app(ws, answering(scene_json("One"), scene_json("Two")))
    app.settings.set("books.lorebook_mode", "auto-create")
    saved = await app.scenes.create(CHARACTER, SceneRange(0, 5))
    name = f"LTM - Mira - {CHAT_ID} 2"
    assert saved.entries[0].book == name and read_book(ws, name).entries[0].comment == "001 - One"
    assert chat_header(ws)["chat_metadata"]["world_info"] == name
    again = await app.scenes.create(CHARACTER, SceneRange(6, 11))
    assert again.entries[0].book == name  # the bound book is used from then on


async def test_manual_mode_uses_the_book_chosen_for_the_chat(ws: Workspace) -> None:
    write_book(ws, "Chosen")
    app = book_app(ws, answering(scene_json("One")))
    app.settings.set("books.lorebook_mode", "manual")
    with pytest.raises(ConfigError, match="no memory book is chosen"):
        await app.scenes.prepare(CHARACTER, SceneRange(0, 9))
    assert "manual memory book" in app.books.bind(CHARACTER, "Chosen", manual=True)
    saved = await app.scenes.create(CHARACTER, SceneRange(0, 9))
    assert saved.entries[0].book == "Chosen"
    assert chat_header(ws)["chat_metadata"]["STMemoryBooks"]["manualLorebook"] == "Chosen"


async def test_an_explicit_book_wins_and_must_exist(ws: Workspace) -> None:
    write_book(ws, "Other")
    app = book_app(ws, answering(scene_json("One")))
    assert (await app.scenes.create(CHARACTER, SceneRange(0, 9), book="Other")).entries[
        0
    ].book == "Other"
    with pytest.raises(Exception, match="no lorebook named 'Nope'"):
        await app.scenes.prepare(CHARACTER, SceneRange(10, 19), book="Nope")


# -- automatic and catch-up -----------------------------------------------------------------


async def test_automatic_memories_come_at_the_interval_leaving_the_buffer(ws: Workspace) -> None:
    write_chat(ws, speaker_lines(11), {"world_info": BOOK})
    app = book_app(ws, answering(titled_after_request, titled_after_request))
    app.settings.set("books.auto_enabled", "on")
    app.settings.set("books.auto_interval", "10")
    app.settings.set("books.auto_buffer", "2")
    decision = app.scenes.auto_due(CHARACTER)
    assert (decision.due, decision.waiting) == (False, 1)
    write_chat(ws, speaker_lines(12), {"world_info": BOOK})
    ref = app.library.chat(app.library.character(CHARACTER))
    import asyncio

    saved = await app.scenes.after_reply(ref, asyncio.Lock())
    assert saved is not None and saved.plan.scene.range == SceneRange(0, 9)
    assert await app.scenes.after_reply(ref, asyncio.Lock()) is None  # not due again yet
    metadata = chat_header(ws)["chat_metadata"]
    write_chat(ws, speaker_lines(24), metadata)
    saved = await app.scenes.after_reply(ref, asyncio.Lock())
    assert saved is not None and saved.plan.scene.range == SceneRange(10, 21)


async def test_catch_up_saves_consecutive_ranges_and_stops_at_a_failure(ws: Workspace) -> None:
    write_chat(ws, speaker_lines(25), {"world_info": BOOK})
    app = book_app(ws, answering(scene_json("One"), "no", "no", "no"))
    report = await app.scenes.catch_up(CHARACTER, interval=10)
    assert [s.plan.scene.range for s in report.saved] == [SceneRange(0, 9)]
    assert report.remaining == [SceneRange(10, 19), SceneRange(20, 24)]
    assert report.error is not None and report.error.startswith(
        "messages 10-19: the answer holds no JSON"
    )
    app2 = book_app(ws, answering(scene_json("Two"), scene_json("Three")))
    report = await app2.scenes.catch_up(CHARACTER, interval=10)
    assert [s.entries[0].title for s in report.saved] == ["002 - Two", "003 - Three"]
    assert chat_header(ws)["chat_metadata"]["STMemoryBooks"]["highestMemoryProcessed"] == 24


async def test_chatting_writes_the_automatic_scene_memory_when_it_is_due(ws: Workspace) -> None:
    write_chat(ws, speaker_lines(10), {"world_info": BOOK})

    def answer(request: ChatRequest) -> Completion:
        if was_json(request):
            return Completion(scene_json("While chatting"))
        if type(request.answer_format).__name__ == "NewMemories":
            return Completion("NO_NEW_MEMORIES")
        return Completion("Aye.")

    app = book_app(ws, FakeChatModel(answer))
    app.settings.set("books.auto_enabled", "on")
    app.settings.set("books.auto_interval", "10")
    await app.chat.send(CHARACTER, "Shall we?")
    assert await app.chat.extractions_finished() == []
    [entry] = read_book(ws, BOOK).entries.values()
    assert entry.comment == "001 - While chatting" and entry.raw["STMB_end"] == 9
    assert chat_header(ws)["chat_metadata"]["STMemoryBooks"]["highestMemoryProcessed"] == 9
    assert [m["mes"] for m in chat_messages(ws)][-2:] == ["Shall we?", "Aye."]
