"""Use-cases around LLM providers: choose one, configure it, connect to it, test it.

`ProviderService.chat_model(overrides)` is how every other use-case obtains
the configured model: overrides (what command-line flags give) win over
`CHARMEMORY_*` variables, which win over the stored settings (`model.*`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from charmemory.core.extraction_settings import explain_budget
from charmemory.core.model_catalog import grouped_by_publisher, parse_filters
from charmemory.core.model_settings import ModelSettings
from charmemory.core.providers import PRESETS, preset_named
from charmemory.errors import CharMemoryError
from charmemory.ports import (
    FREE_TEXT,
    ActivityRecorder,
    ApiKeyStore,
    ChatMessage,
    ChatModel,
    ModelInfo,
    Usage,
)
from charmemory.services.settings import SettingsService

SENTINEL = "CHARMEMORY-OK"
TEST_MESSAGES = (
    ChatMessage("system", "You are a connection check. Follow the instruction exactly."),
    ChatMessage("user", f"Reply with exactly this text and nothing else: {SENTINEL}"),
)

KeyStatus = Literal["secrets file", "env", "missing", "not needed"]
TestStatus = Literal["ok", "warning", "error"]
Overrides = Mapping[str, Any] | None


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
    settings: SettingsService
    keys: ApiKeyStore
    activity: ActivityRecorder
    build_model: ModelBuilder

    def model_settings(
        self,
        overrides: Overrides = None,
        *,
        require_model: bool = True,
        character: str | None = None,
    ) -> ModelSettings:
        return self.settings.model(overrides, character, require_model=require_model)

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
        current = self.settings.model_in_force()["provider"].value
        statuses = []
        for preset in PRESETS.values():
            base_url = self.settings.model_in_force({"provider": preset.name})["base_url"].value
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

    def chat_model(self, overrides: Overrides = None, *, character: str | None = None) -> ChatModel:
        """The configured model (flags > environment > the character's > stored settings)."""
        return self._build(self.model_settings(overrides, character=character))

    def describe_model(self, overrides: Overrides = None) -> str:
        """`provider (model)` as in force, without loading or calling the model."""
        model = self.chat_model(overrides)
        return f"{model.provider} ({model.model})"

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

    async def test_model(
        self, overrides: Overrides = None, *, max_tokens: int | None = None
    ) -> ModelTest:
        """A tiny request with a known answer: ok, answered-but-off (warning), or failed.

        The response may be as long as an extraction's (`extraction.max_response_tokens`,
        unless `max_tokens` says otherwise), so a model that passes here has room to
        extract too.
        """
        settings = self.model_settings(overrides)
        model = self._build(settings)
        budget = max_tokens or self.settings.extraction().max_response_tokens
        started = time.monotonic()
        try:
            completion = await model.complete(
                TEST_MESSAGES,
                max_tokens=budget,
                temperature=settings.temperature,
                answer_format=FREE_TEXT,  # whether the model follows an instruction unaided
            )
        except CharMemoryError as error:
            seconds = time.monotonic() - started
            failure = error if max_tokens else explain_budget(error, budget)
            message = self.keys.redact(str(failure))
            result = ModelTest("error", settings.provider, settings.model, message, seconds=seconds)
        else:
            followed = SENTINEL.lower() in completion.text.lower()
            result = ModelTest(
                "ok" if followed else "warning",
                settings.provider,
                settings.model,
                "answered as asked"
                if followed
                else f"responded but did not follow the instruction (expected {SENTINEL})",
                # A model can echo a key it was shown; the reply is printed.
                reply=self.keys.redact(completion.text),
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
