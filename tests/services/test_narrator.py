"""Narrator mode in a chat: turned on, its cast, and what each turn reads and stamps."""

import asyncio
import json
from pathlib import Path

import pytest

from charmemory.adapters.workspace import Workspace
from charmemory.core.books.chat_state import update_state
from charmemory.core.narrator.cast import CastError, CastMember, NarratorConfig
from charmemory.core.narrator.mode import write_config
from charmemory.core.narrator.stamps import stamp_of
from charmemory.errors import CharMemoryError, ConfigError, ConflictError, NotFoundError
from charmemory.ports import Completion
from tests.support.books import CHARACTER, chat_header, chat_messages
from tests.support.fake_chat_model import ChatRequest, FakeChatModel
from tests.support.narrator import (
    OMNISCIENT,
    books_read,
    narrator_app,
    narrator_model,
    narrator_on,
    narrator_workspace,
)


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    return narrator_workspace(tmp_path / "ws")


def narrator_state(ws: Workspace) -> dict:
    return chat_header(ws)["chat_metadata"]["STMemoryBooks"]["narratorMode"]


def stamps(ws: Workspace) -> list[list[str] | None]:
    found = []
    for message in chat_messages(ws):
        cast = message.get("extra", {}).get("STMemoryBooks", {}).get("narratorCast")
        found.append(None if cast is None else cast["memberIds"])
    return found


# -- turning it on --------------------------------------------------------------------------


def test_enabling_selects_the_omniscient_book_and_turns_manual_mode_on(ws: Workspace) -> None:
    app = narrator_app(ws)
    status = app.narrator.state(CHARACTER)
    assert not status.active
    assert status.activation.reasons == (
        "manual lorebook mode is off (books.lorebook_mode is automatic)",
        "narrator mode is not enabled for this chat",
        "no omniscient memory book is selected",
    )
    with pytest.raises(ConfigError, match="needs manual lorebook mode"):
        app.narrator.enable(CHARACTER)
    with pytest.raises(NotFoundError, match="no lorebook named 'Nope'"):
        app.narrator.enable(CHARACTER, omniscient="Nope")
    status = app.narrator.enable(CHARACTER, omniscient=OMNISCIENT)
    assert status.active and status.omniscient == OMNISCIENT
    assert app.settings.origin("books.lorebook_mode", CHARACTER) == "character"
    state = chat_header(ws)["chat_metadata"]["STMemoryBooks"]
    assert state["manualLorebook"] == OMNISCIENT
    assert state["narratorMode"] == {
        "version": 1,
        "enabled": True,
        "members": [],
        "activeCastIds": [],
    }
    disabled = app.narrator.disable(CHARACTER)
    assert disabled.activation.reasons == ("narrator mode is not enabled for this chat",)
    assert app.narrator.enable(CHARACTER).active  # manual mode and the book are still there


def test_the_omniscient_book_cannot_be_a_members(ws: Workspace) -> None:
    app = narrator_app(ws)
    narrator_on(app, "Alice")
    with pytest.raises(CastError, match="Alice Book is Alice's memory book"):
        app.narrator.enable(CHARACTER, omniscient="Alice Book")
    with pytest.raises(CastError, match="is the omniscient book"):
        app.narrator.add(CHARACTER, "Bob", OMNISCIENT)
    app.narrator.retire(CHARACTER, "Alice")  # a retired member's book is still theirs
    with pytest.raises(CharMemoryError, match="Alice Book is Alice's memory book in this chat's"):
        app.books.bind(CHARACTER, "Alice Book", manual=True)
    assert app.narrator.state(CHARACTER).omniscient == OMNISCIENT


def test_manual_mode_cannot_be_turned_off_under_a_narrator_chat(ws: Workspace) -> None:
    app = narrator_app(ws)
    narrator_on(app)
    refusal = "narrator mode is on in Mira's chat .* turn it off first"
    with pytest.raises(ConfigError, match=refusal):
        app.settings.set("books.lorebook_mode", "auto-create", character=CHARACTER)
    with pytest.raises(ConfigError, match=refusal):
        app.settings.unset("books.lorebook_mode", character=CHARACTER)
    app.settings.set("books.lorebook_mode", "automatic")  # Mira's own value stays manual
    app.settings.set("books.lorebook_mode", "manual")
    app.settings.unset("books.lorebook_mode", character=CHARACTER)  # the workspace's: manual
    with pytest.raises(ConfigError, match=refusal):
        app.settings.set("books.lorebook_mode", "automatic")
    with pytest.raises(ConfigError, match=refusal):
        app.settings.unset("books.lorebook_mode")
    app.narrator.disable(CHARACTER)
    app.settings.set("books.lorebook_mode", "auto-create", character=CHARACTER)


def test_narrator_mode_needs_every_condition(ws: Workspace) -> None:
    app = narrator_app(ws)
    narrator_on(app, "Alice")
    app.narrator.set_active(CHARACTER, ["Alice"])
    app.narrator.disable(CHARACTER)
    assert app.narrator.snapshot(*_ref_and_chat(app)) is None
    app.narrator.enable(CHARACTER)
    assert app.narrator.snapshot(*_ref_and_chat(app)) is not None


def _ref_and_chat(app):  # type: ignore[no-untyped-def]
    loaded = app.chat.open_chat(CHARACTER)
    return loaded.ref, loaded.chat


# -- the cast ---------------------------------------------------------------------------------


def test_the_cast_is_kept_in_the_chat_with_its_rules(ws: Workspace) -> None:
    app = narrator_app(ws)
    ids = narrator_on(app, "Alice", "Bob")
    assert [m["name"] for m in narrator_state(ws)["members"]] == ["Alice", "Bob"]
    assert narrator_state(ws)["members"][0]["id"] == ids["Alice"]
    with pytest.raises(CastError, match="already has Alice"):
        app.narrator.add(CHARACTER, "ALÍCE", "Clara Book")
    with pytest.raises(CastError, match="already Bob's memory book"):
        app.narrator.add(CHARACTER, "Clara", "Bob Book")
    with pytest.raises(NotFoundError, match="no lorebook named 'Missing'"):
        app.narrator.add(CHARACTER, "Clara", "Missing")
    app.narrator.set_active(CHARACTER, ["alice", "Bob"])
    retired = app.narrator.retire(CHARACTER, "Alice")
    assert retired.retired and narrator_state(ws)["activeCastIds"] == [ids["Bob"]]
    with pytest.raises(CastError, match="Alice is retired"):
        app.narrator.set_active(CHARACTER, ["Alice"])
    with pytest.raises(CastError, match="already Alice's memory book"):
        app.narrator.add(CHARACTER, "Clara", "Alice Book")  # not released by retiring
    with pytest.raises(CastError, match="Alice is already retired"):
        app.narrator.retire(CHARACTER, "Alice")
    assert not app.narrator.restore(CHARACTER, "Alice").retired
    assert app.narrator.set_active(CHARACTER, []) == ()
    assert narrator_state(ws)["activeCastIds"] == []


def test_a_malformed_cast_is_read_normalised_and_what_was_dropped_is_logged(
    ws: Workspace,
) -> None:
    app = narrator_app(ws)
    narrator_on(app, "Alice")
    path = next((ws.chats_dir / CHARACTER).glob("*.jsonl"))
    text = path.read_text(encoding="utf-8").replace(
        '"members":[', '"members":[{"name":"Ghost","lorebookName":"G"},', 1
    )
    path.write_text(text, encoding="utf-8")
    state = app.narrator.state(CHARACTER)
    assert state.dropped == ("cast member 'Ghost' has no id",)
    assert [m.name for m in state.config.members] == ["Alice"]
    app.narrator.set_active(CHARACTER, ["Alice"])
    assert [m["name"] for m in narrator_state(ws)["members"]] == ["Alice"]
    logged = [entry.message for entry in app.activity.entries()]
    assert "dropped from the cast: cast member 'Ghost' has no id" in logged


# -- turns ------------------------------------------------------------------------------------


async def test_a_turn_reads_the_active_casts_books_and_stamps_both_messages(
    ws: Workspace,
) -> None:
    model = narrator_model()
    app = narrator_app(ws, model)
    ids = narrator_on(app, "Alice", "Bob", "Clara")
    app.narrator.set_active(CHARACTER, ["Bob", "Alice"])
    turn = await app.chat.send(CHARACTER, "Who is at the door?")
    assert books_read(model.requests[-1]) == {"Alice Book", "Bob Book"}  # never Omni
    assert stamps(ws) == [[ids["Bob"], ids["Alice"]], [ids["Bob"], ids["Alice"]]]
    message = chat_messages(ws)[1]
    assert message["swipe_info"][0]["extra"]["STMemoryBooks"]["narratorCast"] == {
        "version": 1,
        "memberIds": [ids["Bob"], ids["Alice"]],
    }
    record = app.chat.generations(CHARACTER)[0]
    assert record.narrator_cast == [ids["Bob"], ids["Alice"]]
    assert [(b["source"], b["name"]) for b in record.lorebooks] == [
        ("narrator cast", "Bob Book"),
        ("narrator cast", "Alice Book"),
    ]
    assert {(e["book"], e["uid"]) for e in turn.world_info} == {("Bob Book", 0), ("Alice Book", 0)}
    app.narrator.set_active(CHARACTER, [])
    await app.chat.send(CHARACTER, "Nobody?")
    assert books_read(model.requests[-1]) == set()
    assert stamps(ws)[2:] == [[], []]


async def test_a_cast_book_bound_to_the_chat_too_is_read_once(ws: Workspace) -> None:
    model = narrator_model()
    app = narrator_app(ws, model)
    narrator_on(app, "Alice")
    app.books.bind(CHARACTER, "Alice Book")
    app.narrator.set_active(CHARACTER, ["Alice"])
    turn = await app.chat.send(CHARACTER, "Hello.")
    assert [(e["book"], e["uid"]) for e in turn.world_info] == [("Alice Book", 0)]
    record = app.chat.generations(CHARACTER)[0]
    assert [w["book"] for w in record.world_info] == ["Alice Book"]


async def test_the_snapshot_governs_a_slow_generation_whatever_changes_meanwhile(
    ws: Workspace,
) -> None:
    app_box: list = []

    async def slow(request: ChatRequest) -> Completion:
        # The user changes the active cast while the reply is still being written.
        app_box[0].narrator.set_active(CHARACTER, ["Bob"])
        await asyncio.sleep(0)
        return Completion("Alice answers.")

    model = FakeChatModel(slow)
    app = narrator_app(ws, model)
    app_box.append(app)
    ids = narrator_on(app, "Alice", "Bob")
    app.narrator.set_active(CHARACTER, ["Alice"])
    await app.chat.send(CHARACTER, "Alice?")
    assert books_read(model.requests[-1]) == {"Alice Book"}
    assert stamps(ws) == [[ids["Alice"]], [ids["Alice"]]]
    assert narrator_state(ws)["activeCastIds"] == [ids["Bob"]]  # the change is kept
    assert [m["mes"] for m in chat_messages(ws)] == ["Alice?", "Alice answers."]
    await app.chat.generate(CHARACTER, kind="swipe")
    assert stamps(ws)[-1] == [ids["Bob"]]


async def test_a_chat_whose_messages_changed_meanwhile_is_still_not_overwritten(
    ws: Workspace,
) -> None:
    app = narrator_app(ws)
    narrator_on(app)
    path = next((ws.chats_dir / CHARACTER).glob("*.jsonl"))

    def meddle(request: ChatRequest) -> Completion:
        path.write_text(path.read_text(encoding="utf-8") + '\n{"name":"X","mes":"x"}', "utf-8")
        return Completion("Never saved.")

    app = narrator_app(ws, FakeChatModel(meddle))
    with pytest.raises(ConflictError, match="the reply was not saved"):
        await app.chat.send(CHARACTER, "Hi.")


async def test_swipes_keep_their_own_stamps_and_choosing_one_restores_its_cast(
    ws: Workspace,
) -> None:
    model = narrator_model()
    app = narrator_app(ws, model)
    ids = narrator_on(app, "Alice", "Bob", "Clara")
    app.narrator.set_active(CHARACTER, ["Alice"])
    await app.chat.send(CHARACTER, "Hello.")
    app.narrator.set_active(CHARACTER, ["Bob", "Clara"])
    await app.chat.generate(CHARACTER, kind="swipe")
    assert books_read(model.requests[-1]) == {"Bob Book", "Clara Book"}
    reply = chat_messages(ws)[1]
    assert [
        info["extra"]["STMemoryBooks"]["narratorCast"]["memberIds"] for info in reply["swipe_info"]
    ] == [[ids["Alice"]], [ids["Bob"], ids["Clara"]]]
    await app.chat.choose_swipe(CHARACTER, 1)
    assert narrator_state(ws)["activeCastIds"] == [ids["Alice"]]
    assert stamps(ws)[1] == [ids["Alice"]]
    app.narrator.retire(CHARACTER, "Clara")
    await app.chat.choose_swipe(CHARACTER, 2)
    assert narrator_state(ws)["activeCastIds"] == [ids["Bob"]]  # a retired member stays out


async def test_a_continuation_adds_its_snapshot_to_the_replys_stamp(ws: Workspace) -> None:
    app = narrator_app(ws)
    ids = narrator_on(app, "Alice", "Bob")
    app.narrator.set_active(CHARACTER, ["Bob"])
    await app.chat.send(CHARACTER, "Go on.")
    app.narrator.set_active(CHARACTER, ["Alice", "Bob"])
    await app.chat.generate(CHARACTER, kind="continue")
    assert stamps(ws)[1] == [ids["Bob"], ids["Alice"]]
    reply = chat_messages(ws)[1]
    assert reply["swipe_info"][0]["extra"]["STMemoryBooks"]["narratorCast"]["memberIds"] == [
        ids["Bob"],
        ids["Alice"],
    ]


async def test_deleting_from_the_end_restores_the_cast_of_the_last_stamped_reply(
    ws: Workspace,
) -> None:
    app = narrator_app(ws)
    ids = narrator_on(app, "Alice", "Bob", "Clara")
    for who in (["Alice"], ["Bob"], ["Clara"]):
        app.narrator.set_active(CHARACTER, who)
        await app.chat.send(CHARACTER, f"{who[0]}?")
    await app.chat.delete_last(CHARACTER, 2)
    assert narrator_state(ws)["activeCastIds"] == [ids["Bob"]]
    before = stamps(ws)
    await app.chat.delete_message(CHARACTER, 0)  # an older message: nothing else changes
    assert narrator_state(ws)["activeCastIds"] == [ids["Bob"]]
    assert stamps(ws) == before[1:]
    app.narrator.set_active(CHARACTER, ["Clara"])
    await app.chat.delete_message(CHARACTER, 2)  # the last one: the cast comes back
    assert narrator_state(ws)["activeCastIds"] == [ids["Alice"]]


async def test_turns_outside_narrator_mode_are_not_stamped(ws: Workspace) -> None:
    model = narrator_model()
    app = narrator_app(ws, model)
    narrator_on(app, "Alice")
    app.narrator.set_active(CHARACTER, ["Alice"])
    app.narrator.disable(CHARACTER)
    await app.chat.send(CHARACTER, "Plain.")
    assert stamps(ws) == [None, None]
    assert OMNISCIENT in books_read(model.requests[-1])  # manual mode reads the chat's book
    assert app.chat.generations(CHARACTER)[0].narrator_cast is None


async def test_a_dry_run_shows_the_cast_books(ws: Workspace) -> None:
    app = narrator_app(ws)
    narrator_on(app, "Alice")
    app.narrator.set_active(CHARACTER, ["Alice"])
    preview = await app.chat.preview(CHARACTER, "Hello?")
    assert [e["book"] for e in preview["world_info"]] == ["Alice Book"]


def test_cast_commands_refuse_a_chat_that_is_not_there(ws: Workspace) -> None:
    app = narrator_app(ws)
    with pytest.raises(CharMemoryError, match="no chat 'nope'"):
        app.narrator.add(CHARACTER, "Alice", "Alice Book", "nope")


async def test_a_group_chat_never_has_narrator_mode(ws: Workspace) -> None:
    card = {"spec": "chara_card_v2", "spec_version": "2.0", "data": {"name": "Abel"}}
    (ws.characters_dir / "Abel.json").write_text(json.dumps(card), encoding="utf-8")
    model = narrator_model()
    app = narrator_app(ws, model)
    app.settings.set("books.lorebook_mode", "manual")
    chat_id = app.group_chat.create("Crew", [CHARACTER, "Abel"], strategy="list").chat
    assert chat_id is not None
    with pytest.raises(CharMemoryError, match="one-on-one chats, not group chats"):
        app.narrator.enable(CHARACTER, chat_id, omniscient=OMNISCIENT)
    # A group chat carrying a cast anyway (written by hand) stays an ordinary group chat.
    ref = app.library.chat(app.library.character(CHARACTER), chat_id)
    loaded = app.library.load_chat(ref)
    cast = NarratorConfig(True, (CastMember("a", "Alice", "Alice Book"),), ("a",))
    write_config(loaded.chat.header, cast)
    update_state(loaded.chat.header, manualLorebook=OMNISCIENT)
    app.library.save_chat(loaded, loaded.chat)
    state = app.narrator.state(CHARACTER, chat_id)
    assert not state.active
    assert state.activation.reasons == (
        "this is a group chat (narrator mode is for one-on-one chats)",
    )
    await app.group_chat.send("Crew", "Hello, crew.")
    assert "Alice Book" not in books_read(model.requests[-1])
    messages = app.library.load_chat(ref).chat.messages
    assert all(stamp_of(message) is None for message in messages)
    assert app.chat.generations(CHARACTER, chat_id)[0].narrator_cast is None
