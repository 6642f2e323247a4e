"""With no provider chosen, the embedded local model stands in where it is installed."""

import pytest

from charmemory.core.model_settings import ModelValues, model_settings, resolve_settings
from charmemory.errors import ConfigError


def test_no_provider_chosen_resolves_to_the_default_provider() -> None:
    resolved = resolve_settings(ModelValues(), default_provider="local")
    assert (resolved["provider"].value, resolved["provider"].origin) == ("local", "default")
    settings = model_settings(ModelValues(), default_provider="local")
    assert (settings.provider, settings.model, settings.base_url) == ("local", "", "")


@pytest.mark.parametrize(
    ("flags", "env", "stored"),
    [
        ({"provider": "openai"}, {}, {}),
        ({}, {"CHARMEMORY_PROVIDER": "openai"}, {}),
        ({}, {}, {"model.provider": "openai"}),
    ],
)
def test_a_chosen_provider_wins_over_the_default(
    flags: dict, env: dict, stored: dict[str, str]
) -> None:
    values = ModelValues(flags={**flags, "model": "gpt-4o-mini"}, env=env, workspace=stored)
    assert model_settings(values, default_provider="local").provider == "openai"


def test_without_a_default_the_error_names_both_ways_out() -> None:
    with pytest.raises(ConfigError) as raised:
        model_settings(ModelValues())
    message = str(raised.value)
    assert "charmemory settings set model.provider NAME" in message
    assert "charmemory local-models install" in message
