import json
import logging
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from charmemory.adapters.llm import embedded
from charmemory.adapters.llm.embedded import (
    EmbeddedModel,
    EmbeddedOptions,
    PromptTooLongError,
    build,
)
from charmemory.adapters.llm.embedded_grammar import consolidation_grammar, memory_grammar
from charmemory.adapters.llm.factory import build_chat_model
from charmemory.adapters.model_install import (
    DEFAULT_LOCAL_LLM,
    InstalledModel,
    ModelNotInstalledError,
    load_installed,
)
from charmemory.composition import App
from charmemory.core.consolidation_answer import read_consolidation
from charmemory.core.consolidation_plan import SourceBlock
from charmemory.core.consolidation_prompt import (
    CONSERVATIVE,
    DEFAULT_PROMPTS,
    answer_allowance,
    consolidation_messages,
)
from charmemory.core.model_settings import ModelSettings
from charmemory.core.providers import EMBEDDED
from charmemory.errors import ConfigError, NotFoundError
from charmemory.formats.memory_file import (
    parse_memory_file,
)
from charmemory.ports import (
    FREE_TEXT,
    ChatMessage,
    ConsolidatedMemories,
    JsonAnswer,
    NewMemories,
)
from tests.adapters.llm.test_embedded_prompt import REWORDED, rendered
from tests.support.extraction_fixtures import CHARACTER, make_workspace, message, write_chat

LOCAL = ModelSettings(EMBEDDED, "", "")


def test_options_come_from_the_extra_parameters() -> None:
    options = EmbeddedOptions.from_params(
        {"threads": 3, "repeat_penalty": 1.2, "extraction_prompt": "as-sent"}
    )
    assert (options.threads, options.context_size, options.repeat_penalty) == (3, 8192, 1.2)
    assert options.extraction_prompt == "as-sent"
    assert EmbeddedOptions.from_params({}).threads >= 1


@pytest.mark.parametrize(
    ("params", "message_part"),
    [
        ({"thread": 2}, "no option 'thread'"),
        ({"threads": 0}, "threads for the local model must be a whole number 1..256"),
        ({"threads": "4"}, "threads for the local model"),
        ({"context_size": 100}, "context_size"),
        ({"repeat_penalty": 0.5}, "repeat_penalty for the local model must be a number 1..2"),
        ({"extraction_prompt": "long"}, "compact, as-sent"),
    ],
)
def test_bad_options_are_explained(params: dict, message_part: str) -> None:
    with pytest.raises(ConfigError, match=message_part):
        EmbeddedOptions.from_params(params)


def test_a_missing_runtime_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(embedded, "RUNTIME_MODULE", "llama_cpp_not_installed_here")
    with pytest.raises(ModelNotInstalledError, match=r"llama-cpp-python.*make setup"):
        build_chat_model(LOCAL, None)
    assert not embedded.local_llm_ready()


def test_a_missing_model_says_how_to_install_it(tmp_path: Path) -> None:
    if not embedded.runtime_installed():
        pytest.skip("llama-cpp-python is not installed")
    with pytest.raises(
        ModelNotInstalledError, match=f"charmemory local-models install {DEFAULT_LOCAL_LLM.name}"
    ):
        build(LOCAL, models_dir=tmp_path)
    assert not embedded.local_llm_ready(tmp_path)


def test_an_unknown_local_model_lists_the_known_ones() -> None:
    with pytest.raises(NotFoundError, match=DEFAULT_LOCAL_LLM.name):
        build(ModelSettings(EMBEDDED, "gpt-9", ""))


# ---- what the runtime is asked to do --------------------------------------------------


class StandInRuntime:
    """Takes llama-cpp-python's place: records what each generation is given and reads a
    grammar back as its GBNF text, so no model has to be loaded."""

    ANSWER = "<memory>\n- Rowan went to the salt kilns.\n</memory>"

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []
        self.LlamaGrammar = self  # LlamaGrammar.from_string(...)

    def Llama(self, **_options: Any) -> "StandInRuntime":  # noqa: N802 - the runtime's name
        return self

    def from_string(self, grammar: str, *, verbose: bool) -> str:
        return grammar

    def create_chat_completion(self, messages: list[dict[str, str]], **options: Any) -> Any:
        self.calls.append({"messages": messages, **options})
        if options["stream"]:
            return iter(
                [{"choices": [{"delta": {"content": self.ANSWER}, "finish_reason": "stop"}]}]
            )
        choice = {"message": {"content": self.ANSWER}, "finish_reason": "stop"}
        return {"choices": [choice], "usage": {}}


@pytest.fixture
def runtime(monkeypatch: pytest.MonkeyPatch) -> StandInRuntime:
    stand_in = StandInRuntime()
    monkeypatch.setitem(sys.modules, "stand_in_llama_cpp", stand_in)
    monkeypatch.setattr(embedded, "RUNTIME_MODULE", "stand_in_llama_cpp")
    return stand_in


def unloaded(tmp_path: Path, **options: Any) -> EmbeddedModel:
    installed = InstalledModel(DEFAULT_LOCAL_LLM, tmp_path)
    return EmbeddedModel(installed, EmbeddedOptions(threads=1, **options))


def as_sent(messages: list[ChatMessage]) -> list[dict[str, str]]:
    return [{"role": m.role, "content": m.content} for m in messages]


async def test_a_reworded_extraction_prompt_still_gets_the_memory_grammar(
    runtime: StandInRuntime, tmp_path: Path
) -> None:
    reworded = rendered(template=REWORDED)
    assert not any("NO_NEW_MEMORIES" in m.content or "at most" in m.content for m in reworded)

    await unloaded(tmp_path).complete(
        reworded, max_tokens=99, temperature=0, answer_format=NewMemories(5, "Mira", "Alex")
    )

    call = runtime.calls[0]
    assert call["grammar"] == memory_grammar(5)
    final = call["messages"][-1]["content"]  # the short prompt, names from the caller
    assert final.startswith("The character is Mira. The user plays Alex.\n\n<character_card>")


async def test_free_text_is_never_held_to_a_grammar_whatever_the_prompt_says(
    runtime: StandInRuntime, tmp_path: Path
) -> None:
    default = rendered()  # names NO_NEW_MEMORIES and carries every extraction section
    model = unloaded(tmp_path)

    await model.complete(default, max_tokens=99, temperature=0)
    _ = [delta async for delta in model.stream(default, max_tokens=99, temperature=0)]
    await model.complete(default, max_tokens=99, temperature=0, answer_format=FREE_TEXT)

    for call in runtime.calls:
        assert call["grammar"] is None and call["messages"] == as_sent(default)


async def test_a_memory_copied_from_the_worked_example_never_reaches_the_caller(
    runtime: StandInRuntime, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    runtime.ANSWER = (
        "<memory>\n- Rowan went to the salt kilns.\n"
        "- Alex agreed to pay Mira two sacks of barley and to sweep her deck on Sundays.\n"
        "</memory>"
    )
    wanted = NewMemories(5, "Mira", "Alex")
    caplog.set_level(logging.INFO, logger="charmemory.llm")

    short = await unloaded(tmp_path).complete(
        rendered(), max_tokens=99, temperature=0, answer_format=wanted
    )
    as_is = await unloaded(tmp_path, extraction_prompt="as-sent").complete(
        rendered(), max_tokens=99, temperature=0, answer_format=wanted
    )

    assert short.text == "<memory>\n- Rowan went to the salt kilns.\n</memory>"
    assert as_is.text == runtime.ANSWER  # the caller's prompt shows no example to copy
    dropped = [r.getMessage() for r in caplog.records if r.name == "charmemory.llm"]
    assert len(dropped) == 1 and "two sacks of barley" in dropped[0]  # said in the log


async def test_as_sent_keeps_the_callers_prompt_and_still_holds_the_answer(
    runtime: StandInRuntime, tmp_path: Path
) -> None:
    default = rendered()

    await unloaded(tmp_path, extraction_prompt="as-sent").complete(
        default, max_tokens=99, temperature=0, answer_format=NewMemories(5, "Mira", "Alex")
    )

    assert runtime.calls[0]["messages"] == as_sent(default)
    assert runtime.calls[0]["grammar"] == memory_grammar(5)


async def test_a_stream_is_held_to_the_format_asked_for(
    runtime: StandInRuntime, tmp_path: Path
) -> None:
    request = [ChatMessage("user", "Consolidate these two blocks.")]
    model = unloaded(tmp_path)

    deltas = [
        delta
        async for delta in model.stream(
            request, max_tokens=99, temperature=0, answer_format=ConsolidatedMemories(2)
        )
    ]

    assert "".join(d.text for d in deltas) == StandInRuntime.ANSWER
    call = runtime.calls[0]
    assert call["stream"] and call["grammar"] == consolidation_grammar(2)
    assert call["messages"] == as_sent(request)


# ---- with the installed model -------------------------------------------------------


@pytest.fixture(scope="module")
def local_model() -> Iterator[EmbeddedModel]:
    yield build(LOCAL)


@pytest.mark.local_model
async def test_extraction_saves_well_formed_memories_about_the_chat(
    tmp_path: Path, local_model: EmbeddedModel
) -> None:
    ws = make_workspace(tmp_path / "ws")
    said = [
        "My little brother Rowan went to work the salt kilns on the Saltglass Isles last "
        "autumn. His letters stopped three months ago and I am scared for him.",
        "*Mira sets down her cup.* Then we fly to the Saltglass Isles as soon as this job is "
        "done, and we find Rowan. You have my word, Alex.",
        "Thank you, Mira. I will never forget this.",
        "*She nods.* We leave at dawn the day after the delivery.",
    ]
    write_chat(ws, [message(i, is_user=i % 2 == 0, text=text) for i, text in enumerate(said)])
    service = App(ws, env={}, chat_model=lambda: local_model).extraction

    report = await service.extract(CHARACTER)

    saved = [text for chunk in report.chunks for text in chunk.saved]
    assert saved, "the local model saved no memory"
    memory_file = parse_memory_file((ws.root / report.memory_file).read_text(encoding="utf-8"))
    bullets = [b.text for block in memory_file.blocks for b in block.bullets]
    assert bullets == saved
    for bullet in bullets:
        assert bullet.strip() == bullet and "\n" not in bullet and "<" not in bullet
        assert "NO_NEW_MEMORIES" not in bullet
    about_the_chat = ("rowan", "saltglass", "brother", "kiln")
    assert any(word in bullet.lower() for bullet in bullets for word in about_the_chat), bullets


@pytest.mark.local_model
async def test_a_json_schema_holds_the_answer_to_it(local_model: EmbeddedModel) -> None:
    schema = {
        "type": "object",
        "properties": {"city": {"type": "string"}, "country": {"type": "string"}},
        "required": ["city", "country"],
    }
    completion = await local_model.complete(
        [ChatMessage("user", "Name the capital of France and its country.")],
        max_tokens=60,
        temperature=0,
        answer_format=JsonAnswer("capital", schema),
    )
    answer = json.loads(completion.text)
    assert set(answer) == {"city", "country"}
    assert completion.model == DEFAULT_LOCAL_LLM.name and completion.usage.completion_tokens


@pytest.mark.local_model
async def test_consolidated_memories_come_back_in_blocks_that_name_their_sources(
    local_model: EmbeddedModel,
) -> None:
    chunk = [
        SourceBlock(0, "Mira - 2026-03-01", "2026-03-01", ("Alex's brother Rowan went missing.",)),
        SourceBlock(
            1,
            "Mira - 2026-03-04",
            "2026-03-04",
            ("Rowan, Alex's brother, is missing.", "Mira promised to find Rowan."),
        ),
        SourceBlock(
            2, "Mira - 2026-03-09", "2026-03-09", ("Mira owes the harbour guild 40 crowns.",)
        ),
    ]
    messages = [
        ChatMessage(role, content)  # type: ignore[arg-type]
        for role, content in consolidation_messages(DEFAULT_PROMPTS[CONSERVATIVE], "Mira", chunk)
    ]

    completion = await local_model.complete(
        messages,
        max_tokens=answer_allowance(chunk),
        temperature=0.2,
        answer_format=ConsolidatedMemories(len(chunk)),
    )

    proposed = read_consolidation(completion.text, chunk, finish_reason=completion.finish_reason)
    assert proposed, completion.text


@pytest.mark.local_model
async def test_streaming_gives_the_answer_piece_by_piece(local_model: EmbeddedModel) -> None:
    deltas = [
        delta
        async for delta in local_model.stream(
            [ChatMessage("user", "Count from one to five in words.")], max_tokens=24, temperature=0
        )
    ]
    assert len([d for d in deltas if d.text]) > 1
    assert deltas[-1].finish_reason in ("stop", "length")


@pytest.mark.local_model
async def test_a_prompt_longer_than_the_context_is_explained() -> None:
    small = EmbeddedModel(
        load_installed(DEFAULT_LOCAL_LLM), EmbeddedOptions(threads=1, context_size=512)
    )
    with pytest.raises(PromptTooLongError, match=r"context of 512 tokens.*messages_per_call"):
        await small.complete(
            [ChatMessage("user", "The harbour bell rang. " * 300)], max_tokens=8, temperature=0
        )


@pytest.mark.local_model
async def test_a_workspace_with_no_provider_chosen_uses_the_local_model(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path / "ws")
    providers = App(ws, env={}).providers

    assert providers.settings.model_in_force()["provider"].value == EMBEDDED
    model = providers.chat_model()
    assert isinstance(model, EmbeddedModel) and model.model == DEFAULT_LOCAL_LLM.name
    listed = {info.id: info.extra["installed"] for info in await model.list_models()}
    assert listed[DEFAULT_LOCAL_LLM.name] is True
