"""The settings of memory extraction: defaults, allowed ranges and where values come from.

Values are stored as JSON under keys `extraction.<name>`, once for the workspace and
optionally per character; a character's value wins over the workspace's. Keys of other
settings (for example `llm.*`) may sit in the same mapping and are left alone, while an
unknown `extraction.*` key is a typo and is refused.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from charmemory.core.naming import checked_file_name
from charmemory.core.setting_text import parse_switch, setting_name
from charmemory.errors import ConfigError, UnsafePathError

KEY_PREFIX = "extraction."


@dataclass(frozen=True)
class SettingSpec:
    """How one setting is shown and checked; `low`/`high` bound whole-number settings."""

    label: str
    low: int | None = None
    high: int | None = None


SPECS: dict[str, SettingSpec] = {
    "interval": SettingSpec("Extract after every N character messages", 3, 100),
    "cooldown_minutes": SettingSpec("Minimum wait between extractions (minutes)", 0, 30),
    "messages_per_call": SettingSpec("Messages per LLM call", 10, 200),
    "max_response_tokens": SettingSpec("Max response length (tokens)", 100, 4000),
    "merge_chunks": SettingSpec("Merge the chunks of one extraction into one block"),
    "per_chat": SettingSpec("Separate memories per chat"),
    "file_name_override": SettingSpec("File name override"),
    "auto_extract": SettingSpec("Automatic extraction"),
    "max_bullets": SettingSpec("Maximum bullets per block", 1, 30),
    "existing_memories_budget": SettingSpec("Existing memories in the prompt (tokens)", 0, 16000),
    "verbose_log": SettingSpec("Verbose activity log"),
}

# A file override names one character's file; set for the workspace it would pour
# every character's memories into the same file.
CHARACTER_ONLY = frozenset({"file_name_override"})


@dataclass(frozen=True)
class ExtractionSettings:
    """Every extraction setting, always valid: construction checks each value."""

    interval: int = 20
    cooldown_minutes: int = 10
    messages_per_call: int = 20
    max_response_tokens: int = 1000
    merge_chunks: bool = False
    per_chat: bool = False
    file_name_override: str | None = None
    auto_extract: bool = True
    max_bullets: int = 8
    existing_memories_budget: int = 1500
    verbose_log: bool = False

    def __post_init__(self) -> None:
        for item in fields(self):
            checked = _checked(item.name, getattr(self, item.name))
            # Frozen: the checked form (a trimmed override) replaces what was given.
            object.__setattr__(self, item.name, checked)


_DEFAULTS: dict[str, Any] = {item.name: item.default for item in fields(ExtractionSettings)}


def setting_key(name: str) -> str:
    """The storage key of a setting, e.g. `extraction.interval`."""
    if name not in SPECS:
        raise ConfigError(f"unknown extraction setting {name!r}; known: {', '.join(SPECS)}")
    return KEY_PREFIX + name


def merge_settings(
    workspace: Mapping[str, Any], character: Mapping[str, Any] | None = None
) -> ExtractionSettings:
    """The settings in force for a character: defaults < workspace < character.

    A `None` value means "not set here": a cleared per-character field inherits the
    workspace value, a cleared workspace field the default.
    """
    values = _own_values(workspace, scope=" in the workspace settings")
    misplaced = sorted(CHARACTER_ONLY & values.keys())
    if misplaced:
        raise ConfigError(
            f"{KEY_PREFIX}{misplaced[0]} can only be set per character, not for the whole workspace"
        )
    values.update(_own_values(character or {}, scope=" in the character settings"))
    return ExtractionSettings(**values)


def validate_setting(key: str, value: Any, *, per_character: bool) -> Any:
    """Check one value before it is stored; returns the form to store (None: unset)."""
    name = _name_of(key)
    if value is None:
        return None
    if name in CHARACTER_ONLY and not per_character:
        raise ConfigError(f"{key} can only be set per character, not for the whole workspace")
    return _checked(name, value)


def parse_setting_text(key: str, text: str) -> Any:
    """Turn typed text (a CLI argument, a form field) into the setting's JSON value."""
    name = _name_of(key)
    default = _DEFAULTS[name]
    word = text.strip()
    if name == "file_name_override":
        return word or None
    if isinstance(default, bool):
        return parse_switch(key, word)
    try:
        return int(word)
    except ValueError:
        raise ConfigError(f"{key} must be a whole number, not {text!r}") from None


def _own_values(values: Mapping[str, Any], *, scope: str) -> dict[str, Any]:
    """The extraction values that are set, by name; `None` means not set."""
    return {
        _name_of(key, scope=scope): value
        for key, value in values.items()
        if key.startswith(KEY_PREFIX) and value is not None
    }


def _name_of(key: str, *, scope: str = "") -> str:
    return setting_name(key, KEY_PREFIX, SPECS, scope=scope)


def _checked(name: str, value: Any) -> Any:
    spec = SPECS[name]
    key = KEY_PREFIX + name
    default = _DEFAULTS[name]
    if name == "file_name_override":
        return _checked_override(key, value)
    if isinstance(default, bool):
        if not isinstance(value, bool):
            raise ConfigError(f"{key} must be true or false, not {value!r}")
        return value
    # bool is an int in Python; `true` for a count is a mistake, not 1.
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError(f"{key} must be a whole number, not {value!r}")
    assert spec.low is not None and spec.high is not None
    if not spec.low <= value <= spec.high:
        raise ConfigError(
            f"{key} ({spec.label}) must be between {spec.low} and {spec.high}, not {value}"
        )
    return value


def _checked_override(key: str, value: Any) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise ConfigError(f"{key} must be a file name or empty, not {value!r}")
    if not value.strip():
        return None
    try:
        checked_file_name(value)
    except UnsafePathError as error:
        raise ConfigError(f"{key}: {error}") from None
    return value.strip()
