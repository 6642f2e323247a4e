from collections.abc import Iterator
from pathlib import Path

import pytest

from charmemory.adapters.activity_log import ActivityLog
from charmemory.adapters.workspace import Workspace
from charmemory.composition import App
from charmemory.errors import ConfigError
from charmemory.services.providers import SENTINEL, ProviderService
from tests.support.scripted_llm import ScriptedLLMServer

KEY = "sk-service-test-0123456789"


@pytest.fixture
def workspace(tmp_path: Path) -> Iterator[Workspace]:
    ws = Workspace.create(tmp_path / "ws")
    yield ws
    ws.close()


def service_for(ws: Workspace, env: dict[str, str] | None = None) -> ProviderService:
    return App(ws, env=env or {}).providers


@pytest.fixture
def service(workspace: Workspace, llm_server: ScriptedLLMServer) -> ProviderService:
    service = service_for(workspace)
    service.settings.set("model.provider", "openrouter")
    service.settings.set("model.base_url", llm_server.base_url)
    service.settings.set("model.model", "stored/model")
    service.settings.set("model.max_retries", "0")
    service.store_key("openrouter", KEY)
    return service


async def test_chat_model_takes_overrides_then_environment_then_settings(
    workspace: Workspace, service: ProviderService, llm_server: ScriptedLLMServer
) -> None:
    assert service.chat_model().model == "stored/model"
    from_env = service_for(workspace, {"CHARMEMORY_MODEL": "env/model"})
    assert from_env.chat_model().model == "env/model"
    assert from_env.chat_model({"model": "flag/model"}).model == "flag/model"

    llm_server.reply_text("ok")
    await service.chat_model({"temperature": 0.1}).complete([], max_tokens=5, temperature=0.1)
    assert llm_server.requests[0].headers["authorization"] == f"Bearer {KEY}"


async def test_test_model_ok_warning_and_error(
    workspace: Workspace, service: ProviderService, llm_server: ScriptedLLMServer
) -> None:
    llm_server.reply_text(f"{SENTINEL}", reasoning="easy", usage=(20, 2))
    llm_server.reply_text("Sure! Here you go: hello")
    llm_server.reply(401, json={"error": {"message": "bad key"}})

    ok, warning, error = [await service.test_model() for _ in range(3)]

    assert (ok.status, ok.reasoning_chars, ok.usage.prompt_tokens) == ("ok", 4, 20)
    assert warning.status == "warning" and "did not follow the instruction" in warning.message
    assert warning.reply == "Sure! Here you go: hello"
    assert error.status == "error" and "the API key was refused" in error.message
    sent = llm_server.requests[0].json["messages"]
    assert SENTINEL in sent[-1]["content"]
    levels = [
        (e.kind, e.level) for e in ActivityLog(workspace.db).entries() if e.kind == "llm.test"
    ]
    assert levels == [("llm.test", "info"), ("llm.test", "warning"), ("llm.test", "error")]


async def test_nanogpt_models_filtered_and_grouped(
    service: ProviderService, llm_server: ScriptedLLMServer
) -> None:
    service.settings.set("model.base_url", llm_server.root_url + "/api/v1", provider="nanogpt")
    service.store_key("nanogpt", KEY)
    llm_server.reply_models(
        [
            {"id": "thedrummer/cydonia-24b", "owned_by": "thedrummer"},
            {"id": "deepseek/deepseek-r1", "owned_by": "deepseek"},
            {"id": "deepseek/deepseek-v3", "owned_by": "deepseek"},
        ],
        path="/api/subscription/v1/models",
    )

    listing = await service.list_models(
        {"provider": "nanogpt"}, filters=["subscription", "open-source"]
    )

    assert listing.groups is not None
    assert [(name, [m.id for m in models]) for name, models in listing.groups] == [
        ("deepseek", ["deepseek/deepseek-r1", "deepseek/deepseek-v3"]),
        ("thedrummer", ["thedrummer/cydonia-24b"]),
    ]


async def test_filters_belong_to_nanogpt(service: ProviderService) -> None:
    with pytest.raises(ConfigError, match="none for this provider"):
        await service.list_models(filters=["roleplay"])


def test_presets_say_where_keys_come_from(workspace: Workspace, service: ProviderService) -> None:
    rows = {row.name: row for row in service.presets()}
    assert rows["openrouter"].key == "secrets file" and rows["openrouter"].current
    assert rows["groq"].key == "missing" and not rows["groq"].current
    assert rows["ollama"].key == "not needed"
    env_rows = {r.name: r for r in service_for(workspace, {"CHARMEMORY_API_KEY": "k"}).presets()}
    assert env_rows["groq"].key == "env"


def test_presets_show_the_configured_base_url(
    workspace: Workspace, service: ProviderService, llm_server: ScriptedLLMServer
) -> None:
    rows = {row.name: row for row in service.presets()}
    assert rows["openrouter"].base_url == llm_server.base_url
    assert rows["groq"].base_url == "https://api.groq.com/openai/v1"


async def test_test_model_has_the_response_budget_extraction_has(
    service: ProviderService, llm_server: ScriptedLLMServer
) -> None:
    service.settings.set("extraction.max_response_tokens", "700")
    service.settings.set("model.max_tokens", "50")  # a chat reply's, not the test's
    llm_server.reply_text(SENTINEL)
    llm_server.reply_text("", reasoning="Let me think " * 50, finish_reason="length")
    llm_server.reply_text("", reasoning="Let me think " * 50, finish_reason="length")

    assert (await service.test_model()).status == "ok"
    spent = await service.test_model()
    own_budget = await service.test_model(max_tokens=300)

    assert [r.json["max_tokens"] for r in llm_server.requests] == [700, 700, 300]
    assert "whole budget of 700 tokens" in spent.message
    assert (
        "extraction.max_response_tokens is 700: raise it, e.g. "
        "`charmemory settings set extraction.max_response_tokens 2000`" in spent.message
    )
    assert "whole budget of 300 tokens" in own_budget.message
    assert "extraction.max_response_tokens" not in own_budget.message
    # model.max_tokens is a chat reply's length: it never sizes the test.
    rows = {row.setting.name: row for row in service.settings.show("model")}
    assert "chat reply" in rows["model.max_tokens"].setting.help
