"""Group chats: each member speaks with its own card and memories, and remembers for itself."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from charmemory.adapters.extraction_state import ExtractionState
from charmemory.adapters.workspace import Workspace
from charmemory.composition import App
from charmemory.errors import CharMemoryError
from charmemory.formats.chat import parse_chat
from charmemory.formats.group import parse_group
from charmemory.ports import Completion, NewMemories
from tests.services.test_chat import Clock
from tests.support.extraction_fixtures import make_workspace, memory_block
from tests.support.fake_chat_model import ChatRequest, FakeChatModel
from tests.support.word_hash_embedder import WordHashEmbedder

NUDGE = re.compile(r"\[Write the next reply only as (.+)\.\]")
OWNER = re.compile(r"You keep the long-term memory of (\w+),")


def member_card(ws: Workspace, name: str, description: str, first_mes: str = "") -> None:
    card = {
        "spec": "chara_card_v2",
        "spec_version": "2.0",
        "data": {"name": name, "description": description, "first_mes": first_mes},
    }
    (ws.characters_dir / f"{name}.json").write_text(json.dumps(card), encoding="utf-8")


class Crew:
    """The model: a member says who it is (and the turn's number); an extraction
    remembers every line it read, as the member whose memory it keeps."""

    def __init__(self) -> None:
        self.model = FakeChatModel(self.answer)
        self.turns = 0

    def answer(self, request: ChatRequest) -> Completion:
        text = "\n".join(message.content for message in request.messages)
        if isinstance(request.answer_format, NewMemories):
            owner = OWNER.search(text)
            assert owner is not None and owner.group(1) == request.answer_format.character
            section = text.split("<chat_messages>\n", 1)[1].split("\n</chat_messages>", 1)[0]
            lines = [line for line in section.split("\n\n") if line]
            return Completion(memory_block(*(f"{owner.group(1)} heard {line}" for line in lines)))
        speaker = NUDGE.findall(text)[-1]
        self.turns += 1
        return Completion(f"{speaker} answers ({self.turns}).")

    def extraction_prompts(self, member: str) -> list[str]:
        return [
            "\n".join(m.content for m in request.messages)
            for request in self.model.requests
            if isinstance(request.answer_format, NewMemories)
            and request.answer_format.character == member
        ]

    def turn_prompts(self, member: str) -> list[str]:
        return [
            "\n".join(m.content for m in request.messages)
            for request in self.model.requests
            if request.stream and NUDGE.findall(request.messages[-1].content) == [member]
        ]


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    ws = make_workspace(tmp_path / "ws", interval=3, cooldown_minutes=0)
    member_card(ws, "Mira", "{{char}} captains the airship Kestrel.", "Welcome aboard, {{user}}.")
    member_card(ws, "Abel", "{{char}} cooks on the Kestrel.", "Soup's on.")
    member_card(ws, "Vera", "{{char}} navigates by the stars.")
    return ws


def app_with(ws: Workspace, crew: Crew, **options: object) -> App:
    app = App(
        ws,
        env={},
        chat_model=lambda: crew.model,
        clock=Clock(),
        index_for_extraction=bool(options.get("embedder")),
        **options,  # type: ignore[arg-type]
    )
    app.settings.set("persona.name", "Wren")
    return app


def memories(ws: Workspace, member: str) -> str:
    return (ws.files_dir / f"{member}-memories.md").read_text(encoding="utf-8")


def heard(ws: Workspace, member: str) -> list[str]:
    """The lines a member's memory file says it heard."""
    return re.findall(rf"^- {member} heard (.+)$", memories(ws, member), re.MULTILINE)


async def test_three_members_each_remember_for_themselves_and_a_late_one_from_its_join(
    ws: Workspace,
) -> None:
    crew = Crew()
    app = app_with(ws, crew)
    groups = app.group_chat
    created = groups.create("Kestrel crew", ["Mira", "Abel"], strategy="list")
    chat_id = created.chat
    assert chat_id is not None

    first = await groups.send("Kestrel crew", "We leave at dawn.")
    assert [reply.speaker for reply in first.replies] == ["Mira", "Abel"]
    assert first.replies[0].turn.extraction == "Mira: started; Abel: started"
    assert await app.chat.extractions_finished() == []

    groups.add("Kestrel crew", ["Vera"])
    groups.mute("Kestrel crew", ["Abel"])
    second = await groups.send("Kestrel crew", "Vera, welcome aboard.")
    assert [reply.speaker for reply in second.replies] == ["Mira", "Vera"]  # Abel is muted
    assert second.replies[0].turn.extraction == (
        "Mira: skipped: 1/3 msgs; Abel: skipped: 1/3 msgs; Vera: skipped: 1/3 msgs"
    )
    third = await groups.send("Kestrel crew", "To the stars.")
    assert third.replies[0].turn.extraction == "Mira: started; Abel: started; Vera: started"
    assert await app.chat.extractions_finished() == []

    before_vera = [
        "Mira: Welcome aboard, Wren.",
        "Abel: Soup's on.",
        "Wren: We leave at dawn.",
        "Mira: Mira answers (1).",
        "Abel: Abel answers (2).",
    ]
    after_vera = [
        "Wren: Vera, welcome aboard.",
        "Mira: Mira answers (3).",
        "Vera: Vera answers (4).",
        "Wren: To the stars.",
        "Mira: Mira answers (5).",
        "Vera: Vera answers (6).",
    ]
    # Each member's file holds what that member's own extraction wrote...
    assert heard(ws, "Mira") == before_vera + after_vera
    assert heard(ws, "Abel") == before_vera + after_vera  # muted, yet it heard it all
    # ...and the member who joined later is credited only from its joining on.
    assert heard(ws, "Vera") == after_vera

    # One watermark per (member, group chat), each over the messages that member read.
    state = ExtractionState(ws.db, ws.locks, ws.state_dir)
    assert {m: state.chat(m, chat_id).watermark for m in ("Mira", "Abel", "Vera")} == {
        "Mira": 10,
        "Abel": 10,
        "Vera": 10,
    }
    assert sorted(state.fingerprints("Mira", chat_id)) == list(range(11))
    assert sorted(state.fingerprints("Vera", chat_id)) == list(range(5, 11))

    # Three extractions per trigger, each from its member's point of view.
    assert [len(crew.extraction_prompts(m)) for m in ("Mira", "Abel", "Vera")] == [2, 2, 1]
    [vera_prompt] = crew.extraction_prompts("Vera")
    assert "This is a group chat: Vera shares it with Mira, Abel, Wren" in vera_prompt
    assert "We leave at dawn" not in vera_prompt

    # The join is recorded in the group's file, as SillyTavern keeps unknown keys.
    group = parse_group(next(ws.groups_dir.glob("*.json")).read_text(encoding="utf-8"))
    assert group.members == ("Mira.json", "Abel.json", "Vera.json")
    assert group.disabled_members == ("Abel.json",)
    join = group.joins(chat_id)["Vera.json"]
    assert join.at == 5


async def test_each_member_speaks_from_its_own_card_and_the_chat_is_sillytaverns(
    ws: Workspace,
) -> None:
    crew = Crew()
    app = app_with(ws, crew)
    created = app.group_chat.create("Kestrel crew", ["Mira", "Abel"], strategy="list")
    round_ = await app.group_chat.send("Kestrel crew", "Who cooks tonight?")
    await app.chat.extractions_finished()

    [mira] = crew.turn_prompts("Mira")
    assert "Mira captains the airship Kestrel." in mira and "cooks on the Kestrel" not in mira
    assert "[Start a new group chat. Group members: Mira, Abel]" in mira
    assert "Abel: Soup's on." in mira  # other members' lines carry their names
    [abel] = crew.turn_prompts("Abel")
    assert "Abel cooks on the Kestrel." in abel and "Mira: Mira answers (1)." in abel

    path = ws.group_chats_dir / f"{created.chat}.jsonl"
    chat = parse_chat(path.read_text(encoding="utf-8"))
    greeting, _, _, user, mira_reply, abel_reply = [None, *chat.messages]
    assert greeting is None and chat.header.data["user_name"] == "unused"
    assert chat.messages[0].data["original_avatar"] == "Mira.json"
    assert list(chat.messages[0].data) == [
        "is_user",
        "is_system",
        "name",
        "send_date",
        "original_avatar",
        "extra",
        "mes",
        "force_avatar",
    ]
    assert (user.name, user.is_user) == ("Wren", True)
    for reply, avatar in ((mira_reply, "Mira.json"), (abel_reply, "Abel.json")):
        assert reply.data["original_avatar"] == avatar
        assert reply.data["force_avatar"] == f"/thumbnail?type=avatar&file={avatar}"
    assert mira_reply.extra["gen_id"] == abel_reply.extra["gen_id"]  # one round
    assert [r.turn.index for r in round_.replies] == [3, 4]


async def test_each_member_is_given_its_own_memories(ws: Workspace) -> None:
    (ws.files_dir / "Mira-memories.md").write_text(
        '<memory chat="c" date="2026-01-01 10:00">\n- Mira hides a silver key in her boot.\n'
        "</memory>\n",
        encoding="utf-8",
    )
    (ws.files_dir / "Abel-memories.md").write_text(
        '<memory chat="c" date="2026-01-01 10:00">\n- Abel burned the silver soup pot.\n'
        "</memory>\n",
        encoding="utf-8",
    )
    crew = Crew()
    app = app_with(ws, crew, embedder=WordHashEmbedder())
    app.group_chat.create("Kestrel crew", ["Mira", "Abel"], strategy="list")
    round_ = await app.group_chat.send("Kestrel crew", "Where is the silver key and the pot?")
    await app.chat.extractions_finished()
    mira, abel = (reply.turn for reply in round_.replies)
    assert [m["text"] for m in mira.memories] == ["Mira hides a silver key in her boot."]
    assert [m["text"] for m in abel.memories] == ["Abel burned the silver soup pot."]
    [mira_prompt] = crew.turn_prompts("Mira")
    assert "silver key in her boot" in mira_prompt and "soup pot" not in mira_prompt


async def test_manual_order_waits_to_be_told_who_speaks(ws: Workspace) -> None:
    crew = Crew()
    app = app_with(ws, crew)
    created = app.group_chat.create("Kestrel crew", ["Mira", "Abel"], strategy="manual")
    silent = await app.group_chat.send("Kestrel crew", "Anyone awake?")
    assert silent.replies == []
    told = await app.group_chat.trigger("Kestrel crew", member="abel")
    assert [r.speaker for r in told.replies] == ["Abel"]
    chat = parse_chat((ws.group_chats_dir / f"{created.chat}.jsonl").read_text(encoding="utf-8"))
    assert [m.name for m in chat.messages] == ["Mira", "Abel", "Wren", "Abel"]
    anyone = await app.group_chat.trigger("Kestrel crew")
    assert len(anyone.replies) == 1
    await app.chat.extractions_finished()


async def test_a_muted_member_still_speaks_when_told_and_swipes_stay_its_own(
    ws: Workspace,
) -> None:
    crew = Crew()
    app = app_with(ws, crew)
    created = app.group_chat.create("Kestrel crew", ["Mira", "Abel"], strategy="list")
    app.group_chat.mute("Kestrel crew", ["Abel"])
    assert [m.muted for m in app.group_chat.view("Kestrel crew").members] == [False, True]
    told = await app.group_chat.trigger("Kestrel crew", member="Abel")
    assert [r.speaker for r in told.replies] == ["Abel"]
    swiped = await app.group_chat.redo("Kestrel crew", "swipe")
    assert swiped.speaker == "Abel" and swiped.turn.kind == "swipe"
    chat = parse_chat((ws.group_chats_dir / f"{created.chat}.jsonl").read_text(encoding="utf-8"))
    last = chat.messages[-1]
    assert last.swipes == ("Abel answers (1).", "Abel answers (2).")
    assert last.data["original_avatar"] == "Abel.json"
    with pytest.raises(CharMemoryError, match="swipe or continue"):
        await app.group_chat.redo("Kestrel crew", "regenerate")
    await app.chat.extractions_finished()


async def test_a_new_chat_becomes_the_group_s_current_one(ws: Workspace) -> None:
    app = app_with(ws, Crew())
    created = app.group_chat.create("Kestrel crew", ["Mira"])
    newer = app.group_chat.new_chat("Kestrel crew")
    view = app.group_chat.view("Kestrel crew")
    assert view.chat == newer and view.chats == [created.chat, newer]
    assert (ws.group_chats_dir / f"{newer}.jsonl").is_file()
