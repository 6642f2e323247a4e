"""Extraction's prompts fit the model's context, and cost no lookup they do not need."""

import json
from pathlib import Path

from charmemory.composition import App
from charmemory.core.existing_memories import approx_tokens
from charmemory.ports import Completion
from tests.support.extraction_fixtures import (
    CHARACTER,
    alternating,
    make_workspace,
    memory_block,
    message,
    write_chat,
)
from tests.support.fake_chat_model import FakeChatModel
from tests.support.word_hash_embedder import WordHashEmbedder

HUGE = "The storm went on. " * 110_000  # about 2 MB


def prompt_tokens(messages: list) -> int:
    return sum(approx_tokens(m.content) for m in messages)


async def test_a_huge_message_and_card_are_cut_to_the_models_context(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path / "ws", messages_per_call=10)
    card = json.loads((ws.characters_dir / f"{CHARACTER}.json").read_text())
    card["data"]["description"] = "An airship captain. " + "She knows every wind. " * 1_000_000
    (ws.characters_dir / f"{CHARACTER}.json").write_text(json.dumps(card))
    chat = alternating(10)
    chat[4] = message(4, is_user=True, text=HUGE)
    write_chat(ws, chat)
    model = FakeChatModel(lambda request: Completion(memory_block("Alex survived the storm.")))
    app = App(ws, env={}, chat_model=lambda: model, index_for_extraction=False)
    app.settings.set("model.provider", "openrouter")
    app.settings.set("model.context_size", "8192")  # kept for the provider in force

    report = await app.extraction.extract(CHARACTER)

    [request] = model.requests
    sent = "\n".join(m.content for m in request.messages)
    assert prompt_tokens(list(request.messages)) + request.max_tokens <= 8192
    assert "Mira says line 9." in sent and "An airship captain." in sent
    assert "more characters not sent: too long for the prompt]" in sent
    assert report.chunks[0].warnings[0].startswith("cut to fit the prompt: message 4 (")
    budget = [e for e in app.activity.entries() if e.kind == "extract.budget"]
    assert [e.level for e in budget] == ["warning", "warning"]
    assert "the character card" in budget[0].message and "message 4 (" in budget[1].message


async def test_the_default_context_holds_a_normal_chunk_whole(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path / "ws")
    write_chat(ws, alternating(20))
    app = App(ws, env={}, index_for_extraction=False)
    report = await app.extraction.extract(CHARACTER, dry_run=True)
    sent = "\n".join(m.content for m in report.prompts[0])
    assert all(f"line {i}." in sent for i in range(20)) and "not sent" not in sent
    assert not [e for e in app.activity.entries() if e.kind == "extract.budget"]


async def test_the_index_is_asked_only_when_the_memories_do_not_all_fit(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path / "ws", messages_per_call=10, existing_memories_budget=60)
    write_chat(ws, alternating(100))
    memory_file = ws.files_dir / f"{CHARACTER}-memories.md"
    memory_file.write_text(
        '<memory chat="c" date="2026-02-01 10:00">\n- Mira keeps a brass compass.\n</memory>\n'
    )
    embedder = WordHashEmbedder()
    app = App(ws, env={}, embedder=embedder, index_for_extraction=True)

    few = await app.extraction.extract(CHARACTER, dry_run=True)
    assert len(few.prompts) == 10 and embedder.calls == []  # one memory: nothing to rank
    assert all("Mira keeps a brass compass." in p[-1].content for p in few.prompts)

    memory_file.write_text(
        "".join(
            f'<memory chat="c" date="2026-02-{day:02d} 10:00">\n'
            f"- On day {day} the crew repainted deck {day} of the Kestrel.\n</memory>\n"
            for day in range(1, 29)
        )
    )
    many = await app.extraction.extract(CHARACTER, dry_run=True)
    assert len(many.prompts) == 10
    chunk_queries = [call for call in embedder.calls if any("says line" in t for t in call)]
    assert len(chunk_queries) == 10  # over the budget: each chunk asks for the related ones
