"""Use-cases around LLM providers: choose one, configure it, connect to it, test it.

`ProviderService.chat_model(overrides)` is how every other use-case obtains
the configured model: overrides (what command-line flags give) win over
`CHARMEMORY_*` variables, which win over the workspace settings.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from charmemory.core.model_catalog import grouped_by_publisher, parse_filters
from charmemory.core.model_settings import (
    ModelSettings,
    ResolvedValue,
    model_settings,
    parse_setting,
    resolve_settings,
    setting_named,
)
from charmemory.core.providers import PRESETS, preset_named
from charmemory.errors import CharMemoryError, ConfigError
from charmemory.ports import FREE_TEXT, ChatMessage, ChatModel, ModelInfo, Usage

SENTINEL = "CHARMEMORY-OK"
TEST_MESSAGES = (
    ChatMessage("system", "You are a connection check. Follow the instruction exactly."),
    ChatMessage("user", f"Reply with exactly this text and nothing else: {SENTINEL}"),
)

KeyStatus = Literal["secrets file", "env", "missing", "not needed"]
TestStatus = Literal["ok", "warning", "error"]
Overrides = Mapping[str, Any] | None


class SettingsPort(Protocol):
    def get(self, key: str, default: Any = None) -> Any: ...
    def set(self, key: str, value: Any) -> None: ...
    def delete(self, key: str) -> None: ...


class KeyLookupLike(Protocol):
    @property
    def value(self) -> str | None: ...
    @property
    def source(self) -> str | None: ...


class KeyStore(Protocol):
    def lookup(self, provider: str) -> KeyLookupLike: ...
    def store(self, provider: str, key: str) -> None: ...
    def remove(self, provider: str) -> bool: ...


class ActivityRecorder(Protocol):
    def record(
        self, kind: str, message: str, *, level: Any = ..., data: dict[str, Any] | None = ...
    ) -> int: ...


class FilterableModels(Protocol):
    async def list_models(self, *, filters: frozenset[str]) -> list[ModelInfo]: ...


ModelBuilder = Callable[[ModelSettings, str | None], ChatModel]


@dataclass(frozen=True)
class PresetStatus:
    name: str
    label: str
    base_url: str
    key: KeyStatus
    current: bool


@dataclass(frozen=True)
class ModelListing:
    provider: str
    models: list[ModelInfo]
    # By upstream publisher, where the provider resells many (NanoGPT).
    groups: list[tuple[str, list[ModelInfo]]] | None = None


@dataclass(frozen=True)
class ModelTest:
    status: TestStatus
    provider: str
    model: str
    message: str
    reply: str = ""
    reasoning_chars: int = 0
    usage: Usage = field(default_factory=Usage)
    seconds: float = 0.0


@dataclass
class ProviderService:
    settings: SettingsPort
    keys: KeyStore
    activity: ActivityRecorder
    build_model: ModelBuilder
    env: Mapping[str, str] = field(default_factory=dict)
    # Used when no provider is chosen: `local` where the embedded model is installed.
    default_provider: str | None = None

    # -- settings ------------------------------------------------------------------

    def settings_in_force(self, overrides: Overrides = None) -> dict[str, ResolvedValue]:
        return resolve_settings(
            self._flags(overrides),
            self.env,
            self.settings.get,
            default_provider=self.default_provider,
        )

    def model_settings(
        self, overrides: Overrides = None, *, require_model: bool = True
    ) -> ModelSettings:
        return model_settings(
            self._flags(overrides),
            self.env,
            self.settings.get,
            require_model=require_model,
            default_provider=self.default_provider,
        )

    def set_setting(self, name: str, raw: Any, *, provider: str | None = None) -> str:
        """Store a setting (checked first); returns the settings key it went to."""
        spec = setting_named(name)
        key = spec.storage_key(self._scope(spec.per_provider, provider))
        self.settings.set(key, parse_setting(spec, raw, spec.name))
        return key

    def unset_setting(self, name: str, *, provider: str | None = None) -> str:
        spec = setting_named(name)
        key = spec.storage_key(self._scope(spec.per_provider, provider))
        self.settings.delete(key)
        return key

    def _scope(self, per_provider: bool, provider: str | None) -> str:
        if not per_provider:
            return ""
        chosen = provider or self.settings_in_force()["provider"].value
        if not chosen:
            raise ConfigError("this setting is kept per provider: add --provider NAME")
        return preset_named(chosen).name

    # -- keys ----------------------------------------------------------------------

    def store_key(self, provider: str, key: str) -> str:
        name = preset_named(provider).name
        self.keys.store(name, key)
        self.activity.record("llm.key", f"stored an API key for {name}")
        return name

    def remove_key(self, provider: str) -> bool:
        name = preset_named(provider).name
        removed = self.keys.remove(name)
        if removed:
            self.activity.record("llm.key", f"removed the API key for {name}")
        return removed

    # -- providers and models ------------------------------------------------------

    def presets(self) -> list[PresetStatus]:
        current = self.settings_in_force()["provider"].value
        statuses = []
        for preset in PRESETS.values():
            flags = {"provider": preset.name}
            base_url = resolve_settings(flags, {}, self.settings.get)["base_url"].value
            found = self.keys.lookup(preset.name)
            key: KeyStatus
            if found.value:
                key = "env" if found.source == "env" else "secrets file"
            else:
                key = "missing" if preset.key_required else "not needed"
            statuses.append(
                PresetStatus(preset.name, preset.label, base_url or "", key, preset.name == current)
            )
        return statuses

    def chat_model(self, overrides: Overrides = None) -> ChatModel:
        """The configured model (flags > environment > workspace settings)."""
        return self._build(self.model_settings(overrides))

    async def list_models(
        self, overrides: Overrides = None, *, filters: Iterable[str] = ()
    ) -> ModelListing:
        settings = self.model_settings(overrides, require_model=False)
        preset = settings.preset
        chosen = parse_filters(filters, allowed=preset.model_filters)
        model = self._build(settings)
        try:
            if chosen:
                filterable: FilterableModels = model  # type: ignore[assignment]
                models = await filterable.list_models(filters=chosen)
            else:
                models = await model.list_models()
        except CharMemoryError as error:
            self.activity.record("llm.models", str(error), level="error")
            raise
        self.activity.record(
            "llm.models",
            f"{settings.provider} lists {len(models)} models",
            data={"provider": settings.provider, "filters": sorted(chosen)},
        )
        groups = grouped_by_publisher(models) if preset.model_filters else None
        return ModelListing(settings.provider, models, groups)

    async def test_model(self, overrides: Overrides = None) -> ModelTest:
        """A tiny request with a known answer: ok, answered-but-off (warning), or failed."""
        settings = self.model_settings(overrides)
        model = self._build(settings)
        started = time.monotonic()
        try:
            completion = await model.complete(
                TEST_MESSAGES,
                max_tokens=settings.max_tokens,
                temperature=settings.temperature,
                answer_format=FREE_TEXT,  # whether the model follows an instruction unaided
            )
        except CharMemoryError as error:
            seconds = time.monotonic() - started
            result = ModelTest(
                "error", settings.provider, settings.model, str(error), seconds=seconds
            )
        else:
            followed = SENTINEL.lower() in completion.text.lower()
            result = ModelTest(
                "ok" if followed else "warning",
                settings.provider,
                settings.model,
                "answered as asked"
                if followed
                else f"responded but did not follow the instruction (expected {SENTINEL})",
                reply=completion.text,
                reasoning_chars=len(completion.reasoning),
                usage=completion.usage,
                seconds=time.monotonic() - started,
            )
        self.activity.record(
            "llm.test",
            f"{result.provider}/{result.model}: {result.message}",
            level="info" if result.status == "ok" else result.status,
            data={
                "status": result.status,
                "reasoning_chars": result.reasoning_chars,
                "prompt_tokens": result.usage.prompt_tokens,
                "completion_tokens": result.usage.completion_tokens,
                "seconds": round(result.seconds, 3),
            },
        )
        return result

    # -- shared --------------------------------------------------------------------

    def _build(self, settings: ModelSettings) -> ChatModel:
        return self.build_model(settings, self.keys.lookup(settings.provider).value)

    @staticmethod
    def _flags(overrides: Overrides) -> dict[str, Any]:
        return {name: value for name, value in (overrides or {}).items() if value is not None}
