from dataclasses import FrozenInstanceError

import pytest

from charmemory.core.extraction_settings import SETTINGS, ExtractionSettings
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
    for setting in SETTINGS:
        if setting.kind == "int":
            assert setting.low is not None and setting.high is not None, setting.name


@pytest.mark.parametrize("value", [True, 20.5, "20"])
def test_a_count_must_be_a_whole_number(value: object) -> None:
    with pytest.raises(ConfigError, match=r"extraction\.interval must be a whole number"):
        ExtractionSettings(interval=value)  # type: ignore[arg-type]


def test_a_switch_must_be_true_or_false() -> None:
    with pytest.raises(ConfigError, match=r"extraction\.auto_extract must be true or false"):
        ExtractionSettings(auto_extract="yes")  # type: ignore[arg-type]


def test_settings_are_frozen() -> None:
    with pytest.raises(FrozenInstanceError):
        ExtractionSettings().interval = 5  # type: ignore[misc]


def test_values_by_full_name_become_settings_and_others_are_left_alone() -> None:
    settings = ExtractionSettings.from_values(
        {"extraction.interval": 50, "extraction.per_chat": True, "model.model": "x"}
    )
    assert settings.interval == 50
    assert settings.per_chat is True
    assert settings.messages_per_call == 20


def test_the_file_override_is_per_character_only() -> None:
    [override] = [s for s in SETTINGS if s.short == "file_name_override"]
    assert override.scopes == {"character"}
    assert ExtractionSettings(file_name_override="  Lily notes.md ").file_name_override == (
        "Lily notes.md"
    )


@pytest.mark.parametrize("name", ["../escape.md", "a/b.md", ".hidden"])
def test_an_unsafe_file_override_is_refused(name: str) -> None:
    with pytest.raises(ConfigError, match=r"extraction\.file_name_override"):
        ExtractionSettings(file_name_override=name)


def test_a_blank_file_override_means_none() -> None:
    assert ExtractionSettings(file_name_override="   ").file_name_override is None
