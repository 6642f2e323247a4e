from pathlib import Path

import pytest

from charmemory.adapters.workspace import Workspace
from charmemory.composition import App
from charmemory.core.consolidation_answer import UnusableConsolidationError
from charmemory.core.consolidation_prompt import DEFAULT_PROMPTS
from charmemory.errors import ConflictError, NotFoundError
from charmemory.formats.memory_file import (
    MemoryBlock,
    parse_memory_file,
)
from charmemory.ports import ChatModel, Completion, ConsolidatedMemories
from charmemory.services.consolidation import ConsolidationService
from tests.support.extraction_fixtures import CHARACTER, make_app, make_workspace
from tests.support.fake_chat_model import ChatRequest, FakeChatModel, ScriptedChatModel

CHAT_A = "Mira - 2026-02-15@10h00m00s123ms"
CHAT_B = "Mira - 2026-03-01@09h00m00s000ms"
MEMORIES = (
    "# Mira's memories\n\n"
    f'<memory chat="{CHAT_A}" date="2026-02-15 10:42">\n'
    "- Mira owns a brass compass.\n- Alex is from Cinderfall.\n</memory>\n\n"
    '<memory chat="pinned" date="2026-02-20 08:00">\n- Mira captains the Kestrel.\n</memory>\n\n'
    f'<memory chat="{CHAT_B}" date="2026-03-01 09:00">\n'
    "- Mira owns a brass compass.\n- Mira fears deep water.\n</memory>\n"
)


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    return make_workspace(tmp_path / "ws")


def write_memories(ws: Workspace, text: str = MEMORIES) -> Path:
    path = ws.files_dir / f"{CHARACTER}-memories.md"
    path.write_text(text, encoding="utf-8")
    return path


def consolidation(ws: Workspace, model: ChatModel) -> ConsolidationService:
    return make_app(ws, model).consolidation


def app_of(ws: Workspace) -> App:
    return make_app(ws)


def sent_blocks(request: ChatRequest) -> tuple[MemoryBlock, ...]:
    """The memory blocks one consolidation call sent."""
    return blocks_in(request.messages[-1].content)


def blocks_in(prompt: str) -> tuple[MemoryBlock, ...]:
    """The memory blocks of a consolidation prompt (the format example has no id)."""
    blocks = parse_memory_file(prompt).blocks
    return tuple(block for block in blocks if block.attribute("id") is not None)


def without_repeats(prompt: str) -> str:
    """The answer of a model that keeps every block and drops memories an earlier block
    already holds."""
    seen: set[str] = set()
    answer = []
    for block in blocks_in(prompt):
        fresh = [b.text for b in block.bullets if b.text not in seen]
        seen.update(fresh)
        if fresh:
            bullets = "".join(f"- {text}\n" for text in fresh)
            answer.append(f'<memory sources="{block.attribute("id")}">\n{bullets}</memory>')
    return "\n".join(answer)


def drop_repeats(request: ChatRequest) -> Completion:
    return Completion(without_repeats(request.messages[-1].content), finish_reason="stop")


async def test_preview_writes_nothing_and_apply_writes_the_merge_with_its_date_range(
    ws: Workspace, chat_model: ScriptedChatModel
) -> None:
    path = write_memories(ws)
    chat_model.reply_text(
        '<memory sources="1,3">\n- Mira owns a brass compass.\n- Alex is from Cinderfall.\n'
        '- Mira fears deep water.\n</memory>\n<memory sources="2">\n'
        "- Mira captains the Kestrel.\n</memory>"
    )
    service = consolidation(ws, chat_model)

    preview = await service.preview(CHARACTER, strategy="balanced")

    assert path.read_text(encoding="utf-8") == MEMORIES
    assert preview.diff.removed == ("Mira owns a brass compass.",)
    assert [m.sources for m in preview.diff.merged] == [(0, 2)]
    assert service.get_preview(preview.id).result == preview.result  # stored durably
    applied = await service.apply(preview.id)
    assert path.read_text(encoding="utf-8") == (
        "# Mira's memories\n\n"
        '<memory chat="consolidated" date="2026-02-15 10:42 – 2026-03-01 09:00">\n'
        "- Mira owns a brass compass.\n- Alex is from Cinderfall.\n- Mira fears deep water.\n"
        "</memory>\n\n"
        '<memory chat="pinned" date="2026-02-20 08:00">\n- Mira captains the Kestrel.\n</memory>\n'
    )
    history = app_of(ws).history.history(CHARACTER).versions
    assert [v.cause for v in history] == ["found", "consolidation"]
    assert applied.version == 2 and applied.preview.applied_at is not None
    with pytest.raises(ConflictError, match="already applied"):
        await service.apply(preview.id)


async def test_each_call_asks_for_blocks_that_name_only_the_blocks_it_sent(
    ws: Workspace,
) -> None:
    write_memories(ws)

    def keep_all(request: ChatRequest) -> Completion:
        assert isinstance(request.answer_format, ConsolidatedMemories)
        ids = ",".join(str(n) for n in range(1, request.answer_format.blocks_sent + 1))
        return Completion(f'<memory sources="{ids}">\n- Mira owns a brass compass.\n</memory>')

    model = FakeChatModel(keep_all)

    await consolidation(ws, model).preview(CHARACTER)

    assert [request.answer_format for request in model.requests] == [ConsolidatedMemories(3)]


async def test_apply_is_refused_when_the_file_changed_after_the_preview(
    ws: Workspace, chat_model: ScriptedChatModel
) -> None:
    path = write_memories(ws)
    chat_model.reply_with(drop_repeats)
    service = consolidation(ws, chat_model)
    preview = await service.preview(CHARACTER)
    edited = MEMORIES.replace("Cinderfall", "Port Lune")
    path.write_text(edited, encoding="utf-8")

    with pytest.raises(ConflictError, match="changed since preview"):
        await service.apply(preview.id)

    assert path.read_text(encoding="utf-8") == edited
    assert service.get_preview(preview.id).applied_at is None


async def test_blocks_are_chosen_by_chat_id_and_by_index_and_the_rest_stays(
    ws: Workspace, chat_model: ScriptedChatModel
) -> None:
    path = write_memories(ws)
    chat_model.reply_text(
        '<memory sources="1,2">\n- Mira owns a brass compass.\n- Mira captains the Kestrel.\n'
        "</memory>"
    )
    service = consolidation(ws, chat_model)
    preview = await service.preview(CHARACTER, chats=[CHAT_B], blocks=[1])
    assert [b.chat for b in sent_blocks(chat_model.requests[0])] == ["pinned", CHAT_B]
    await service.apply(preview.id, character_name=CHARACTER)
    blocks = parse_memory_file(path.read_text(encoding="utf-8")).blocks
    assert [(b.chat, b.date) for b in blocks] == [
        (CHAT_A, "2026-02-15 10:42"),
        ("consolidated", "2026-02-20 08:00 – 2026-03-01 09:00"),
    ]
    assert [b.text for b in blocks[1].bullets] == [
        "Mira owns a brass compass.",
        "Mira captains the Kestrel.",
    ]


def big_file(blocks: int, per_block: int) -> str:
    parts = []
    for number in range(blocks):
        bullets = "".join(
            f"- Memory {number}.{n}: Mira remembered a detail of voyage {number} that "
            f"mattered to her crew.\n"
            for n in range(per_block)
        )
        repeat = "- Mira owns a brass compass.\n"
        parts.append(
            f'<memory chat="{CHAT_A}" date="2026-02-{1 + number % 28:02d} 10:00">\n'
            f"{repeat}{bullets}</memory>\n"
        )
    return "\n".join(parts)


async def test_a_file_larger_than_the_context_is_consolidated_in_calls_that_each_fit(
    ws: Workspace, chat_model: ScriptedChatModel
) -> None:
    text = big_file(blocks=24, per_block=4)
    write_memories(ws, text)
    for _ in range(40):
        chat_model.reply_with(drop_repeats)
    budget = 1500
    assert len(text) / 4 > budget

    preview = await consolidation(ws, chat_model).preview(CHARACTER, context_tokens=budget)

    requests = chat_model.requests
    assert preview.calls == len(requests) >= 4
    for request in requests:
        prompt_chars = sum(len(m.content) for m in request.messages)
        assert prompt_chars / 4 + request.max_tokens <= budget
    sent = [b.text for r in requests for block in sent_blocks(r) for b in block.bullets]
    original = [b.text for block in parse_memory_file(text).blocks for b in block.bullets]
    assert sorted(sent) == sorted(original)  # each memory sent once, no final all-in-one call
    assert preview.diff.bullets_after < preview.diff.bullets_before


@pytest.mark.parametrize(
    ("answer", "finish_reason"),
    [
        ('<memory sources="1">\n- Mira owns', "length"),
        ('<memory sources="1,2,3">\n- Mira owns a brass compass.\n', "stop"),
        ("Sorry, I can't help with that.", "stop"),
        ('<memory sources="9">\n- Mira owns a brass compass.\n</memory>', "stop"),
    ],
)
async def test_an_unusable_answer_rejects_the_consolidation_and_touches_nothing(
    ws: Workspace, chat_model: ScriptedChatModel, answer: str, finish_reason: str
) -> None:
    path = write_memories(ws)
    chat_model.reply_text(answer, finish_reason=finish_reason)
    service = consolidation(ws, chat_model)
    with pytest.raises(UnusableConsolidationError, match="nothing was changed"):
        await service.preview(CHARACTER)
    assert path.read_text(encoding="utf-8") == MEMORIES
    with pytest.raises(NotFoundError):
        service.get_preview(1)
    kinds = [entry.kind for entry in app_of(ws).activity.entries(character=CHARACTER)]
    assert "consolidate.rejected" in kinds


async def test_a_bad_answer_in_a_later_chunk_rejects_the_whole_consolidation(
    ws: Workspace, chat_model: ScriptedChatModel
) -> None:
    path = write_memories(ws, big_file(blocks=12, per_block=4))
    before = path.read_bytes()
    chat_model.reply_with(drop_repeats)
    chat_model.reply_text('<memory sources="1">\n- half an answer', finish_reason="length")
    with pytest.raises(UnusableConsolidationError, match="call 2 of"):
        await consolidation(ws, chat_model).preview(CHARACTER, context_tokens=1500)
    assert path.read_bytes() == before


async def test_a_conservative_pass_that_drops_most_memories_warns_in_the_preview(
    ws: Workspace, chat_model: ScriptedChatModel
) -> None:
    write_memories(ws)
    chat_model.reply_text('<memory sources="1,2,3">\n- Mira owns a brass compass.\n</memory>')
    preview = await consolidation(ws, chat_model).preview(CHARACTER)
    assert len(preview.warnings) == 1 and "80%" in preview.warnings[0]


async def test_strategy_prompts_are_editable_per_workspace_and_restorable(
    ws: Workspace, chat_model: ScriptedChatModel
) -> None:
    write_memories(ws)
    service = consolidation(ws, chat_model)
    prompts = app_of(ws).prompts
    prompts.replace("consolidation", "Squeeze {{char}}'s memories hard.", "aggressive")
    assert not prompts.is_default("consolidation", "aggressive")
    assert prompts.is_default("consolidation", "balanced")
    chat_model.reply_with(drop_repeats)
    await service.preview(CHARACTER, strategy="aggressive")
    assert chat_model.requests[0].messages[0].content == "Squeeze Mira's memories hard."

    prompts.reset("consolidation", "aggressive")
    assert prompts.text("consolidation", "aggressive") == DEFAULT_PROMPTS["aggressive"]
    assert prompts.is_default("consolidation", "aggressive")


async def test_a_plain_answer_replaces_the_blocks_sent_and_notes_typed_in_them_stay(
    ws: Workspace,
) -> None:
    noted = MEMORIES.replace(
        "- Mira captains the Kestrel.\n",
        "Note to self: ask who owned it.\n- Mira captains the Kestrel.\n",
    )
    path = write_memories(ws, noted)
    plain = (
        "<memory>\n- Mira owns a brass compass.\n- Alex is from Cinderfall.\n"
        "- Mira fears deep water.\n</memory>\n<memory>\n- Mira captains the Kestrel.\n</memory>"
    )
    model = FakeChatModel(lambda request: Completion(plain))
    service = consolidation(ws, model)

    preview = await service.preview(CHARACTER)

    assert preview.diff.replaced == (0, 1, 2)
    assert preview.diff.notes == ("Note to self: ask who owned it.",)
    # Notes are the person's: never sent for the model to rewrite.
    assert "Note to self" not in "".join(m.content for m in model.requests[0].messages)
    await service.apply(preview.id)
    assert path.read_text(encoding="utf-8") == (
        "# Mira's memories\n\n"
        '<memory chat="consolidated" date="2026-02-15 10:42 – 2026-03-01 09:00">\n'
        "- Mira owns a brass compass.\n- Alex is from Cinderfall.\n- Mira fears deep water.\n"
        "</memory>\n\n"
        '<memory chat="pinned" date="2026-02-20 08:00">\n'
        "Note to self: ask who owned it.\n- Mira captains the Kestrel.\n</memory>\n"
    )
