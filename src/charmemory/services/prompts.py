"""The prompts people can replace: extraction's, consolidation's for each strategy, and each
scene preset of memory books (the second argument names the strategy or the preset)."""

from __future__ import annotations

from typing import Literal

from charmemory.core.books.presets import PRESETS, check_preset
from charmemory.core.consolidation_prompt import CONSERVATIVE, DEFAULT_PROMPTS, check_strategy
from charmemory.core.extraction_prompt import DEFAULT_EXTRACTION_PROMPT, check_template
from charmemory.errors import ConfigError
from charmemory.ports import PromptStore

PromptKind = Literal["extraction", "consolidation", "scene"]
KINDS: tuple[PromptKind, ...] = ("extraction", "consolidation", "scene")


class PromptService:
    def __init__(self, store: PromptStore):
        self._store = store

    def text(self, kind: PromptKind, strategy: str = CONSERVATIVE) -> str:
        """The prompt in force: the one the workspace keeps, else the built-in one."""
        return self._store.get(_name(kind, strategy)) or self.default(kind, strategy)

    def default(self, kind: PromptKind, strategy: str = CONSERVATIVE) -> str:
        if kind == "extraction":
            return DEFAULT_EXTRACTION_PROMPT
        if kind == "scene":
            return PRESETS[check_preset(strategy)]
        return DEFAULT_PROMPTS[check_strategy(strategy)]

    def is_default(self, kind: PromptKind, strategy: str = CONSERVATIVE) -> bool:
        return self._store.get(_name(kind, strategy)) is None

    def replace(self, kind: PromptKind, text: str, strategy: str = CONSERVATIVE) -> list[str]:
        """Keep ``text`` as the prompt; returns warnings about placeholders it lacks."""
        if not text.strip():
            raise ConfigError(f"a {kind} prompt cannot be empty")
        warnings = check_template(text) if kind == "extraction" else []
        self._store.set(_name(kind, strategy), text)
        return warnings

    def reset(self, kind: PromptKind, strategy: str = CONSERVATIVE) -> None:
        self._store.delete(_name(kind, strategy))


def _name(kind: PromptKind, strategy: str) -> str:
    if kind == "extraction":
        return "extraction"
    if kind == "consolidation":
        return f"consolidation.{check_strategy(strategy)}"
    if kind == "scene":
        return f"scene.{check_preset(strategy)}"
    raise ConfigError(f"unknown prompt {kind!r}; prompts: {', '.join(KINDS)}")
