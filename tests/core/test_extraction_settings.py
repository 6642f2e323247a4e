from dataclasses import FrozenInstanceError

import pytest

from charmemory.core.extraction_settings import (
    SPECS,
    ExtractionSettings,
    merge_settings,
    parse_setting_text,
    setting_key,
    validate_setting,
)
from charmemory.errors import ConfigError


def test_defaults_are_the_documented_ones() -> None:
    settings = ExtractionSettings()
    assert settings.interval == 20
    assert settings.cooldown_minutes == 10
    assert settings.messages_per_call == 20
    assert settings.max_response_tokens == 1000
    assert settings.merge_chunks is False
    assert settings.per_chat is False
    assert settings.file_name_override is None
    assert settings.auto_extract is True
    assert settings.max_bullets == 8
    assert settings.existing_memories_budget == 1500
    assert settings.verbose_log is False


@pytest.mark.parametrize(
    ("name", "low", "high"),
    [
        ("interval", 3, 100),
        ("cooldown_minutes", 0, 30),
        ("messages_per_call", 10, 200),
        ("max_response_tokens", 100, 4000),
    ],
)
def test_ranges_accept_their_ends_and_refuse_beyond(name: str, low: int, high: int) -> None:
    assert getattr(ExtractionSettings(**{name: low}), name) == low
    assert getattr(ExtractionSettings(**{name: high}), name) == high
    for outside in (low - 1, high + 1):
        with pytest.raises(ConfigError, match=rf"extraction\.{name} .* between {low} and {high}"):
            ExtractionSettings(**{name: outside})


def test_every_whole_number_setting_has_a_range() -> None:
    for name, spec in SPECS.items():
        if type(getattr(ExtractionSettings(), name)) is int:
            assert spec.low is not None and spec.high is not None, name


@pytest.mark.parametrize("value", [True, 20.5, "20", None])
def test_a_count_must_be_a_whole_number(value: object) -> None:
    with pytest.raises(ConfigError, match=r"extraction\.interval must be a whole number"):
        ExtractionSettings(interval=value)  # type: ignore[arg-type]


def test_a_switch_must_be_true_or_false() -> None:
    with pytest.raises(ConfigError, match=r"extraction\.auto_extract must be true or false"):
        ExtractionSettings(auto_extract="yes")  # type: ignore[arg-type]


def test_settings_are_frozen() -> None:
    with pytest.raises(FrozenInstanceError):
        ExtractionSettings().interval = 5  # type: ignore[misc]


def test_character_values_win_over_workspace_values() -> None:
    settings = merge_settings(
        {"extraction.interval": 30, "extraction.cooldown_minutes": 5},
        {"extraction.interval": 50, "extraction.per_chat": True},
    )
    assert settings.interval == 50
    assert settings.cooldown_minutes == 5
    assert settings.per_chat is True
    assert settings.messages_per_call == 20


def test_a_cleared_value_inherits_from_the_level_below() -> None:
    settings = merge_settings({"extraction.interval": 30}, {"extraction.interval": None})
    assert settings.interval == 30
    assert merge_settings({"extraction.interval": None}).interval == 20
    assert merge_settings({"extraction.file_name_override": None}).file_name_override is None


def test_other_settings_in_the_same_store_are_left_alone() -> None:
    settings = merge_settings({"llm.model": "gpt-4.1-mini", "extraction.max_bullets": 5})
    assert settings.max_bullets == 5


def test_a_misspelt_extraction_key_is_refused_with_its_scope() -> None:
    with pytest.raises(ConfigError, match=r"'extraction.intervall' in the character settings"):
        merge_settings({}, {"extraction.intervall": 30})


def test_a_bad_stored_value_names_the_setting() -> None:
    with pytest.raises(ConfigError, match=r"extraction\.messages_per_call"):
        merge_settings({"extraction.messages_per_call": 5})


def test_the_file_override_is_per_character_only() -> None:
    with pytest.raises(ConfigError, match="only be set per character"):
        merge_settings({"extraction.file_name_override": "all.md"})
    settings = merge_settings({}, {"extraction.file_name_override": "  Lily notes.md "})
    assert settings.file_name_override == "Lily notes.md"


@pytest.mark.parametrize("name", ["../escape.md", "a/b.md", ".hidden"])
def test_an_unsafe_file_override_is_refused(name: str) -> None:
    with pytest.raises(ConfigError, match=r"extraction\.file_name_override"):
        merge_settings({}, {"extraction.file_name_override": name})


def test_a_blank_file_override_means_none() -> None:
    assert ExtractionSettings(file_name_override="   ").file_name_override is None


def test_validate_setting_checks_one_value_before_it_is_stored() -> None:
    assert validate_setting("extraction.interval", 40, per_character=False) == 40
    assert validate_setting("extraction.interval", None, per_character=True) is None
    assert validate_setting("extraction.file_name_override", None, per_character=False) is None
    with pytest.raises(ConfigError, match="between 3 and 100"):
        validate_setting("extraction.interval", 2, per_character=True)
    with pytest.raises(ConfigError, match="only be set per character"):
        validate_setting("extraction.file_name_override", "x.md", per_character=False)
    with pytest.raises(ConfigError, match="unknown setting 'interval'"):
        validate_setting("interval", 40, per_character=False)


def test_typed_text_becomes_a_setting_value() -> None:
    assert parse_setting_text("extraction.interval", " 30 ") == 30
    assert parse_setting_text("extraction.merge_chunks", "On") is True
    assert parse_setting_text("extraction.verbose_log", "no") is False
    assert parse_setting_text("extraction.file_name_override", "") is None
    with pytest.raises(ConfigError, match="must be a whole number, not 'thirty'"):
        parse_setting_text("extraction.interval", "thirty")
    with pytest.raises(ConfigError, match="must be on or off"):
        parse_setting_text("extraction.per_chat", "maybe")


def test_setting_key_refuses_unknown_names() -> None:
    assert setting_key("cooldown_minutes") == "extraction.cooldown_minutes"
    with pytest.raises(ConfigError):
        setting_key("cooldown")
