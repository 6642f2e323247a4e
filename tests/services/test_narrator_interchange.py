"""A narrator chat moves between SillyTavern (with STMB) and charmemory unchanged.

The chat here is written the way STMB writes one: the cast in
`chat_metadata.STMemoryBooks.narratorMode`, the omniscient book as the chat's manual
book, and stamps on messages and on each swipe's `swipe_info[i].extra`. charmemory
reads the same cast and stamps, keeps them byte for byte, and writes its own in the
same shape.
"""

import json
from pathlib import Path
from typing import Any

import pytest

from charmemory.adapters.workspace import Workspace
from charmemory.core.books.scenes import SceneRange
from charmemory.errors import ConfigError
from tests.support.books import CHARACTER, chat_header, chat_messages, write_chat
from tests.support.narrator import (
    OMNISCIENT,
    books_read,
    memories,
    narrator_app,
    narrator_model,
    narrator_workspace,
)

ALICE, BOB, CLARA = (
    "3f0c2a55-7d0e-4c1b-9d53-0b7a4c1f0a01",
    "9b1e6f2a-2c44-4e0f-8a3b-5d2e7f9c1b02",
    "c2d4e6f8-1a3b-4c5d-8e7f-90a1b2c3d403",
)


def cast_stamp(*ids: str) -> dict[str, Any]:
    return {"STMemoryBooks": {"narratorCast": {"version": 1, "memberIds": list(ids)}}}


def swipe(text: str, *ids: str) -> dict[str, Any]:
    return {
        "send_date": "2026-02-15T10:00:01.000Z",
        "gen_started": "2026-02-15T10:00:00.000Z",
        "gen_finished": "2026-02-15T10:00:01.000Z",
        "extra": {"api": "openai", "model": "m", **cast_stamp(*ids)},
    }


STMB_STATE = {
    "manualLorebook": OMNISCIENT,
    "narratorMode": {
        "version": 1,
        "enabled": True,
        "members": [
            {
                "id": ALICE,
                "avatar": "",
                "name": "Alice",
                "lorebookName": "Alice Book",
                "retired": False,
            },
            {
                "id": BOB,
                "avatar": "Bob.png",
                "name": "Bob",
                "lorebookName": "Bob Book",
                "retired": False,
            },
            {
                "id": CLARA,
                "avatar": "",
                "name": "Clara",
                "lorebookName": "Clara Book",
                "retired": True,
            },
        ],
        "activeCastIds": [BOB],
    },
}

MESSAGES = [
    {
        "name": "Alex",
        "is_user": True,
        "is_system": False,
        "send_date": "2026-02-15T10:00:00.000Z",
        "mes": "Who is in the hall?",
        "extra": cast_stamp(ALICE),
    },
    {
        "name": CHARACTER,
        "is_user": False,
        "is_system": False,
        "send_date": "2026-02-15T10:00:01.000Z",
        "mes": "Alice and Clara are there.",
        "swipe_id": 0,
        "swipes": ["Alice and Clara are there.", "Bob is there."],
        "swipe_info": [swipe("first", ALICE, CLARA), swipe("second", BOB)],
        "extra": {"api": "openai", "model": "m", **cast_stamp(ALICE, CLARA)},
    },
]


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    made = narrator_workspace(tmp_path / "ws")
    write_chat(made, MESSAGES, {"STMemoryBooks": STMB_STATE})
    return made


def test_the_cast_and_stamps_stmb_wrote_are_read_as_they_are(ws: Workspace) -> None:
    app = narrator_app(ws)
    app.settings.set("books.lorebook_mode", "manual", character=CHARACTER)
    state = app.narrator.state(CHARACTER)
    assert state.active and state.omniscient == OMNISCIENT and state.dropped == ()
    assert [(m.id, m.name, m.book, m.avatar, m.retired) for m in state.config.members] == [
        (ALICE, "Alice", "Alice Book", "", False),
        (BOB, "Bob", "Bob Book", "Bob.png", False),
        (CLARA, "Clara", "Clara Book", "", True),
    ]
    assert state.config.active_ids == (BOB,)


async def test_a_stmb_chat_gets_charmemorys_turns_and_memories_in_its_own_shape(
    ws: Workspace,
) -> None:
    model = narrator_model()
    app = narrator_app(ws, model)
    app.settings.set("books.lorebook_mode", "manual", character=CHARACTER)
    before = chat_messages(ws)
    saved = await app.scenes.create(CHARACTER, SceneRange(0, 1))
    # The reply's stamp decides (the user's adds nobody); a retired member still gets a copy.
    assert [e.book for e in saved.entries] == [OMNISCIENT, "Alice Book", "Clara Book"]
    [canonical] = memories(ws, OMNISCIENT)
    assert canonical["STMB_narratorParticipantIds"] == [ALICE, CLARA]
    assert memories(ws, "Clara Book")[0]["STMB_narratorOwnerIds"] == [CLARA]
    await app.chat.send(CHARACTER, "And now?")
    assert books_read(model.requests[-1]) == {"Bob Book"}
    after = chat_messages(ws)
    assert after[:2] == before  # STMB's messages and stamps kept as they were
    assert [m["extra"]["STMemoryBooks"] for m in after[2:]] == [
        {"narratorCast": {"version": 1, "memberIds": [BOB]}}
    ] * 2
    header = chat_header(ws)["chat_metadata"]["STMemoryBooks"]
    assert header["narratorMode"] == STMB_STATE["narratorMode"]
    assert header["manualLorebook"] == OMNISCIENT


async def test_choosing_a_swipe_stmb_stamped_brings_back_its_cast(ws: Workspace) -> None:
    app = narrator_app(ws)
    app.settings.set("books.lorebook_mode", "manual", character=CHARACTER)
    await app.chat.choose_swipe(CHARACTER, 2)
    assert app.narrator.state(CHARACTER).config.active_ids == (BOB,)
    await app.chat.choose_swipe(CHARACTER, 1)
    assert app.narrator.state(CHARACTER).config.active_ids == (ALICE,)  # Clara is retired
    reply = chat_messages(ws)[1]
    assert reply["extra"]["STMemoryBooks"]["narratorCast"]["memberIds"] == [ALICE, CLARA]
    written = chat_header(ws)["chat_metadata"]["STMemoryBooks"]["narratorMode"]
    assert written == {**STMB_STATE["narratorMode"], "activeCastIds": [ALICE]}  # rewritten alike


def test_the_drawer_is_an_interface_setting_kept_apart_from_the_chat(ws: Workspace) -> None:
    app = narrator_app(ws)
    header = json.dumps(chat_header(ws))
    assert app.settings.value("narrator.drawer_position") == "right"
    assert app.settings.value("narrator.drawer_collapsed") is False
    app.settings.set("narrator.drawer_position", "left")
    app.settings.set("narrator.drawer_collapsed", "on")
    assert app.settings.value("narrator.drawer_position") == "left"
    assert app.settings.value("narrator.drawer_collapsed") is True
    assert json.dumps(chat_header(ws)) == header  # the chat holds the cast, not the drawer
    with pytest.raises(ConfigError, match="for the whole workspace, not per character"):
        app.settings.set("narrator.drawer_collapsed", "off", character=CHARACTER)
    with pytest.raises(ConfigError, match=r"narrator\.drawer_position"):
        app.settings.set("narrator.drawer_position", "middle")
