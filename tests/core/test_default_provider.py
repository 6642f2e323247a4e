"""With no provider chosen, the embedded local model stands in where it is installed."""

import pytest

from charmemory.core.model_settings import model_settings, resolve_settings
from charmemory.errors import ConfigError


def nothing_stored(_key: str) -> None:
    return None


def test_no_provider_chosen_resolves_to_the_default_provider() -> None:
    resolved = resolve_settings({}, {}, nothing_stored, default_provider="local")
    assert (resolved["provider"].value, resolved["provider"].source) == ("local", "default")
    settings = model_settings({}, {}, nothing_stored, default_provider="local")
    assert (settings.provider, settings.model, settings.base_url) == ("local", "", "")


@pytest.mark.parametrize(
    ("flags", "env", "stored"),
    [
        ({"provider": "openai"}, {}, {}),
        ({}, {"CHARMEMORY_PROVIDER": "openai"}, {}),
        ({}, {}, {"llm.provider": "openai"}),
    ],
)
def test_a_chosen_provider_wins_over_the_default(
    flags: dict, env: dict, stored: dict[str, str]
) -> None:
    settings = model_settings(
        {**flags, "model": "gpt-4o-mini"}, env, stored.get, default_provider="local"
    )
    assert settings.provider == "openai"


def test_without_a_default_the_error_names_both_ways_out() -> None:
    with pytest.raises(ConfigError) as raised:
        model_settings({}, {}, nothing_stored)
    message = str(raised.value)
    assert "charmemory config set provider NAME" in message
    assert "charmemory local-models install" in message
