"""Settings through the service: scopes, precedence, and refusals people understand."""

from collections.abc import Iterator
from pathlib import Path

import pytest

from charmemory.adapters.settings_store import SettingsStore
from charmemory.adapters.workspace import Workspace
from charmemory.core.settings.registry import in_group
from charmemory.errors import ConfigError, NotFoundError
from charmemory.services.settings import SettingsService
from tests.support.extraction_fixtures import CHARACTER, make_app, make_workspace


@pytest.fixture
def workspace(tmp_path: Path) -> Iterator[Workspace]:
    ws = make_workspace(tmp_path / "ws")
    yield ws
    ws.close()


@pytest.fixture
def settings(workspace: Workspace) -> SettingsService:
    return make_app(workspace).settings


def test_a_character_value_wins_over_the_workspace_value(settings: SettingsService) -> None:
    settings.set("extraction.interval", "30")
    settings.set("extraction.interval", "50", character=CHARACTER.lower())
    assert settings.extraction(CHARACTER).interval == 50
    assert settings.extraction(None).interval == 30
    settings.unset("extraction.interval", character=CHARACTER)
    assert settings.extraction(CHARACTER).interval == 30
    settings.unset("extraction.interval")
    assert settings.extraction(CHARACTER).interval == 20


def test_values_of_several_settings_are_each_setting_s_value(settings: SettingsService) -> None:
    settings.set("world_info.scan_depth", "4")
    settings.set("world_info.budget_percent", "40", character=CHARACTER)
    wanted = in_group("world_info")

    for character in (CHARACTER, None):
        assert settings.values(wanted, character) == {
            s.name: settings.value(s.name, character) for s in wanted
        }
    assert settings.values(wanted, CHARACTER)["world_info.budget_percent"] == 40


def test_show_says_where_each_value_comes_from(settings: SettingsService) -> None:
    settings.set("retrieval.top_k", "8")
    settings.set("retrieval.depth", "2", character=CHARACTER)
    rows = {row.setting.name: row for row in settings.show("retrieval", character=CHARACTER)}
    assert (rows["retrieval.top_k"].value, rows["retrieval.top_k"].origin) == (8, "workspace")
    assert (rows["retrieval.depth"].value, rows["retrieval.depth"].origin) == (2, "character")
    assert rows["retrieval.min_cosine"].origin == "default"
    assert {row.setting.group for row in settings.show()} >= {
        "extraction",
        "retrieval",
        "model",
        "consolidation",
        "world_info",
        "prompt",
    }


def test_per_provider_settings_go_to_the_provider_in_force_or_the_one_named(
    workspace: Workspace, settings: SettingsService
) -> None:
    no_default = SettingsService(SettingsStore(workspace.db), make_app(workspace).library, {})
    with pytest.raises(ConfigError, match="add --provider NAME"):
        no_default.set("model.model", "x")
    settings.set("model.provider", "openrouter")
    assert settings.set("model.extra_params", '{"provider": {"sort": "price"}}').scope == (
        "provider openrouter"
    )
    assert settings.set("model.model", "m", provider="Groq").scope == "provider groq"
    assert settings.set("model.max_retries", "5").scope == "the workspace"
    stored = SettingsStore(workspace.db)
    assert stored.get("model.extra_params", scope="provider:openrouter") == {
        "provider": {"sort": "price"}
    }
    assert stored.get("model.model", scope="provider:groq") == "m"
    assert settings.model({"provider": "groq"}, require_model=True).model == "m"
    settings.unset("model.model", provider="groq")
    assert stored.get("model.model", scope="provider:groq") is None


def test_scopes_a_setting_does_not_have_are_refused(settings: SettingsService) -> None:
    with pytest.raises(ConfigError, match="only be set per character"):
        settings.set("extraction.file_name_override", "notes.md")
    with pytest.raises(ConfigError, match="whole workspace, not per character"):
        settings.set("consolidation.context_tokens", "4000", character=CHARACTER)
    with pytest.raises(ConfigError, match="not kept per provider"):
        settings.set("extraction.interval", "30", provider="openai")
    with pytest.raises(NotFoundError, match="unknown character 'Nobody'"):
        settings.set("extraction.interval", "30", character="Nobody")


def test_a_refused_value_changes_nothing(workspace: Workspace, settings: SettingsService) -> None:
    with pytest.raises(ConfigError, match="between 3 and 100"):
        settings.set("extraction.interval", "101")
    assert SettingsStore(workspace.db).all() == {}


def test_the_default_provider_is_looked_for_once_and_only_for_a_model_setting(
    workspace: Workspace,
) -> None:
    looked: list[str] = []

    def installed() -> str:
        looked.append("openai")
        return "openai"

    library = make_app(workspace).library
    service = SettingsService(SettingsStore(workspace.db), library, {}, default_provider=installed)
    assert service.extraction(CHARACTER).interval == 20
    assert service.retrieval(CHARACTER).top_k > 0
    assert looked == []

    assert service.model_in_force()["provider"].value == "openai"
    assert service.model(require_model=False).provider == "openai"
    assert looked == ["openai"]
