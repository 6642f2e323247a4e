from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from charmemory.core.model_catalog import grouped_by_publisher, matching, parse_filters, publisher
from charmemory.core.model_settings import (
    ModelSettings,
    ModelValues,
    model_settings,
    resolve_settings,
)
from charmemory.core.providers import (
    NANOGPT_FILTERS,
    PRESETS,
    json_schema_hint,
    normalise_base_url,
    preset_named,
    response_format,
)
from charmemory.errors import ConfigError
from charmemory.ports import ModelInfo

# -- presets -----------------------------------------------------------------------


def test_every_named_provider_has_a_preset() -> None:
    assert set(PRESETS) == {
        "openai", "anthropic", "openrouter", "groq", "deepseek", "mistral", "xai",
        "nanogpt", "nvidia", "ollama", "local-server", "custom", "local",
    }  # fmt: skip
    assert PRESETS["local-server"].base_url == "http://localhost:5001/v1"
    assert PRESETS["ollama"].base_url == "http://localhost:11434/v1"
    assert PRESETS["anthropic"].dialect == "anthropic"
    assert PRESETS["local"].dialect == "embedded"
    assert not PRESETS["ollama"].key_required and PRESETS["groq"].key_required


def test_openrouter_sends_app_attribution_headers() -> None:
    assert {name for name, _ in PRESETS["openrouter"].headers} == {"HTTP-Referer", "X-Title"}


def test_unknown_provider_names_the_choices() -> None:
    with pytest.raises(ConfigError, match="local-server"):
        preset_named("koboldcpp")
    assert preset_named(" OpenAI ").name == "openai"


# -- base URLs -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pasted", "base"),
    [
        ("https://api.example.com/v1/chat/completions", "https://api.example.com/v1"),
        ("https://api.example.com/v1/", "https://api.example.com/v1"),
        ("  http://localhost:5001/v1/chat/completions/  ", "http://localhost:5001/v1"),
        ("https://api.anthropic.com/v1/messages", "https://api.anthropic.com/v1"),
        ("http://127.0.0.1:8080", "http://127.0.0.1:8080"),
    ],
)
def test_pasted_urls_become_base_urls(pasted: str, base: str) -> None:
    assert normalise_base_url(pasted) == base


@pytest.mark.parametrize("bad", ["localhost:5001/v1", "ftp://x/v1", "", "https://x/v1?key=1"])
def test_urls_that_cannot_be_a_base_are_refused(bad: str) -> None:
    with pytest.raises(ConfigError):
        normalise_base_url(bad)


@settings(max_examples=150)
@given(
    st.sampled_from(["http://", "https://"]),
    st.from_regex(r"[a-z0-9.-]{1,20}(:[0-9]{2,5})?", fullmatch=True),
    st.from_regex(r"(/[a-z0-9]{1,6}){0,3}", fullmatch=True),
    st.sampled_from(["", "/", "/chat/completions", "/chat/completions/", "//"]),
)
def test_normalising_is_idempotent(scheme: str, host: str, path: str, tail: str) -> None:
    once = normalise_base_url(scheme + host + path + tail)
    assert normalise_base_url(once) == once
    assert not once.endswith(("/", "/chat/completions"))


# -- structured output ---------------------------------------------------------------


def test_schema_becomes_a_response_format_or_a_prompt_hint() -> None:
    schema = {"type": "object"}
    assert response_format("memory list!", schema, "json_schema") == {
        "type": "json_schema",
        "json_schema": {"name": "memory_list_", "schema": schema},
    }
    assert response_format("", schema, "json_schema")["json_schema"]["name"] == "answer"
    assert response_format("scene", schema, "json_object") == {"type": "json_object"}
    assert response_format("scene", schema, "prompt") is None
    assert '"type": "object"' in json_schema_hint(schema)


# -- settings ------------------------------------------------------------------------


def stored(workspace: dict[str, Any], **providers: dict[str, Any]) -> dict[str, Any]:
    """Stored values as the settings service hands them over."""
    return {"workspace": workspace, "provider": lambda name: providers.get(name, {})}


def test_flags_beat_environment_beat_settings_beat_defaults() -> None:
    values = stored(
        {"model.provider": "openai", "model.max_retries": 9},
        openai={"model.model": "from-settings"},
    )
    env = {"CHARMEMORY_MODEL": "from-env", "CHARMEMORY_MAX_RETRIES": "5"}

    resolved = resolve_settings(ModelValues(flags={"model": "from-flag"}, env=env, **values))

    assert (resolved["model"].value, resolved["model"].origin) == ("from-flag", "--model")
    assert (resolved["max_retries"].value, resolved["max_retries"].origin) == (
        5,
        "CHARMEMORY_MAX_RETRIES",
    )
    assert (resolved["provider"].value, resolved["provider"].origin) == ("openai", "workspace")
    assert resolved["temperature"].origin == "default"
    assert resolved["base_url"].value == "https://api.openai.com/v1"
    assert resolve_settings(ModelValues(**values))["model"].value == "from-settings"
    assert resolve_settings(ModelValues(**values))["model"].origin == "provider openai"


def test_a_character_value_wins_over_stored_ones() -> None:
    values = stored({"model.temperature": 0.9}, openai={"model.model": "a"})
    character = {"model.temperature": 0.2, "model.provider": "openai", "model.model": "b"}
    resolved = resolve_settings(ModelValues(character=character, **values))
    assert resolved["temperature"].value == 0.2
    assert (resolved["model"].value, resolved["model"].origin) == ("b", "character")


def test_model_and_base_url_are_kept_per_provider() -> None:
    values = stored(
        {"model.provider": "openai"},
        openai={"model.model": "gpt-4o-mini"},
        groq={
            "model.model": "llama-3.3-70b",
            "model.base_url": "https://proxy.example/openai/v1/chat/completions",
        },
    )
    groq = model_settings(ModelValues(flags={"provider": "groq"}, **values))
    assert (groq.model, groq.base_url) == ("llama-3.3-70b", "https://proxy.example/openai/v1")
    assert model_settings(ModelValues(**values)).model == "gpt-4o-mini"
    env = {"CHARMEMORY_PROVIDER": "groq"}
    assert model_settings(ModelValues(env=env, **values)).provider == "groq"


def test_missing_choices_are_explained() -> None:
    with pytest.raises(ConfigError, match="no LLM provider chosen"):
        model_settings(ModelValues())
    with pytest.raises(ConfigError, match="no model chosen for openai"):
        model_settings(ModelValues(flags={"provider": "openai"}))
    with pytest.raises(ConfigError, match="custom needs a base URL"):
        model_settings(ModelValues(flags={"provider": "custom", "model": "m"}))
    listing = model_settings(ModelValues(flags={"provider": "openai"}), require_model=False)
    assert listing.model == ""
    assert model_settings(ModelValues(flags={"provider": "local"})).provider == "local"


@pytest.mark.parametrize(
    ("name", "raw", "message"),
    [
        ("max_retries", "lots", "max_retries must be a whole number"),
        ("max_retries", "11", "between 0 and"),
        ("temperature", "3", "between 0 and 2"),
        ("extra_params", "[1, 2]", "must be a JSON object"),
        ("extra_params", "{nope", "is not valid JSON"),
        ("extra_params", '{"messages": []}', "may not set messages"),
        ("structured_output", "xml", "json_schema"),
        ("provider", "gpt", "unknown provider"),
    ],
)
def test_bad_values_are_refused_naming_the_variable(name: str, raw: str, message: str) -> None:
    env = {"CHARMEMORY_PROVIDER": "openai", f"CHARMEMORY_{name.upper()}": raw}
    with pytest.raises(ConfigError, match=message):
        resolve_settings(ModelValues(env=env))


def test_json_mode_follows_the_preset_unless_set() -> None:
    assert ModelSettings("deepseek", "m", "http://x").json_mode == "json_object"
    assert (
        ModelSettings("custom", "m", "http://x", structured_output="prompt").json_mode == "prompt"
    )


# -- model lists ---------------------------------------------------------------------


NANOGPT_MODELS = [
    ModelInfo("deepseek/deepseek-r1", "deepseek"),
    ModelInfo("openai/gpt-5.2", "openai"),
    ModelInfo("openai/o3-mini", "openai"),
    ModelInfo("thedrummer/cydonia-24b", None),
    ModelInfo("sao10k/l3.3-euryale-70b:thinking", "sao10k"),
    ModelInfo("qwen/qwen3-235b", "qwen", {"capabilities": {"reasoning": True}}),
    ModelInfo("anthropic/claude-x", "anthropic", {"description": "Great for roleplay"}),
    ModelInfo("google/gemma-3-27b", "google"),
]


def ids(models: list[ModelInfo]) -> list[str]:
    return [model.id for model in models]


def test_nanogpt_filters_combine_as_an_intersection() -> None:
    reasoning = matching(NANOGPT_MODELS, frozenset({"reasoning"}))
    assert ids(reasoning) == [
        "deepseek/deepseek-r1",
        "openai/o3-mini",
        "qwen/qwen3-235b",
        "sao10k/l3.3-euryale-70b:thinking",
    ]
    open_source = matching(NANOGPT_MODELS, frozenset({"open-source"}))
    assert "google/gemma-3-27b" in ids(open_source) and "openai/gpt-5.2" not in ids(open_source)
    roleplay = matching(NANOGPT_MODELS, frozenset({"roleplay"}))
    assert ids(roleplay) == [
        "anthropic/claude-x",
        "sao10k/l3.3-euryale-70b:thinking",
        "thedrummer/cydonia-24b",
    ]
    both = matching(NANOGPT_MODELS, frozenset({"roleplay", "reasoning"}))
    assert ids(both) == ["sao10k/l3.3-euryale-70b:thinking"]


def test_capability_flag_wins_over_the_name() -> None:
    flagged = ModelInfo("vendor/thinking-named", "vendor", {"capabilities": {"reasoning": False}})
    assert matching([flagged], frozenset({"reasoning"})) == []


def test_filter_names_are_checked() -> None:
    chosen = parse_filters(["subscription,roleplay", "Reasoning"], allowed=NANOGPT_FILTERS)
    assert chosen == {"subscription", "roleplay", "reasoning"}
    with pytest.raises(ConfigError, match="unknown model filter 'cheap'"):
        parse_filters(["cheap"], allowed=NANOGPT_FILTERS)
    with pytest.raises(ConfigError, match="none for this provider"):
        parse_filters(["roleplay"], allowed=())


def test_models_group_by_upstream_publisher() -> None:
    groups = grouped_by_publisher(NANOGPT_MODELS)
    assert [name for name, _ in groups][:3] == ["anthropic", "deepseek", "google"]
    assert ids(dict(groups)["openai"]) == ["openai/gpt-5.2", "openai/o3-mini"]
    assert publisher(ModelInfo("thedrummer/cydonia-24b")) == "thedrummer"
    assert publisher(ModelInfo("llama3")) == "other"
