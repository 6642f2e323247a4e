import json
import os
import signal
import subprocess
import sys
import textwrap
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from charmemory.adapters.extraction_state import ExtractionState
from charmemory.adapters.workspace import Workspace
from charmemory.composition import App
from charmemory.formats.memory_file import (
    parse_memory_file,
)
from charmemory.ports import ChatModel, Completion, NewMemories
from charmemory.services.extraction import ExtractionService, UnusableAnswerError
from tests.support.extraction_fixtures import (
    CHARACTER,
    CHAT_ID,
    alternating,
    make_app,
    make_workspace,
    memory_block,
    message,
    write_chat,
)
from tests.support.fake_chat_model import FakeChatModel, ScriptedChatModel
from tests.support.word_hash_embedder import WordHashEmbedder

ROOT = Path(__file__).resolve().parents[2]
LONG_CHAT = ROOT / "tests" / "fixtures" / "st_chat_long.jsonl"


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2026, 3, 1, 12, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


def state_of(ws: Workspace) -> ExtractionState:
    return ExtractionState(ws.db, ws.locks, ws.state_dir)


def service(ws: Workspace, model: ChatModel, clock: Clock) -> ExtractionService:
    return make_app(ws, model, clock=clock).extraction


def memories(ws: Workspace) -> str:
    path = ws.files_dir / f"{CHARACTER}-memories.md"
    return path.read_text(encoding="utf-8") if path.exists() else ""


def sent_messages(model: FakeChatModel) -> list[str]:
    """The chat text of each extraction call, as the model saw it."""
    return ["\n".join(m.content for m in request.messages) for request in model.requests]


async def test_extract_now_appends_one_block_and_never_resends(
    tmp_path: Path, chat_model: ScriptedChatModel, clock: Clock
) -> None:
    ws = make_workspace(tmp_path / "ws", messages_per_call=10)
    write_chat(ws, alternating(10))
    chat_model.reply_text(memory_block("Alex owes Mira forty crowns.", "Mira lost her first ship."))
    report = await service(ws, chat_model, clock).extract(CHARACTER)
    assert report.saved == 2
    text = memories(ws)
    assert f'<memory chat="{CHAT_ID}" date="' in text
    assert "- Alex owes Mira forty crowns.\n- Mira lost her first ship.\n</memory>" in text

    again = await service(ws, chat_model, clock).extract(CHARACTER)
    assert again.planned_messages == 0 and len(chat_model.requests) == 1
    assert memories(ws) == text


async def test_each_call_asks_for_new_memories_of_the_character_with_the_user(
    tmp_path: Path, clock: Clock
) -> None:
    ws = make_workspace(tmp_path / "ws", messages_per_call=10, max_bullets=3)
    write_chat(ws, alternating(20))
    model = FakeChatModel(
        lambda request: Completion(memory_block(f"Fact {len(model.requests)} about Alex."))
    )

    app = make_app(ws, model, clock=clock)
    report = await app.extraction.extract(CHARACTER)

    assert report.saved == 2
    assert [request.answer_format for request in model.requests] == [
        NewMemories(max_bullets=3, character=CHARACTER, user="Alex")
    ] * 2


async def test_pile_up_during_cooldown_is_extracted_in_chunks_when_it_fires(
    tmp_path: Path, chat_model: ScriptedChatModel, clock: Clock
) -> None:
    ws = make_workspace(tmp_path / "ws", interval=20, cooldown_minutes=10, messages_per_call=20)
    write_chat(ws, alternating(2))
    chat_model.reply_text("NO_NEW_MEMORIES")
    await service(ws, chat_model, clock).extract(CHARACTER)  # starts the cooldown clock
    write_chat(ws, alternating(62))  # 60 new messages, 30 of them the character's

    clock.now += timedelta(minutes=3)
    held = await service(ws, chat_model, clock).on_character_message(CHARACTER)
    assert held.decision is not None and held.decision.reason == "cooldown"
    assert held.decision.progress == (30, 20)
    assert len(chat_model.requests) == 1

    clock.now += timedelta(minutes=8)
    for n in range(3):
        chat_model.reply_text(memory_block(f"Fact number {n} happened."))
    fired = await service(ws, chat_model, clock).on_character_message(CHARACTER)
    assert fired.decision is not None and fired.decision.run
    assert [(c.first, c.last) for c in fired.chunks] == [(2, 21), (22, 41), (42, 61)]
    assert len(chat_model.requests) == 4
    assert memories(ws).count("<memory ") == 3


async def test_swipes_do_not_count_as_new_messages(
    tmp_path: Path, chat_model: ScriptedChatModel, clock: Clock
) -> None:
    ws = make_workspace(tmp_path / "ws", interval=3, cooldown_minutes=0)
    chat = alternating(4)  # two character messages
    write_chat(ws, chat)
    for swipe in range(5):
        chat[3] = message(3, is_user=False, text=f"swipe {swipe}", swipes=["a", "b"], swipe_id=1)
        write_chat(ws, chat)
        decision = (await service(ws, chat_model, clock).on_character_message(CHARACTER)).decision
        assert decision is not None and decision.progress == (2, 3) and not decision.run
    assert chat_model.requests == []


async def test_extract_here_stops_at_the_given_message(
    tmp_path: Path, chat_model: ScriptedChatModel, clock: Clock
) -> None:
    ws = make_workspace(tmp_path / "ws")
    write_chat(ws, alternating(12))
    chat_model.reply_text(memory_block("Mira named her ship the Kestrel."))
    report = await service(ws, chat_model, clock).extract(CHARACTER, up_to=5)
    assert [(c.first, c.last) for c in report.chunks] == [(0, 5)]
    assert state_of(ws).chat(CHARACTER, CHAT_ID).watermark == 5
    assert "line 5." in sent_messages(chat_model)[0]
    assert "line 6." not in sent_messages(chat_model)[0]


async def test_unusable_answer_saves_nothing_and_keeps_messages_unprocessed(
    tmp_path: Path, chat_model: ScriptedChatModel, clock: Clock
) -> None:
    ws = make_workspace(tmp_path / "ws")
    write_chat(ws, alternating(6))
    chat_model.reply_text("I'm sorry, but I can't help with that request.")
    with pytest.raises(UnusableAnswerError, match="messages 0-5"):
        await service(ws, chat_model, clock).extract(CHARACTER)
    assert memories(ws) == ""
    assert state_of(ws).chat(CHARACTER, CHAT_ID).watermark == -1


async def test_an_answer_of_copied_dialogue_saves_nothing_and_moves_on(
    tmp_path: Path, chat_model: ScriptedChatModel, clock: Clock
) -> None:
    ws = make_workspace(tmp_path / "ws")
    write_chat(ws, alternating(6))
    chat_model.reply_text(memory_block("How would you feel about keeping the charts?"))

    report = await service(ws, chat_model, clock).extract(CHARACTER)

    assert report.chunks[0].saved == [] and report.chunks[0].nothing_new
    assert report.chunks[0].warnings[0].startswith("speech: left out 1 bullet(s)")
    assert memories(ws) == ""
    # The model answered; asking again would bring the same lines back.
    assert state_of(ws).chat(CHARACTER, CHAT_ID).watermark == 5


async def test_duplicates_of_saved_memories_are_dropped(
    tmp_path: Path, chat_model: ScriptedChatModel, clock: Clock
) -> None:
    ws = make_workspace(tmp_path / "ws", messages_per_call=10)
    write_chat(ws, alternating(20))
    chat_model.reply_text(memory_block("Alex owes Mira forty crowns."))
    chat_model.reply_text(memory_block("alex owes Mira forty crowns!", "Mira trusts Alex now."))
    report = await service(ws, chat_model, clock).extract(CHARACTER)
    assert report.chunks[1].saved == ["Mira trusts Alex now."]
    assert report.chunks[1].dropped == ["alex owes Mira forty crowns!"]
    # The second call showed the first call's memory as existing knowledge.
    assert "Alex owes Mira forty crowns." in sent_messages(chat_model)[1]


async def test_long_sillytavern_chat_is_cleaned_before_it_is_sent(
    tmp_path: Path, chat_model: ScriptedChatModel, clock: Clock
) -> None:
    ws = make_workspace(tmp_path / "ws", messages_per_call=200)
    lines = LONG_CHAT.read_text(encoding="utf-8").split("\n")
    header = json.loads(lines[0])
    header["character_name"] = CHARACTER
    write_chat(ws, [json.loads(x) for x in lines[1:]])
    for _ in range(2):
        chat_model.reply_text(memory_block("Something worth keeping happened."))
    report = await service(ws, chat_model, clock).extract(CHARACTER)
    assert report.planned_chunks == 2 and report.planned_messages < len(lines) - 1
    sent = "\n".join(sent_messages(chat_model))
    assert "```" not in sent and "<details" not in sent and "<span" not in sent
    assert "</memory>\n<memory" not in sent
    hidden = [json.loads(x)["mes"] for x in lines[1:] if json.loads(x).get("is_system")]
    assert hidden and not any(text.strip() and text in sent for text in hidden)


KILLER = textwrap.dedent(
    """
    import asyncio, os, signal, sys
    from pathlib import Path
    from charmemory.adapters.memory_files import MemoryFiles
    from charmemory.adapters.workspace import Workspace
    from charmemory.ports import Completion
    from tests.support.extraction_fixtures import CHARACTER, make_app, memory_block
    from tests.support.fake_chat_model import FakeChatModel

    real_save = MemoryFiles.save
    def save_then_die(self, loaded, new, **kwargs):
        real_save(self, loaded, new, **kwargs)
        os.kill(os.getpid(), signal.SIGKILL)  # between the file write and the state write
    MemoryFiles.save = save_then_die
    ws = Workspace.open(Path(sys.argv[1]))
    model = FakeChatModel(lambda request: Completion(memory_block("First chunk fact.")))
    asyncio.run(make_app(ws, model).extraction.extract(CHARACTER))
    """
)


async def test_killed_between_file_write_and_state_write_no_duplicate_no_gap(
    tmp_path: Path, chat_model: ScriptedChatModel, clock: Clock
) -> None:
    ws = make_workspace(tmp_path / "ws", messages_per_call=10)
    write_chat(ws, alternating(20))
    child = subprocess.run(
        [sys.executable, "-c", KILLER, str(ws.root)],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": f"{ROOT / 'src'}{os.pathsep}{ROOT}"},
        capture_output=True,
        timeout=60,
    )
    assert child.returncode == -signal.SIGKILL, child.stderr.decode()
    assert memories(ws).count("First chunk fact.") == 1
    assert state_of(ws).chat(CHARACTER, CHAT_ID).watermark == -1  # state not written

    chat_model.reply_text(memory_block("Second chunk fact."))
    report = await service(ws, chat_model, clock).extract(CHARACTER)
    assert [(c.first, c.last) for c in report.chunks] == [(10, 19)]  # chunk 1 not resent
    text = memories(ws)
    assert text.count("First chunk fact.") == 1 and text.count("Second chunk fact.") == 1
    assert state_of(ws).chat(CHARACTER, CHAT_ID).watermark == 19
    assert len(chat_model.requests) == 1


async def test_append_journalled_but_file_never_written_is_redone(
    tmp_path: Path, chat_model: ScriptedChatModel, clock: Clock
) -> None:
    ws = make_workspace(tmp_path / "ws", messages_per_call=10)
    write_chat(ws, alternating(10))
    state_of(ws).begin_append(
        CHARACTER,
        CHAT_ID,
        file="user/files/Mira-memories.md",
        block="<memory>x</memory>",
        first_idx=0,
        last_idx=9,
        fingerprints={},
        now=clock.now,
    )
    chat_model.reply_text(memory_block("Redone fact."))
    report = await service(ws, chat_model, clock).extract(CHARACTER)
    assert [(c.first, c.last) for c in report.chunks] == [(0, 9)]
    assert memories(ws).count("Redone fact.") == 1
    assert state_of(ws).pending() == []


async def test_deleting_an_extracted_message_does_not_skip_the_next_new_one(
    tmp_path: Path, chat_model: ScriptedChatModel, clock: Clock
) -> None:
    ws = make_workspace(tmp_path / "ws", messages_per_call=10)
    chat = alternating(10)
    write_chat(ws, chat)
    chat_model.reply_text("NO_NEW_MEMORIES")
    await service(ws, chat_model, clock).extract(CHARACTER)
    del chat[4]  # an extracted message is deleted; later ones shift down
    chat.append(message(99, is_user=False, text="Brand new message after the deletion."))
    write_chat(ws, chat)
    chat_model.reply_text(memory_block("A new fact."))
    report = await service(ws, chat_model, clock).extract(CHARACTER)
    assert [(c.first, c.last) for c in report.chunks] == [(9, 9)]
    assert "Brand new message after the deletion." in sent_messages(chat_model)[1]


def related_memory_file(ws: Workspace) -> None:
    blocks = [
        '<memory chat="old" date="2025-01-01 10:00">\n'
        "- Mira's grandmother gave her a silver amulet shaped like a swallow.\n</memory>"
    ]
    for day in range(1, 29):
        blocks.append(
            f'<memory chat="c" date="2026-02-{day:02d} 10:00">\n'
            f"- On day {day} the crew repainted deck {day} of the Kestrel.\n</memory>"
        )
    (ws.files_dir / "Mira-memories.md").write_text("\n\n".join(blocks) + "\n", encoding="utf-8")


@pytest.mark.local_model
async def test_existing_memories_in_the_prompt_are_the_related_ones(
    tmp_path: Path, chat_model: ScriptedChatModel, clock: Clock
) -> None:
    ws = make_workspace(tmp_path / "ws", existing_memories_budget=60)
    related_memory_file(ws)
    chat = alternating(4)
    chat[3] = message(
        3, is_user=False, text="Mira touches the silver swallow amulet at her throat."
    )
    write_chat(ws, chat)
    plain = await service(ws, chat_model, clock).extract(CHARACTER, dry_run=True)
    ranked = await make_app(ws, chat_model, clock=clock, index=True).extraction.extract(
        CHARACTER, dry_run=True
    )
    prompt_of = lambda report: "\n".join(m.content for m in report.prompts[0])  # noqa: E731
    assert "grandmother gave her a silver amulet" not in prompt_of(plain)  # oldest block
    assert "grandmother gave her a silver amulet" in prompt_of(ranked)


@pytest.mark.local_model
async def test_new_bullets_that_restate_a_saved_memory_are_dropped(
    tmp_path: Path, chat_model: ScriptedChatModel, clock: Clock
) -> None:
    ws = make_workspace(tmp_path / "ws")
    related_memory_file(ws)
    write_chat(ws, alternating(4))
    update = (
        "Mira's grandmother gave her a silver amulet shaped like a swallow when Mira turned twelve."
    )
    chat_model.reply_text(
        memory_block(
            "Mira's grandmother gave her a silver amulet in the shape of a swallow.",
            "The silver swallow amulet Mira wears was a gift from her grandmother.",
            update,
            "Alex learned to read the Kestrel's star charts.",
        )
    )
    app = make_app(ws, chat_model, clock=clock, index=True)
    report = await app.extraction.extract(CHARACTER)
    # The same fact in other words is dropped; one that adds a number (or a name) is not.
    assert report.chunks[0].saved == [update, "Alex learned to read the Kestrel's star charts."]
    assert len(report.chunks[0].dropped) == 2
    # Extraction's lookups are not retrievals the character was shown: diagnose
    # must keep showing the last real one.
    located = app.locator.locate(CHARACTER)
    assert await app.retrieval.last_retrieval(located.location.collection) is None


@pytest.mark.local_model
async def test_a_bullet_joining_saved_memories_keeps_only_its_news(
    tmp_path: Path, chat_model: ScriptedChatModel, clock: Clock
) -> None:
    ws = make_workspace(tmp_path / "ws")
    related_memory_file(ws)
    write_chat(ws, alternating(4))
    chat_model.reply_text(
        memory_block(
            # Two saved memories copied back as one bullet: a restatement.
            "Mira's grandmother gave her a silver amulet shaped like a swallow. "
            "On day 3 the crew repainted deck 3 of the Kestrel.",
            # A saved memory with one new sentence: the new sentence is kept.
            "On day 5 the crew repainted deck 5 of the Kestrel. "
            "Alex learned to read the Kestrel's star charts.",
        )
    )
    app = make_app(ws, chat_model, clock=clock, index=True)

    report = await app.extraction.extract(CHARACTER)

    assert report.chunks[0].saved == ["Alex learned to read the Kestrel's star charts."]
    assert report.chunks[0].dropped == [
        "Mira's grandmother gave her a silver amulet shaped like a swallow. "
        "On day 3 the crew repainted deck 3 of the Kestrel.",
        "On day 5 the crew repainted deck 5 of the Kestrel.",
    ]


async def test_a_stopped_run_keeps_finished_chunks_and_resumes_after_them(
    tmp_path: Path, chat_model: ScriptedChatModel, clock: Clock
) -> None:
    import asyncio

    ws = make_workspace(tmp_path / "ws", messages_per_call=10)
    write_chat(ws, alternating(30))
    stop = asyncio.Event()

    def stop_after_first(report, done: int, total: int) -> None:
        if done == 1:
            stop.set()

    chat_model.reply_text(memory_block("Chunk one fact."))
    first = await service(ws, chat_model, clock).extract(
        CHARACTER, progress=stop_after_first, stop=stop
    )
    assert first.stopped and [(c.first, c.last) for c in first.chunks] == [(0, 9)]
    for n in (2, 3):
        chat_model.reply_text(memory_block(f"Chunk {n} fact."))
    rest = await service(ws, chat_model, clock).extract(CHARACTER)
    assert [(c.first, c.last) for c in rest.chunks] == [(10, 19), (20, 29)]
    assert len(chat_model.requests) == 3


async def test_junk_in_a_chat_or_an_answer_never_reaches_the_memory_file(
    tmp_path: Path, clock: Clock
) -> None:
    ws = make_workspace(tmp_path / "ws", max_bullet_chars=200)
    chat = alternating(4)
    chat[1] = message(1, is_user=False, text="Mira\x00 hid the \u202ekey\u2069 under the mat.")
    write_chat(ws, chat)
    page = "the storm went on " * 300_000  # a five-megabyte bullet
    answer = memory_block("Mira hid the \u202ekey\x00 under the mat.", page)
    model = FakeChatModel(lambda request: Completion(answer))
    app = make_app(ws, model, clock=clock)

    report = await app.extraction.extract(CHARACTER)

    sent = "\n".join(m.content for m in model.requests[0].messages)
    assert "Mira hid the key under the mat." in sent and "\x00" not in sent
    text = memories(ws)
    assert "- Mira hid the key under the mat.\n" in text
    assert not any(char in text for char in "\x00\u202e\u2069")
    [cut] = [line for line in text.splitlines() if line.startswith("- the storm")]
    assert len(cut) <= 2 + 200 and cut.endswith(" […]")
    assert any(w.startswith("too long: cut 1 bullet") for w in report.chunks[0].warnings)


def two_chunk_facts(request: object) -> Completion:
    """Chunk one (messages 0-9) and chunk two (10-19) each hold one fact."""
    sent = "\n".join(m.content for m in request.messages)  # type: ignore[attr-defined]
    if "line 19." in sent:
        return Completion(memory_block("Mira lost her first ship in a storm."))
    return Completion(memory_block("Alex owes Mira forty crowns for the repairs."))


def indexed_app(ws: Workspace, clock: Clock) -> App:
    return make_app(ws, FakeChatModel(two_chunk_facts), clock=clock, embedder=WordHashEmbedder())


@pytest.mark.parametrize("how", ["clear", "file deleted by hand", "file emptied by hand"])
async def test_memories_that_are_gone_never_count_as_duplicates_of_new_ones(
    tmp_path: Path, clock: Clock, how: str
) -> None:
    ws = make_workspace(tmp_path / "ws", messages_per_call=10)
    write_chat(ws, alternating(20))
    first = await indexed_app(ws, clock).extraction.extract(CHARACTER)
    assert first.saved == 2
    path = ws.files_dir / f"{CHARACTER}-memories.md"
    if how == "clear":
        await indexed_app(ws, clock).extraction_admin.clear(CHARACTER, confirmed=True)
        again = await indexed_app(ws, clock).extraction.extract(CHARACTER)
    else:
        path.unlink() if how == "file deleted by hand" else path.write_text("", encoding="utf-8")
        again = await indexed_app(ws, clock).extraction.extract(
            CHARACTER, forced_range=(0, 19), force=True
        )

    assert [c.dropped for c in again.chunks] == [[], []]
    assert again.saved == 2
    text = memories(ws)
    assert "forty crowns" in text and "first ship" in text


async def test_merged_chunks_grow_the_chats_last_block_across_runs_up_to_the_cap(
    tmp_path: Path, clock: Clock
) -> None:
    ws = make_workspace(tmp_path / "ws", messages_per_call=10, merge_chunks=True, max_bullets=3)
    facts = iter(["Fact one.", "Fact two.", "Fact three.", "Fact four."])
    model = FakeChatModel(lambda request: Completion(memory_block(next(facts))))
    app = make_app(ws, model, clock=clock)
    write_chat(ws, alternating(10))
    await app.extraction.extract(CHARACTER)
    path = ws.files_dir / f"{CHARACTER}-memories.md"
    path.write_text(path.read_text(encoding="utf-8") + "\nNotes between blocks.\n")
    path.write_text(
        path.read_text(encoding="utf-8").replace("- Fact one.\n", "- Fact one.\nMy note.\n")
    )

    for count in (20, 30, 40):  # three more runs, one new chunk each
        write_chat(ws, alternating(count))
        await app.extraction.extract(CHARACTER)

    blocks = parse_memory_file(memories(ws)).blocks
    assert [[b.text for b in block.bullets] for block in blocks] == [
        ["Fact one.", "Fact two.", "Fact three."],
        ["Fact four."],
    ]
    assert [n.raw for n in blocks[0].notes] == ["My note.\n"]
    assert memories(ws).count("Notes between blocks.") == 1
