"""Settings as people and the other services see them: shown, changed, read as typed values.

Every setting is declared once in the registry (`core.settings.registry`) and stored
by scope: the workspace (`""`), a character (`character:<name>`) or an LLM provider
(`provider:<name>`). A character's value wins over the workspace's, which wins over
the default; model settings can also come from flags and `CHARMEMORY_*` variables.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from charmemory.core.extraction_settings import ExtractionSettings
from charmemory.core.model_settings import (
    ModelSettings,
    ModelValues,
    model_settings,
    resolve_settings,
)
from charmemory.core.providers import preset_named
from charmemory.core.retrieval_settings import RetrievalSettings
from charmemory.core.retrieval_settings import from_values as retrieval_from_values
from charmemory.core.settings.registry import SETTINGS, in_group, setting_named
from charmemory.core.settings.spec import Layer, Resolved, Setting, parse_text, resolve
from charmemory.errors import ConfigError
from charmemory.ports import CharacterLibrary, SettingsRepository

WORKSPACE = ""
Overrides = Mapping[str, Any] | None
# Asked before a setting changes: (name, new value or None when unset, character or None
# for the workspace); raises a CharMemoryError to refuse the change.
Guard = Callable[[str, Any, str | None], None]


def character_scope(name: str) -> str:
    return f"character:{name}"


def provider_scope(name: str) -> str:
    return f"provider:{name}"


@dataclass(frozen=True)
class SettingRow:
    setting: Setting
    value: Any
    origin: str  # default, workspace, character, provider <name>, or a variable


@dataclass(frozen=True)
class _Stored:
    workspace: dict[str, Any]
    character: dict[str, Any]


@dataclass(frozen=True)
class Stored:
    """Where a change went: the setting, its checked value (None: unset) and the scope."""

    name: str
    value: Any
    scope: str  # as people read it: "the workspace", "Mira", "provider openrouter"


class SettingsService:
    def __init__(
        self,
        store: SettingsRepository,
        library: CharacterLibrary,
        env: Mapping[str, str] | None = None,
        *,
        default_provider: Callable[[], str | None] = lambda: None,
    ):
        self._store = store
        self._library = library
        self._env = env or {}
        self._default_provider = default_provider
        self._guards: list[Guard] = []

    @cached_property
    def default_provider(self) -> str | None:
        """The provider used when none is chosen: `local` where the embedded model is
        installed. Asked on first use, so a command that reads no model setting (listing
        memories) never looks for the model or loads its adapter."""
        return self._default_provider()

    def add_guard(self, guard: Guard) -> None:
        """Have ``guard`` approve every change to a setting (another domain's rule)."""
        self._guards.append(guard)

    # -- typed values for the other services --------------------------------------------

    def extraction(self, character: str | None = None) -> ExtractionSettings:
        return ExtractionSettings.from_values(self._values(in_group("extraction"), character))

    def retrieval(self, character: str | None = None) -> RetrievalSettings:
        return retrieval_from_values(self._values(in_group("retrieval"), character))

    def values(self, settings: Iterable[Setting], character: str | None = None) -> dict[str, Any]:
        """The values of ``settings`` by name, as `value` gives each, read from the store once."""
        return self._values(list(settings), character)

    def value(self, name: str, character: str | None = None) -> Any:
        setting = setting_named(name)
        return self._resolved(setting, character).value

    def origin(self, name: str, character: str | None = None) -> str:
        """Where a setting's value comes from: default, workspace or character."""
        return self._resolved(setting_named(name), character).origin

    def model_in_force(
        self, overrides: Overrides = None, character: str | None = None
    ) -> dict[str, Resolved]:
        """Every model setting (by short name) with its value and where it came from."""
        return resolve_settings(
            self._model_values(overrides, character), default_provider=self.default_provider
        )

    def model(
        self,
        overrides: Overrides = None,
        character: str | None = None,
        *,
        require_model: bool = True,
    ) -> ModelSettings:
        return model_settings(
            self._model_values(overrides, character),
            require_model=require_model,
            default_provider=self.default_provider,
        )

    # -- what `charmemory settings` does --------------------------------------------------

    def show(
        self,
        prefix: str | None = None,
        *,
        character: str | None = None,
        provider: str | None = None,
    ) -> list[SettingRow]:
        """The settings in force (all, or under ``prefix``) and where each value comes from."""
        name = self._character_name(character)
        settings = in_group(prefix) if prefix else list(SETTINGS.values())
        model = self.model_in_force({"provider": provider} if provider else None, name)
        rows = []
        for setting in settings:
            if setting.group == "model":
                found = model[setting.short]
            else:
                found = self._resolved(setting, name)
            rows.append(SettingRow(setting, found.value, found.origin))
        return rows

    def set(
        self,
        name: str,
        text: str,
        *,
        character: str | None = None,
        provider: str | None = None,
    ) -> Stored:
        """Store a typed value, checked against the setting's kind and range first."""
        setting = setting_named(name)
        value = parse_text(setting, text)
        scope, label = self._scope(setting, character, provider)
        self._approve(setting, value, character)
        if value is None:
            self._store.delete(setting.name, scope=scope)
        else:
            self._store.set(setting.name, value, scope=scope)
        return Stored(setting.name, value, label)

    def unset(
        self, name: str, *, character: str | None = None, provider: str | None = None
    ) -> Stored:
        """Forget a stored value, so the one below it (or the default) applies again."""
        setting = setting_named(name)
        scope, label = self._scope(setting, character, provider)
        self._approve(setting, None, character)
        self._store.delete(setting.name, scope=scope)
        return Stored(setting.name, None, label)

    # -- internals --------------------------------------------------------------------------

    def _approve(self, setting: Setting, value: Any, character: str | None) -> None:
        if not self._guards:
            return
        name = self._character_name(character)
        for guard in self._guards:
            guard(setting.name, value, name)

    def _character_name(self, character: str | None) -> str | None:
        return None if character is None else self._library.character(character).name

    def _scope(
        self, setting: Setting, character: str | None, provider: str | None
    ) -> tuple[str, str]:
        if character is not None:
            if "character" not in setting.scopes:
                raise ConfigError(
                    f"{setting.name} is set for the whole workspace, not per character"
                )
            name = self._character_name(character)
            assert name is not None
            return character_scope(name), name
        if provider is not None or (
            "provider" in setting.scopes and "workspace" not in setting.scopes
        ):
            if "provider" not in setting.scopes:
                raise ConfigError(f"{setting.name} is not kept per provider")
            chosen = provider or self.model_in_force()["provider"].value
            if not chosen:
                raise ConfigError(f"{setting.name} is kept per provider: add --provider NAME")
            chosen = preset_named(chosen).name
            return provider_scope(chosen), f"provider {chosen}"
        if "workspace" not in setting.scopes:
            raise ConfigError(f"{setting.name} can only be set per character: add --character NAME")
        return WORKSPACE, "the workspace"

    def _resolved(
        self, setting: Setting, character: str | None, stored: _Stored | None = None
    ) -> Resolved:
        stored = stored or self._stored(character)
        layers = []
        if character is not None and "character" in setting.scopes:
            layers.append(Layer("character", stored.character))
        if "workspace" in setting.scopes:
            layers.append(Layer("workspace", stored.workspace))
        return resolve(setting, layers, setting.default)

    def _values(self, settings: list[Setting], character: str | None) -> dict[str, Any]:
        stored = self._stored(character)
        return {s.name: self._resolved(s, character, stored).value for s in settings}

    def _stored(self, character: str | None) -> _Stored:
        """The stored values that concern ``character``, read once."""
        own = self._store.all(scope=character_scope(character)) if character else {}
        return _Stored(self._store.all(), own)

    def _model_values(self, overrides: Overrides, character: str | None) -> ModelValues:
        return ModelValues(
            flags={k: v for k, v in (overrides or {}).items() if v is not None},
            env=self._env,
            character=self._store.all(scope=character_scope(character)) if character else {},
            workspace=self._store.all(),
            provider=lambda name: self._store.all(scope=provider_scope(name)),
        )
