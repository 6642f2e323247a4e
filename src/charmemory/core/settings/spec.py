"""What a setting is, and the one validator every stored or typed value goes through.

A setting is named `<group>.<name>` (`extraction.interval`, `retrieval.top_k`,
`model.temperature`). Its value is JSON. It may be set in some scopes: for the
workspace, for one character, or for one LLM provider (a model id belongs to
the provider that serves it).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from charmemory.errors import ConfigError

Kind = Literal["int", "number", "bool", "choice", "text", "json"]
ScopeKind = Literal["workspace", "character", "provider"]

WORKSPACE_OR_CHARACTER: frozenset[ScopeKind] = frozenset({"workspace", "character"})

_TRUE = frozenset({"true", "on", "yes", "1"})
_FALSE = frozenset({"false", "off", "no", "0"})


@dataclass(frozen=True)
class Setting:
    """One setting; `check` adds a domain rule after the kind's own (raises ValueError)."""

    name: str
    kind: Kind
    default: Any
    help: str
    low: float | None = None
    high: float | None = None
    choices: tuple[str, ...] = ()
    scopes: frozenset[ScopeKind] = WORKSPACE_OR_CHARACTER
    check: Callable[[Any], Any] | None = None
    # For text: an empty value means "not set" (None).
    blank_is_unset: bool = False
    env_var: str | None = None  # a CHARMEMORY_* variable that overrides stored values

    @property
    def group(self) -> str:
        return self.name.split(".", 1)[0]

    @property
    def short(self) -> str:
        return self.name.split(".", 1)[1]

    @property
    def allowed(self) -> str:
        """The values it takes, as shown to people: `3-100`, `on|off`, `bullet|chunk`."""
        if self.kind == "bool":
            return "on|off"
        if self.kind == "choice":
            return "|".join(self.choices)
        if self.low is not None and self.high is not None:
            return f"{self.low:g}-{self.high:g}"
        return {"json": "JSON", "text": "text"}.get(self.kind, self.kind)


def checked(setting: Setting, value: Any) -> Any:
    """The value in the form it is stored, or a ConfigError naming the setting and the rule."""
    if value is None:
        return None
    value = _of_kind(setting, value)
    if value is None or setting.check is None:
        return value
    try:
        return setting.check(value)
    except (ValueError, ConfigError) as error:
        raise ConfigError(f"{setting.name}: {error}") from None


def parse_text(setting: Setting, text: str) -> Any:
    """Typed text (a command-line argument, a form field) as the setting's checked value."""
    word = text.strip()
    if setting.kind == "int":
        try:
            return checked(setting, int(word))
        except ValueError:
            raise ConfigError(f"{setting.name} must be a whole number, not {text!r}") from None
    if setting.kind == "number":
        try:
            return checked(setting, float(word))
        except ValueError:
            raise ConfigError(f"{setting.name} must be a number, not {text!r}") from None
    if setting.kind == "bool":
        if word.lower() not in _TRUE | _FALSE:
            raise ConfigError(f"{setting.name} must be on or off, not {text!r}")
        return word.lower() in _TRUE
    if setting.kind == "json":
        try:
            return checked(setting, json.loads(text) if word else {})
        except json.JSONDecodeError as error:
            raise ConfigError(
                f"{setting.name} is not valid JSON ({error.msg} at column {error.colno})"
            ) from None
    if setting.kind == "text":
        # A typed "\n" means a line break: a shell argument rarely holds a real one.
        return checked(setting, text.replace("\\n", "\n"))
    return checked(setting, word)


def shown(value: Any) -> str:
    """A value as a person reads it."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, dict | list):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, float) and value.is_integer():
        return f"{value:g}"
    return str(value)


def _of_kind(setting: Setting, value: Any) -> Any:
    name, kind = setting.name, setting.kind
    if kind == "bool":
        if not isinstance(value, bool):
            raise ConfigError(f"{name} must be true or false, not {value!r}")
        return value
    if kind == "choice":
        if value not in setting.choices:
            raise ConfigError(f"{name} must be one of {', '.join(setting.choices)}, not {value!r}")
        return value
    if kind == "text":
        if not isinstance(value, str):
            raise ConfigError(f"{name} must be text, not {value!r}")
        return None if setting.blank_is_unset and not value.strip() else value
    if kind == "json":
        return value
    # bool is an int in Python; `true` for a count is a mistake, not 1.
    whole = kind == "int"
    if isinstance(value, bool) or not isinstance(value, int if whole else int | float):
        raise ConfigError(
            f"{name} must be {'a whole number' if whole else 'a number'}, not {value!r}"
        )
    if isinstance(value, float) and math.isnan(value):
        raise ConfigError(f"{name} must be a number, not NaN")
    low, high = setting.low, setting.high
    if (low is not None and value < low) or (high is not None and value > high):
        raise ConfigError(
            f"{name} ({setting.help}) must be between {low:g} and {high:g}, not {value}"
        )
    return value


@dataclass(frozen=True)
class Resolved:
    """A setting's value in force and where it came from."""

    value: Any
    origin: str  # "default", "workspace", "character", "provider", a flag or a variable


@dataclass(frozen=True)
class Layer:
    """One place values come from, highest first: flags, environment, character ..."""

    origin: str
    values: dict[str, Any] = field(default_factory=dict)


def resolve(setting: Setting, layers: tuple[Layer, ...] | list[Layer], default: Any) -> Resolved:
    """The first value set in ``layers`` (highest first), else ``default``."""
    for layer in layers:
        raw = layer.values.get(setting.name)
        if raw is None:
            continue
        try:
            value = checked(setting, raw)
        except ConfigError as error:
            raise ConfigError(f"{error} (set in {layer.origin})") from None
        if value is not None:
            return Resolved(value, layer.origin)
    return Resolved(default, "default")
