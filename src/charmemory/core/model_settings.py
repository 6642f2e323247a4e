"""The settings that choose and tune the LLM (`model.*`), and where each value comes from.

The first value present wins: a command-line flag, an environment variable
(`CHARMEMORY_<NAME>`), the character's setting, then the stored value: model,
base URL, extra parameters and the structured-output mode are kept per provider
(so switching provider does not lose them), the others for the workspace.
API keys are not settings: they live in the secrets file.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from charmemory.core.providers import (
    EMBEDDED,
    STRUCTURED_OUTPUT_MODES,
    ProviderPreset,
    StructuredOutput,
    normalise_base_url,
    preset_named,
)
from charmemory.core.settings.spec import (
    Kind,
    Layer,
    Resolved,
    ScopeKind,
    Setting,
    parse_text,
    resolve,
)
from charmemory.errors import ConfigError

GROUP = "model"

DEFAULT_TEMPERATURE = 0.5
DEFAULT_MAX_TOKENS = 2000
# Most hosted models read 32k tokens or more; a smaller context only costs prompt room.
DEFAULT_CONTEXT_SIZE = 32_768
LOCAL_CONTEXT_SIZE = 8192  # what the embedded model is loaded with unless told otherwise
DEFAULT_CONNECT_TIMEOUT = 10.0
DEFAULT_READ_TIMEOUT = 180.0  # reasoning models can think for minutes before a byte
DEFAULT_MAX_RETRIES = 3

# Body fields the adapters own; extra parameters may not replace them.
RESERVED_BODY_FIELDS = frozenset({"model", "messages", "stream", "stream_options", "system"})


def _provider(value: str) -> str:
    return preset_named(value.strip()).name


def _base_url(value: str) -> str:
    return normalise_base_url(value.strip())


def _extra_params(value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ValueError('must be a JSON object, e.g. {"reasoning": {"enabled": false}}')
    reserved = sorted(RESERVED_BODY_FIELDS & value.keys())
    if reserved:
        raise ValueError(f"may not set {', '.join(reserved)} (charmemory sends those itself)")
    return value


_PER_PROVIDER: frozenset[ScopeKind] = frozenset({"provider", "character"})


def _setting(name: str, kind: Kind, default: Any, help: str, **rules: Any) -> Setting:
    return Setting(
        f"{GROUP}.{name}", kind, default, help, env_var=f"CHARMEMORY_{name.upper()}", **rules
    )


SETTINGS: tuple[Setting, ...] = (
    _setting(
        "provider",
        "text",
        None,
        "preset name, `custom` or `local`",
        check=_provider,
        blank_is_unset=True,
    ),
    _setting(
        "model",
        "text",
        None,
        "model id at the provider",
        scopes=_PER_PROVIDER,
        check=str.strip,
        blank_is_unset=True,
    ),
    _setting(
        "base_url",
        "text",
        None,
        "API base URL (a pasted .../chat/completions is trimmed)",
        scopes=_PER_PROVIDER,
        check=_base_url,
        blank_is_unset=True,
    ),
    _setting(
        "context_size",
        "int",
        DEFAULT_CONTEXT_SIZE,
        "tokens the model reads, prompt and response together (extraction's prompt fits in it)",
        scopes=_PER_PROVIDER,
        low=1024,
        high=10_000_000,
    ),
    _setting(
        "max_tokens",
        "int",
        DEFAULT_MAX_TOKENS,
        "most tokens a chat reply may use, reasoning included (extraction has its own: "
        "extraction.max_response_tokens)",
        low=1,
        high=1_000_000,
    ),
    _setting("temperature", "number", DEFAULT_TEMPERATURE, "sampling temperature", low=0, high=2),
    _setting("system_prompt", "text", "", "text put before every conversation"),
    _setting(
        "connect_timeout",
        "number",
        DEFAULT_CONNECT_TIMEOUT,
        "seconds to wait for a connection",
        low=0.01,
        high=600,
    ),
    _setting(
        "read_timeout",
        "number",
        DEFAULT_READ_TIMEOUT,
        "seconds to wait for the next piece of an answer",
        low=0.01,
        high=3600,
    ),
    _setting(
        "max_retries",
        "int",
        DEFAULT_MAX_RETRIES,
        "retries after a rate limit, server error or dropped connection",
        low=0,
        high=10,
    ),
    _setting(
        "extra_params",
        "json",
        {},
        "JSON object merged into every request body (null removes a field)",
        scopes=_PER_PROVIDER,
        check=_extra_params,
    ),
    _setting(
        "structured_output",
        "choice",
        None,
        "how JSON answers are requested",
        scopes=_PER_PROVIDER,
        choices=STRUCTURED_OUTPUT_MODES,
    ),
)
_BY_SHORT = {setting.short: setting for setting in SETTINGS}
PROVIDER = _BY_SHORT["provider"]


def _preset_default(setting: Setting, provider: str | None) -> Any:
    """A default that depends on the provider: its base URL and its structured-output mode."""
    preset = preset_named(provider) if provider else None
    if setting.short == "base_url":
        return (preset.base_url or None) if preset else None
    if setting.short == "structured_output":
        return preset.structured_output if preset else "prompt"
    if setting.short == "context_size" and provider == EMBEDDED:
        return LOCAL_CONTEXT_SIZE
    return setting.default


@dataclass(frozen=True)
class ModelValues:
    """Where model settings come from, highest first: flags, environment, stored scopes."""

    flags: Mapping[str, Any] = field(default_factory=dict)  # by short name, typed
    env: Mapping[str, str] = field(default_factory=dict)
    character: Mapping[str, Any] = field(default_factory=dict)  # stored, by full name
    workspace: Mapping[str, Any] = field(default_factory=dict)
    provider: Callable[[str], Mapping[str, Any]] = lambda _name: {}  # one provider's scope


def resolve_settings(
    values: ModelValues, *, default_provider: str | None = None
) -> dict[str, Resolved]:
    """Every model setting (by short name) with its value (None when unset) and origin.

    `default_provider` is the provider used when none is chosen: the embedded
    local model, where it is installed.
    """
    unknown = sorted(set(values.flags) - _BY_SHORT.keys())
    if unknown:
        raise ConfigError(f"unknown setting {unknown[0]!r}; known: {', '.join(_BY_SHORT)}")
    provider = _resolve(PROVIDER, values, None)
    if provider.value is None and default_provider is not None:
        provider = Resolved(preset_named(default_provider).name, "default")
    resolved = {"provider": provider}
    for short, setting in _BY_SHORT.items():
        if short != "provider":
            resolved[short] = _resolve(setting, values, provider.value)
    return resolved


def _resolve(setting: Setting, values: ModelValues, provider: str | None) -> Resolved:
    layers = [Layer(f"--{setting.short.replace('_', '-')}", _named(setting, values.flags))]
    assert setting.env_var is not None
    if raw := values.env.get(setting.env_var):
        layers.append(Layer(setting.env_var, {setting.name: parse_text(setting, raw)}))
    layers.append(Layer("character", dict(values.character)))
    if "provider" in setting.scopes:
        if provider is not None:
            layers.append(Layer(f"provider {provider}", dict(values.provider(provider))))
    else:
        layers.append(Layer("workspace", dict(values.workspace)))
    return resolve(setting, layers, _preset_default(setting, provider))


def _named(setting: Setting, flags: Mapping[str, Any]) -> dict[str, Any]:
    value = flags.get(setting.short)
    if isinstance(value, str) and setting.kind not in ("text", "choice"):
        value = parse_text(setting, value)
    return {setting.name: value}


@dataclass(frozen=True)
class ModelSettings:
    """Everything needed to talk to one model (the API key aside)."""

    provider: str
    model: str
    base_url: str
    context_size: int = DEFAULT_CONTEXT_SIZE
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
    values: ModelValues,
    *,
    require_model: bool = True,
    default_provider: str | None = None,
) -> ModelSettings:
    """The settings in force; a clear ConfigError names whatever is still missing.

    Listing a provider's models needs everything but the model itself.
    """
    resolved = resolve_settings(values, default_provider=default_provider)
    chosen = {name: value.value for name, value in resolved.items()}
    provider = chosen["provider"]
    if provider is None:
        raise ConfigError(
            "no LLM provider chosen: see `charmemory providers`, then "
            "`charmemory settings set model.provider NAME` (or set CHARMEMORY_PROVIDER), "
            f"or install the embedded {EMBEDDED} model with `charmemory local-models install`"
        )
    if provider != EMBEDDED:
        if not chosen["base_url"]:
            raise ConfigError(
                f"provider {provider} needs a base URL: "
                f"`charmemory settings set model.base_url URL --provider {provider}`"
            )
        if require_model and not chosen["model"]:
            raise ConfigError(
                f"no model chosen for {provider}: list them with "
                f"`charmemory models --provider {provider}`, then "
                f"`charmemory settings set model.model NAME --provider {provider}`"
            )
    # Every setting is a field of ModelSettings, under the same name.
    return ModelSettings(
        **{**chosen, "model": chosen["model"] or "", "base_url": chosen["base_url"] or ""}
    )
