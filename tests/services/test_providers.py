from collections.abc import Iterator
from pathlib import Path

import pytest

from charmemory.adapters.activity_log import ActivityLog
from charmemory.adapters.llm.factory import build_chat_model
from charmemory.adapters.llm.retry import RetryPolicy
from charmemory.adapters.secrets import SECRETS_FILE_NAME, ApiKeys, SecretsFile
from charmemory.adapters.settings_store import SettingsStore
from charmemory.adapters.workspace import Workspace
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
    keys = ApiKeys(SecretsFile(ws.state_dir / SECRETS_FILE_NAME, ws.locks), env or {})
    return ProviderService(
        settings=SettingsStore(ws.db),
        keys=keys,
        activity=ActivityLog(ws.db, redact=keys.redact),
        build_model=lambda s, k: build_chat_model(s, k, retry=RetryPolicy(max_retries=0)),
        env=env or {},
    )


@pytest.fixture
def service(workspace: Workspace, llm_server: ScriptedLLMServer) -> ProviderService:
    service = service_for(workspace)
    service.set_setting("provider", "openrouter")
    service.set_setting("base_url", llm_server.base_url)
    service.set_setting("model", "stored/model")
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
    service.set_setting("base_url", llm_server.root_url + "/api/v1", provider="nanogpt")
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


def test_per_provider_settings_go_to_the_chosen_provider(
    workspace: Workspace, service: ProviderService
) -> None:
    assert service.set_setting("extra_params", '{"provider": {"sort": "price"}}') == (
        "llm.openrouter.extra_params"
    )
    assert service.set_setting("model", "m", provider="groq") == "llm.groq.model"
    assert service.set_setting("max_tokens", "3000") == "llm.max_tokens"
    stored = SettingsStore(workspace.db)
    assert stored.get("llm.openrouter.extra_params") == {"provider": {"sort": "price"}}
    assert stored.get("llm.max_tokens") == 3000
    with pytest.raises(ConfigError, match="must be a JSON object"):
        service.set_setting("extra_params", '"thinking off"')
    service.unset_setting("model", provider="groq")
    assert stored.get("llm.groq.model") is None


def test_per_provider_setting_needs_a_provider(workspace: Workspace) -> None:
    with pytest.raises(ConfigError, match="add --provider NAME"):
        service_for(workspace).set_setting("model", "x")


def test_presets_say_where_keys_come_from(workspace: Workspace, service: ProviderService) -> None:
    rows = {row.name: row for row in service.presets()}
    assert rows["openrouter"].key == "secrets file" and rows["openrouter"].current
    assert rows["groq"].key == "missing" and not rows["groq"].current
    assert rows["ollama"].key == "not needed"
    env_rows = {r.name: r for r in service_for(workspace, {"CHARMEMORY_API_KEY": "k"}).presets()}
    assert env_rows["groq"].key == "env"
