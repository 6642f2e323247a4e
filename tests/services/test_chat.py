"""Talking to a character: turns, swipes, continues, edits, branches, stop, conflicts."""

import asyncio
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from charmemory.adapters.workspace import Workspace
from charmemory.composition import App
from charmemory.errors import CharMemoryError, ConflictError
from charmemory.formats.chat import parse_chat
from charmemory.ports import Completion, StreamDelta
from tests.support.extraction_fixtures import CHARACTER, make_workspace, memory_block
from tests.support.fake_chat_model import ChatRequest, FakeChatModel


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2026, 3, 1, 12, tzinfo=UTC)

    def __call__(self) -> datetime:
        self.now += timedelta(seconds=1)
        return self.now


def card_with(ws: Workspace, **data: object) -> None:
    card = {
        "spec": "chara_card_v2",
        "spec_version": "2.0",
        "data": {
            "name": CHARACTER,
            "description": "{{char}} captains the airship Kestrel.",
            "personality": "Sardonic.",
            "scenario": "",
            "first_mes": "Welcome aboard, {{user}}.",
            "mes_example": "",
            **data,
        },
    }
    (ws.characters_dir / f"{CHARACTER}.json").write_text(json.dumps(card), encoding="utf-8")


def replying(*texts: str) -> FakeChatModel:
    """A model that answers memory requests with nothing new and chat turns with ``texts``."""
    replies = iter(texts)

    def answer(request: ChatRequest) -> Completion:
        if request.answer_format.__class__.__name__ == "NewMemories":
            return Completion("NO_NEW_MEMORIES")
        return Completion(next(replies), reasoning="thinking" if request.stream else "")

    return FakeChatModel(answer)


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    ws = make_workspace(tmp_path / "ws", interval=3, cooldown_minutes=0)
    card_with(ws)
    return ws


def app_with(ws: Workspace, model: FakeChatModel) -> App:
    return App(ws, env={}, chat_model=lambda: model, clock=Clock(), index_for_extraction=False)


def chat_file(ws: Workspace) -> Path:
    [path] = (ws.chats_dir / CHARACTER).glob("*.jsonl")
    return path


async def test_a_turn_is_saved_as_sillytavern_writes_it(ws: Workspace) -> None:
    model = replying("Aye, we sail at dawn.")
    app = app_with(ws, model)
    app.settings.set("persona.name", "Alex")
    turn = await app.chat.send(CHARACTER, "When do we sail?")
    assert (turn.index, turn.reply, turn.kind) == (2, "Aye, we sail at dawn.", "normal")
    chat = parse_chat(chat_file(ws).read_text(encoding="utf-8"))
    assert chat.header.data["user_name"] == "unused"  # the 1.15+ header form
    greeting, user, reply = chat.messages
    assert greeting.mes == "Welcome aboard, {{user}}."  # macros stay for SillyTavern to show
    assert (user.name, user.is_user, user.mes) == ("Alex", True, "When do we sail?")
    assert (reply.name, reply.mes, reply.extra["reasoning"]) == (
        CHARACTER,
        "Aye, we sail at dawn.",
        "thinking",
    )
    assert reply.extra["api"] == "fake" and reply.swipes == ("Aye, we sail at dawn.",)
    sent = model.requests[0]
    assert sent.stream and sent.messages[-1].content.endswith("When do we sail?")
    system = "\n".join(m.content for m in sent.messages if m.role == "system")
    assert "Mira captains the airship Kestrel." in system  # the card, macros replaced
    assert "Welcome aboard, Alex." in "\n".join(m.content for m in sent.messages)


async def test_swipe_regenerate_continue_and_choose(ws: Workspace) -> None:
    app = app_with(ws, replying("First.", "Second.", "Third.", " And more."))
    await app.chat.send(CHARACTER, "Hello?")
    swiped = await app.chat.generate(CHARACTER, kind="swipe")
    assert (swiped.index, swiped.reply) == (2, "Second.")
    assert await app.chat.choose_swipe(CHARACTER, 1) == "First."
    regenerated = await app.chat.generate(CHARACTER, kind="regenerate")
    assert (regenerated.index, regenerated.reply) == (2, "Third.")
    continued = await app.chat.generate(CHARACTER, kind="continue")
    assert continued.reply == "Third. And more."
    reply = parse_chat(chat_file(ws).read_text(encoding="utf-8")).messages[2]
    assert reply.swipes == ("Third. And more.",)


async def test_edit_delete_hide_and_branch(ws: Workspace) -> None:
    app = app_with(ws, replying("One.", "Two."))
    await app.chat.send(CHARACTER, "a")
    await app.chat.send(CHARACTER, "b")
    await app.chat.edit(CHARACTER, 1, "A, edited.")
    assert await app.chat.set_hidden(CHARACTER, 1, 2, True) == [1, 2]
    name = await app.chat.branch(CHARACTER, 2)
    assert name.endswith(" - Branch #2")
    branch = parse_chat((ws.chats_dir / CHARACTER / f"{name}.jsonl").read_text(encoding="utf-8"))
    assert [m.mes for m in branch.messages][1:] == ["A, edited.", "One."]
    assert branch.header.chat_metadata["main_chat"] != name
    assert (
        await app.chat.delete_last(CHARACTER, 2, chat_id=branch.header.chat_metadata["main_chat"])
        == 2
    )


async def test_a_stopped_reply_keeps_what_streamed_and_is_marked(ws: Workspace) -> None:
    stop = asyncio.Event()
    pieces = [StreamDelta("The "), StreamDelta("storm "), StreamDelta("broke.")]

    def answer(request: ChatRequest) -> list[StreamDelta]:
        return pieces

    app = app_with(ws, FakeChatModel(answer))
    seen: list[str] = []

    def on_delta(delta: StreamDelta) -> None:
        seen.append(delta.text)
        if len(seen) == 2:
            stop.set()

    turn = await app.chat.send(CHARACTER, "Go on.", on_delta=on_delta, stop=stop)
    assert turn.stopped and turn.reply == "The storm "
    reply = parse_chat(chat_file(ws).read_text(encoding="utf-8")).messages[-1]
    assert reply.mes == "The storm " and reply.extra["stopped"] is True


async def test_a_chat_changed_on_disk_meanwhile_is_not_overwritten(ws: Workspace) -> None:
    app = app_with(ws, replying("Never saved."))
    app.chat.new_chat(CHARACTER)
    path = chat_file(ws)

    async def meddle(request: ChatRequest) -> Completion:
        path.write_text(path.read_text(encoding="utf-8") + "\n", encoding="utf-8")
        return Completion("Never saved.")

    app = app_with(ws, FakeChatModel(meddle))
    with pytest.raises(ConflictError, match="the reply was not saved"):
        await app.chat.send(CHARACTER, "Hello?")
    [record] = app.chat.generations(CHARACTER, path.stem)
    assert record.reply == "Never saved." and "changed on disk" in (record.error or "")


async def test_automatic_extraction_runs_in_the_background_after_enough_replies(
    ws: Workspace,
) -> None:
    def answer(request: ChatRequest) -> Completion:
        if request.answer_format.__class__.__name__ == "NewMemories":
            return Completion(memory_block("Alex fears heights."))
        return Completion(f"Reply {len(model.requests)}.")

    model = FakeChatModel(answer)
    app = app_with(ws, model)
    # The greeting and the first reply make 2 of 3 character messages; the second fires.
    outcomes = [(await app.chat.send(CHARACTER, f"line {n}")).extraction for n in range(2)]
    assert outcomes == ["skipped: 2/3 msgs", "started"]
    assert await app.chat.extractions_finished() == []
    assert (await app.chat.send(CHARACTER, "line 2")).extraction == "skipped: 1/3 msgs"
    memories = (ws.files_dir / f"{CHARACTER}-memories.md").read_text(encoding="utf-8")
    assert "- Alex fears heights." in memories


async def test_lorebooks_join_the_prompt_by_key_and_by_similarity(ws: Workspace) -> None:
    from charmemory.formats.lorebook import Lorebook, new_entry
    from tests.support.word_hash_embedder import WordHashEmbedder

    book = Lorebook()
    book.put(new_entry("The Kestrel's boiler is named Old Maud.", ["boiler"], uid=0))
    book.put(
        new_entry(
            "Brassport's harbour master takes bribes in silver.",
            [],
            uid=1,
            vectorized=True,
            comment="harbour",
        )
    )
    book.put(new_entry("The Saltglass Isles lie far south.", ["saltglass"], uid=2))
    (ws.worlds_dir / "Kestrel.json").write_text(book.render(), encoding="utf-8")
    card_with(ws, extensions={"world": "Kestrel"})
    model = replying("Hm.")
    app = App(ws, env={}, chat_model=lambda: model, clock=Clock(), embedder=WordHashEmbedder())
    turn = await app.chat.send(
        CHARACTER, "Does the harbour master take silver bribes? The boiler hisses."
    )
    activated = {(entry["book"], entry["uid"]) for entry in turn.world_info}
    assert activated == {("Kestrel", 0), ("Kestrel", 1)}
    prompt = "\n".join(message.content for message in model.requests[0].messages)
    assert "Old Maud" in prompt and "bribes in silver" in prompt and "far south" not in prompt
    [record] = app.chat.generations(CHARACTER)
    why = {entry["uid"]: entry for entry in record.world_info}
    assert why[1]["reason"] == "vector" and not why[2]["activated"]
    assert record.lorebooks == [
        {"source": "character", "name": "Kestrel", "entries": 3, "keys": ["boiler", "saltglass"]}
    ]


GREETING = (
    "*Steam hisses across the lower docks of Brassport as you find berth nine, where a "
    "patched brass-and-canvas airship strains at her mooring ropes. A tall woman with a "
    "copper braid and goggles pushed up on her forehead looks you over from the gangplank.* "
    "\"You must be the passenger who paid in cash and asked no questions. I'm Captain Mira "
    "Vance, and this lovely wreck is the *Kestrel's Wake*. Mind the third step, {{user}}. "
    'It bites."'
)
SHIP_MEMORIES = (
    "The Kestrel's Wake is moored at berth nine on the lower docks of Brassport.",
    "Mira wears her goggles pushed up on her forehead over a copper braid.",
    "The third step of the gangplank bites; Mira warns every passenger.",
    "Alex paid for passage in cash and asked no questions.",
    "The airship's brass-and-canvas hull is patched and strains at the mooring ropes.",
    "Steam hisses from the Kestrel's boiler whenever the docks are cold.",
)
BROTHER = "Alex's younger brother Rowan went to work the salt kilns on the Saltglass Isles."


def remember_the_ship(ws: Workspace) -> None:
    (ws.files_dir / f"{CHARACTER}-memories.md").write_text(
        '<memory chat="c" date="2026-02-15 10:00">\n'
        + "".join(f"- {text}\n" for text in (*SHIP_MEMORIES, BROTHER))
        + "</memory>\n",
        encoding="utf-8",
    )


async def test_a_first_turn_finds_what_the_user_asks_about_not_the_greeting(
    ws: Workspace,
) -> None:
    from tests.support.word_hash_embedder import WordHashEmbedder

    card_with(ws, first_mes=GREETING)
    remember_the_ship(ws)
    model = replying("*She goes quiet.*")
    app = App(ws, env={}, chat_model=lambda: model, clock=Clock(), embedder=WordHashEmbedder())
    app.settings.set("retrieval.top_k", "3")

    turn = await app.chat.send(
        CHARACTER, "Mira, do you remember where my younger brother went? Rowan wrote no letter."
    )

    assert turn.memories[0]["text"] == BROTHER
    prompt = "\n".join(message.content for message in model.requests[0].messages)
    assert BROTHER in prompt and "Steam hisses across" in prompt  # the greeting is still shown
    inspected = await app.memory_search.inject(CHARACTER)
    assert inspected.retrieval.results[0].text == BROTHER


async def test_a_turn_embeds_only_the_users_words_the_reply_was_embedded_as_written(
    ws: Workspace,
) -> None:
    from tests.support.word_hash_embedder import WordHashEmbedder

    card_with(ws, first_mes=GREETING)
    remember_the_ship(ws)
    embedder = WordHashEmbedder()
    model = replying("*She points at berth nine.*", "*She frowns.* The third step bites.")
    app = App(ws, env={}, chat_model=lambda: model, clock=Clock(), embedder=embedder)
    await app.chat.send(CHARACTER, "Where is the Kestrel moored?")
    await asyncio.sleep(0.01)  # the user reads the reply
    embedder.calls.clear()

    turn = await app.chat.send(CHARACTER, "Which step of the gangplank bites?")

    assert embedder.calls == [["Which step of the gangplank bites?"]]
    assert turn.memories[0]["text"] == SHIP_MEMORIES[2]
    await asyncio.sleep(0.01)
    assert embedder.calls[1:] == [["*She frowns.* The third step bites."]]


@pytest.mark.parametrize("failing", ["the model", "the prompt", "the memory query"])
async def test_a_turn_that_fails_keeps_the_users_message(ws: Workspace, failing: str) -> None:
    def refuse(request: ChatRequest) -> Completion:
        raise CharMemoryError("the provider refused")

    if failing == "the prompt":  # the card's lorebook cannot be read
        card_with(ws, extensions={"world": "Broken"})
        (ws.root / "worlds" / "Broken.json").write_text("{not JSON", encoding="utf-8")
    app = app_with(ws, FakeChatModel(refuse))
    if failing == "the memory query":  # an embedding server named without its model
        model = FakeChatModel(refuse)
        app = App(ws, env={}, chat_model=lambda: model, clock=Clock(), index_for_extraction=True)
        app.settings.set("retrieval.embedder", "openai")
    app.chat.new_chat(CHARACTER)
    with pytest.raises(CharMemoryError):
        await app.chat.send(CHARACTER, "Anyone there?")
    said = [m.mes for m in parse_chat(chat_file(ws).read_text(encoding="utf-8")).messages]
    assert said[-1] == "Anyone there?"


async def test_a_new_chat_calls_the_user_what_the_characters_last_chat_did(ws: Workspace) -> None:
    model = replying("Aye.", "Welcome back.", "Hello.")
    app = app_with(ws, model)
    app.settings.set("persona.name", "Alex")
    await app.chat.send(CHARACTER, "When do we sail?")
    app.settings.unset("persona.name")  # no persona: the chats say who the user is

    await app.chat.send(CHARACTER, "I'm back.", new=True)

    users = [m.name for m in app.chat.open_chat(CHARACTER).chat.messages if m.is_user]
    assert users == ["Alex"]
    assert "Welcome aboard, Alex." in "\n".join(m.content for m in model.requests[-1].messages)
    app.settings.set("persona.name", "Bea")  # a persona set wins over every chat
    await app.chat.send(CHARACTER, "Hi.", new=True)
    users = [m.name for m in app.chat.open_chat(CHARACTER).chat.messages if m.is_user]
    assert users == ["Bea"]


async def test_a_reply_without_a_message_in_a_new_chat_calls_the_user_by_name(
    ws: Workspace,
) -> None:
    model = replying("Aye.", "Fair winds.")
    app = app_with(ws, model)
    app.settings.set("persona.name", "Alex")
    await app.chat.send(CHARACTER, "When do we sail?")
    app.settings.unset("persona.name")
    fresh = app.chat.new_chat(CHARACTER)

    await app.chat.generate(CHARACTER, fresh.ref.id)

    prompt = "\n".join(m.content for m in model.requests[-1].messages)
    assert "Welcome aboard, Alex." in prompt and "Welcome aboard, User." not in prompt


async def test_an_unreadable_old_chat_does_not_stop_a_new_one(ws: Workspace) -> None:
    model = replying("Aye.", "Welcome back.")
    app = app_with(ws, model)
    app.settings.set("persona.name", "Alex")
    await app.chat.send(CHARACTER, "When do we sail?")
    app.settings.unset("persona.name")
    broken = ws.chats_dir / CHARACTER / f"{CHARACTER} - 2026-03-02@09h00m00s.jsonl"
    broken.write_bytes(b'{"chat_metadata": {}}\n\xff\xfe not json <script>\n')

    turn = await app.chat.send(CHARACTER, "I'm back.", new=True)

    users = [m.name for m in app.chat.open_chat(CHARACTER, turn.chat).chat.messages if m.is_user]
    assert users == ["Alex"]  # the readable chat before the broken one still names them
