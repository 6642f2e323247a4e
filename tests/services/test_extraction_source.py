"""`extraction.source`: the chat's own model, a dedicated one, or the local one extracts."""

from pathlib import Path

import pytest

from charmemory.adapters.model_install import MODELS_DIR_ENV
from charmemory.adapters.workspace import Workspace
from charmemory.composition import App
from charmemory.errors import CharMemoryError, ConfigError
from tests.services.test_chat import Clock, card_with
from tests.support.extraction_fixtures import CHARACTER, make_workspace, memory_block
from tests.support.scripted_llm import (
    RecordedRequest,
    ScriptedLLMServer,
    Step,
    openai_completion,
    openai_stream_events,
)


def role_play(request: RecordedRequest) -> Step:
    if request.json.get("stream"):
        return Step(events=openai_stream_events(["Aye."]))
    return Step(json=openai_completion(memory_block("Alex fears heights.")))


@pytest.fixture
def app(tmp_path: Path, llm_server: ScriptedLLMServer) -> App:
    """Chats with `chat-model` on a custom server; Ollama's preset points at the same
    server, so the model named in each request says which connection made it."""
    ws: Workspace = make_workspace(tmp_path / "ws", interval=3, cooldown_minutes=0)
    card_with(ws)
    app = App(ws, env={}, clock=Clock(), index_for_extraction=False)
    app.settings.set("model.provider", "custom")
    app.settings.set("model.base_url", llm_server.base_url, provider="custom")
    app.settings.set("model.model", "chat-model", provider="custom")
    app.settings.set("model.base_url", llm_server.base_url, provider="ollama")
    app.settings.set("model.max_retries", "0")
    llm_server.respond_always(role_play)
    return app


async def talk_until_extraction(app: App) -> str:
    """Two turns: with the greeting, the second reply is the third character message."""
    await app.chat.send(CHARACTER, "Hello.")
    return (await app.chat.send(CHARACTER, "I hate heights.")).extraction


def models_asked(server: ScriptedLLMServer) -> list[tuple[bool, str]]:
    """(streamed, model) of each request: the chat's turns stream, extraction does not."""
    return [(bool(r.json.get("stream")), r.json["model"]) for r in server.requests]


async def test_main_extracts_with_the_chats_own_model(
    app: App, llm_server: ScriptedLLMServer
) -> None:
    assert app.settings.extraction(CHARACTER).source == "main"  # the default
    assert await talk_until_extraction(app) == "started"
    assert await app.chat.extractions_finished() == []
    assert models_asked(llm_server) == [(True, "chat-model")] * 2 + [(False, "chat-model")]


async def test_dedicated_extracts_with_its_own_provider_and_model(
    app: App, llm_server: ScriptedLLMServer
) -> None:
    app.settings.set("extraction.source", "dedicated")
    app.settings.set("extraction.dedicated_provider", "ollama")
    app.settings.set("extraction.dedicated_model", "extract-model")

    assert await talk_until_extraction(app) == "started"
    assert await app.chat.extractions_finished() == []
    # The chat keeps its model; only extraction changes connection.
    assert models_asked(llm_server) == [(True, "chat-model")] * 2 + [(False, "extract-model")]
    memories = (app.workspace.files_dir / f"{CHARACTER}-memories.md").read_text(encoding="utf-8")
    assert "- Alex fears heights." in memories


async def test_dedicated_without_a_provider_is_explained(
    app: App, llm_server: ScriptedLLMServer
) -> None:
    app.settings.set("extraction.source", "dedicated")
    await app.chat.send(CHARACTER, "Hello.")
    with pytest.raises(ConfigError, match=r"no extraction\.dedicated_provider is set"):
        await app.extraction.extract(CHARACTER)
    assert models_asked(llm_server) == [(True, "chat-model")]


async def test_local_extracts_with_the_embedded_model(
    app: App, llm_server: ScriptedLLMServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # With no local model installed the choice shows in the error, and nothing is sent.
    monkeypatch.setenv(MODELS_DIR_ENV, str(tmp_path / "no-models"))
    app.settings.set("extraction.source", "local")
    assert await talk_until_extraction(app) == "started"
    [failure] = await app.chat.extractions_finished()
    assert "charmemory local-models install" in failure
    assert models_asked(llm_server) == [(True, "chat-model")] * 2
    with pytest.raises(CharMemoryError, match="local-models install"):
        await app.extraction.extract(CHARACTER)
