import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from charmemory.adapters.llm import embedded
from charmemory.adapters.llm.embedded import (
    EmbeddedModel,
    EmbeddedOptions,
    PromptTooLongError,
    build,
)
from charmemory.adapters.llm.factory import build_chat_model
from charmemory.adapters.model_install import (
    DEFAULT_LOCAL_LLM,
    ModelNotInstalledError,
    load_installed,
)
from charmemory.composition import App
from charmemory.core.model_settings import ModelSettings
from charmemory.core.providers import EMBEDDED
from charmemory.errors import ConfigError, NotFoundError
from charmemory.formats.memory_file import parse_memory_file
from charmemory.ports import ChatMessage
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
        json_schema=schema,
    )
    answer = json.loads(completion.text)
    assert set(answer) == {"city", "country"}
    assert completion.model == DEFAULT_LOCAL_LLM.name and completion.usage.completion_tokens


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
