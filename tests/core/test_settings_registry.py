"""The settings registry: one declaration per setting, one validator, clear refusals."""

import re

import pytest

from charmemory.core.settings.registry import GROUPS, SETTINGS, in_group, setting_named
from charmemory.core.settings.spec import Layer, checked, parse_text, resolve, shown
from charmemory.errors import ConfigError


def test_names_are_grouped_by_prefix() -> None:
    assert GROUPS == (
        "extraction",
        "retrieval",
        "model",
        "consolidation",
        "world_info",
        "prompt",
        "chat",
        "persona",
        "server",
        "books",
    )
    assert all(name.split(".", 1)[0] in GROUPS for name in SETTINGS)
    assert {s.name for s in in_group("model")} >= {"model.temperature", "model.provider"}


def test_every_default_passes_its_own_check() -> None:
    for setting in SETTINGS.values():
        assert checked(setting, setting.default) == setting.default, setting.name


def test_every_setting_says_what_it_allows() -> None:
    assert setting_named("extraction.interval").allowed == "3-100"
    assert setting_named("extraction.merge_chunks").allowed == "on|off"
    assert setting_named("retrieval.granularity").allowed == "bullet|chunk"
    assert all(setting.help for setting in SETTINGS.values())


def test_a_near_miss_is_answered_with_what_was_meant() -> None:
    with pytest.raises(ConfigError, match=r"did you mean extraction\.interval"):
        setting_named("extraction.intervall")
    with pytest.raises(ConfigError, match=r"did you mean retrieval\.top_k"):
        setting_named("top_k")
    with pytest.raises(ConfigError, match="API keys are secrets"):
        setting_named("model.api_key")
    with pytest.raises(ConfigError, match="no settings under 'colour'"):
        in_group("colour")


@pytest.mark.parametrize(
    ("name", "text", "value"),
    [
        ("extraction.interval", " 30 ", 30),
        ("extraction.merge_chunks", "On", True),
        ("extraction.verbose_log", "no", False),
        ("extraction.file_name_override", "", None),
        ("model.temperature", "0.7", 0.7),
        ("model.extra_params", '{"top_p": 0.9}', {"top_p": 0.9}),
        ("model.provider", "OpenRouter", "openrouter"),
    ],
)
def test_typed_text_becomes_the_stored_value(name: str, text: str, value: object) -> None:
    assert parse_text(setting_named(name), text) == value


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("extraction.interval", "thirty", "must be a whole number, not 'thirty'"),
        ("extraction.interval", "2", "between 3 and 100, not 2"),
        ("extraction.per_chat", "maybe", "must be on or off"),
        ("model.temperature", "nan", "must be a number, not NaN"),
        ("model.extra_params", '{"model": "x"}', "may not set model"),
        ("model.extra_params", "[1]", "must be a JSON object"),
        ("model.base_url", "ftp://x", "model.base_url"),
        ("extraction.file_name_override", "../x.md", "extraction.file_name_override"),
    ],
)
def test_bad_text_is_refused_naming_the_setting(name: str, text: str, message: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(message)):
        parse_text(setting_named(name), text)


def test_the_first_layer_that_sets_a_value_wins() -> None:
    interval = setting_named("extraction.interval")
    layers = [
        Layer("character", {"extraction.interval": None}),
        Layer("workspace", {"extraction.interval": 30}),
    ]
    found = resolve(interval, layers, interval.default)
    assert (found.value, found.origin) == (30, "workspace")
    assert resolve(interval, [], interval.default).origin == "default"
    with pytest.raises(ConfigError, match=r"between 3 and 100, not 1 \(set in workspace\)"):
        resolve(interval, [Layer("workspace", {"extraction.interval": 1})], 20)


def test_values_are_shown_as_people_type_them() -> None:
    assert [shown(v) for v in (True, None, 2.0, {"a": 1}, "x")] == ["on", "-", "2", '{"a": 1}', "x"]
