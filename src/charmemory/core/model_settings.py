"""The settings that choose and tune the LLM, and where each value comes from.

Every setting can be given three ways, and the first one present wins:
a command-line flag, an environment variable (`CHARMEMORY_<NAME>`), the
workspace settings. Model, base URL, extra parameters and the structured-output
mode are kept per provider, so switching provider does not lose them.
API keys are not settings: they live in the secrets file.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from charmemory.core.providers import (
    EMBEDDED,
    STRUCTURED_OUTPUT_MODES,
    ProviderPreset,
    StructuredOutput,
    normalise_base_url,
    preset_named,
)
from charmemory.errors import ConfigError

Source = Literal["flag", "env", "settings", "default"]
StoredLookup = Callable[[str], Any]

DEFAULT_MAX_TOKENS = 2000
DEFAULT_TEMPERATURE = 0.5
DEFAULT_CONNECT_TIMEOUT = 10.0
DEFAULT_READ_TIMEOUT = 180.0  # reasoning models can think for minutes before a byte
DEFAULT_MAX_RETRIES = 3

# Body fields the adapters own; extra parameters may not replace them.
RESERVED_BODY_FIELDS = frozenset({"model", "messages", "stream", "stream_options", "system"})


def _text(value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError("must be text")
    return value.strip()


def _provider(value: Any) -> str:
    return preset_named(_text(value)).name


def _base_url(value: Any) -> str:
    return normalise_base_url(_text(value))


def _number(value: Any, kind: type[int] | type[float], low: float, high: float) -> Any:
    if isinstance(value, bool):
        raise ValueError("must be a number")
    try:
        number = kind(value.strip() if isinstance(value, str) else value)
    except (TypeError, ValueError):
        raise ValueError(f"must be {'a whole' if kind is int else 'a'} number") from None
    if kind is int and isinstance(value, float) and not value.is_integer():
        raise ValueError("must be a whole number")
    if not (low <= number <= high) or (isinstance(number, float) and math.isnan(number)):
        raise ValueError(f"must be between {low:g} and {high:g}")
    return number


def _extra_params(value: Any) -> dict[str, Any]:
    if isinstance(value, str):
        try:
            value = json.loads(value) if value.strip() else {}
        except json.JSONDecodeError as error:
            raise ValueError(f"is not valid JSON ({error.msg} at column {error.colno})") from None
    if not isinstance(value, dict):
        raise ValueError('must be a JSON object, e.g. {"reasoning": {"enabled": false}}')
    reserved = sorted(RESERVED_BODY_FIELDS & value.keys())
    if reserved:
        raise ValueError(f"may not set {', '.join(reserved)} (charmemory sends those itself)")
    return value


def _structured_output(value: Any) -> StructuredOutput:
    text = _text(value)
    for mode in STRUCTURED_OUTPUT_MODES:
        if text == mode:
            return mode
    raise ValueError(f"must be one of {', '.join(STRUCTURED_OUTPUT_MODES)}")


@dataclass(frozen=True)
class SettingSpec:
    name: str
    help: str
    coerce: Callable[[Any], Any]
    default: Callable[[ProviderPreset | None], Any]
    per_provider: bool = False

    @property
    def env_var(self) -> str:
        return f"CHARMEMORY_{self.name.upper()}"

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")

    def storage_key(self, provider: str) -> str:
        return f"llm.{provider}.{self.name}" if self.per_provider else f"llm.{self.name}"


def _fixed(value: Any) -> Callable[[ProviderPreset | None], Any]:
    return lambda _preset: value


SETTINGS: dict[str, SettingSpec] = {
    spec.name: spec
    for spec in (
        SettingSpec("provider", "preset name, `custom` or `local`", _provider, _fixed(None)),
        SettingSpec("model", "model id at the provider", _text, _fixed(None), per_provider=True),
        SettingSpec(
            "base_url",
            "API base URL (a pasted .../chat/completions is trimmed)",
            _base_url,
            lambda preset: (preset.base_url or None) if preset else None,
            per_provider=True,
        ),
        SettingSpec(
            "max_tokens",
            "most tokens one response may use, reasoning included",
            lambda v: _number(v, int, 1, 1_000_000),
            _fixed(DEFAULT_MAX_TOKENS),
        ),
        SettingSpec(
            "temperature",
            "sampling temperature",
            lambda v: _number(v, float, 0, 2),
            _fixed(DEFAULT_TEMPERATURE),
        ),
        SettingSpec("system_prompt", "text put before every conversation", _text, _fixed("")),
        SettingSpec(
            "connect_timeout",
            "seconds to wait for a connection",
            lambda v: _number(v, float, 0.01, 600),
            _fixed(DEFAULT_CONNECT_TIMEOUT),
        ),
        SettingSpec(
            "read_timeout",
            "seconds to wait for the next piece of an answer",
            lambda v: _number(v, float, 0.01, 3600),
            _fixed(DEFAULT_READ_TIMEOUT),
        ),
        SettingSpec(
            "max_retries",
            "retries after a rate limit, server error or dropped connection",
            lambda v: _number(v, int, 0, 10),
            _fixed(DEFAULT_MAX_RETRIES),
        ),
        SettingSpec(
            "extra_params",
            "JSON object merged into every request body (null removes a field)",
            _extra_params,
            _fixed({}),
            per_provider=True,
        ),
        SettingSpec(
            "structured_output",
            "how JSON answers are requested: " + " | ".join(STRUCTURED_OUTPUT_MODES),
            _structured_output,
            lambda preset: preset.structured_output if preset else "prompt",
            per_provider=True,
        ),
    )
}


def setting_named(name: str) -> SettingSpec:
    key = name.strip().lower().replace("-", "_")
    if key in ("api_key", "key"):
        raise ConfigError(
            "API keys are secrets, not settings: store one with `charmemory secrets set PROVIDER`"
        )
    try:
        return SETTINGS[key]
    except KeyError:
        raise ConfigError(f"unknown setting {name!r}; known: {', '.join(SETTINGS)}") from None


@dataclass(frozen=True)
class ResolvedValue:
    value: Any
    source: Source
    origin: str  # the flag, variable or settings key the value came from

    def describe(self) -> str:
        return "default" if self.source == "default" else self.origin


def parse_setting(spec: SettingSpec, raw: Any, origin: str) -> Any:
    try:
        return spec.coerce(raw)
    except ValueError as error:
        raise ConfigError(f"{spec.name} ({origin}) {error}") from None


def _resolve(
    spec: SettingSpec,
    provider: str | None,
    flags: Mapping[str, Any],
    env: Mapping[str, str],
    stored: StoredLookup,
) -> ResolvedValue:
    candidates: list[tuple[Source, str, Any]] = [
        ("flag", spec.flag, flags.get(spec.name)),
        ("env", spec.env_var, env.get(spec.env_var) or None),
    ]
    if provider is not None or not spec.per_provider:
        key = spec.storage_key(provider or "")
        candidates.append(("settings", f"setting {key}", stored(key)))
    for source, origin, raw in candidates:
        if raw is not None:
            return ResolvedValue(parse_setting(spec, raw, origin), source, origin)
    preset = preset_named(provider) if provider else None
    return ResolvedValue(spec.default(preset), "default", "default")


def resolve_settings(
    flags: Mapping[str, Any],
    env: Mapping[str, str],
    stored: StoredLookup,
    *,
    default_provider: str | None = None,
) -> dict[str, ResolvedValue]:
    """Every setting with its value (None when unset) and where it came from.

    `default_provider` is the provider used when none is chosen: the embedded
    local model, where it is installed.
    """
    unknown = sorted(set(flags) - SETTINGS.keys())
    if unknown:
        raise ConfigError(f"unknown setting {unknown[0]!r}; known: {', '.join(SETTINGS)}")
    provider = _resolve(SETTINGS["provider"], None, flags, env, stored)
    if provider.value is None and default_provider is not None:
        provider = ResolvedValue(preset_named(default_provider).name, "default", "default")
    return {
        "provider": provider,
        **{
            name: _resolve(spec, provider.value, flags, env, stored)
            for name, spec in SETTINGS.items()
            if name != "provider"
        },
    }


@dataclass(frozen=True)
class ModelSettings:
    """Everything needed to talk to one model (the API key aside)."""

    provider: str
    model: str
    base_url: str
    max_tokens: int = DEFAULT_MAX_TOKENS
    temperature: float = DEFAULT_TEMPERATURE
    system_prompt: str = ""
    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT
    read_timeout: float = DEFAULT_READ_TIMEOUT
    max_retries: int = DEFAULT_MAX_RETRIES
    extra_params: Mapping[str, Any] = field(default_factory=dict)
    structured_output: StructuredOutput | None = None  # None: the preset's own mode

    @property
    def preset(self) -> ProviderPreset:
        return preset_named(self.provider)

    @property
    def json_mode(self) -> StructuredOutput:
        return self.structured_output or self.preset.structured_output


def model_settings(
    flags: Mapping[str, Any],
    env: Mapping[str, str],
    stored: StoredLookup,
    *,
    require_model: bool = True,
    default_provider: str | None = None,
) -> ModelSettings:
    """The settings in force; a clear ConfigError names whatever is still missing.

    Listing a provider's models needs everything but the model itself.
    """
    resolved = resolve_settings(flags, env, stored, default_provider=default_provider)
    values = {name: value.value for name, value in resolved.items()}
    provider = values["provider"]
    if provider is None:
        raise ConfigError(
            "no LLM provider chosen: see `charmemory providers`, then "
            "`charmemory config set provider NAME` (or set CHARMEMORY_PROVIDER), "
            f"or install the embedded {EMBEDDED} model with `charmemory local-models install`"
        )
    if provider != EMBEDDED:
        if not values["base_url"]:
            raise ConfigError(
                f"provider {provider} needs a base URL: "
                f"`charmemory config set base_url URL --provider {provider}`"
            )
        if require_model and not values["model"]:
            raise ConfigError(
                f"no model chosen for {provider}: list them with "
                f"`charmemory models --provider {provider}`, then "
                f"`charmemory config set model NAME --provider {provider}`"
            )
    # Every setting is a field of ModelSettings, under the same name.
    return ModelSettings(
        **{**values, "model": values["model"] or "", "base_url": values["base_url"] or ""}
    )
