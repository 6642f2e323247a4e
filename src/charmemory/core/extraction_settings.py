"""The settings of memory extraction: declared once (`SETTINGS`), read as one typed value.

Values live in the settings registry under `extraction.<name>`, for the workspace
and per character (a character's value wins). The file name override names one
character's file, so it can only be set per character.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from charmemory.core.naming import checked_file_name
from charmemory.core.providers import preset_named
from charmemory.core.settings.spec import Setting, checked
from charmemory.errors import CharMemoryError, ResponseBudgetError, UnsafePathError

GROUP = "extraction"


def _file_name(value: str) -> str:
    try:
        return checked_file_name(value)
    except UnsafePathError as error:
        raise ValueError(str(error)) from None


def _count(name: str, default: int, help: str, low: int, high: int) -> Setting:
    return Setting(f"{GROUP}.{name}", "int", default, help, low, high)


def _switch(name: str, default: bool, help: str) -> Setting:
    return Setting(f"{GROUP}.{name}", "bool", default, help)


SETTINGS: tuple[Setting, ...] = (
    _count("interval", 20, "Extract after every N character messages", 3, 100),
    _count("cooldown_minutes", 10, "Minimum wait between extractions (minutes)", 0, 30),
    _count("messages_per_call", 20, "Messages per LLM call", 10, 200),
    _count("max_response_tokens", 1000, "Max response length (tokens)", 100, 4000),
    _switch(
        "merge_chunks",
        False,
        "Add a chat's new memories to its last block (within max_bullets), as one block per chat",
    ),
    _switch("per_chat", False, "Separate memories per chat"),
    Setting(
        f"{GROUP}.file_name_override",
        "text",
        None,
        "File name override",
        scopes=frozenset({"character"}),
        check=_file_name,
        blank_is_unset=True,
    ),
    _switch("auto_extract", True, "Automatic extraction"),
    _count("max_bullets", 8, "Maximum bullets per block", 1, 30),
    _count(
        "max_bullet_chars",
        1000,
        "Maximum length of one memory (characters); a model's longer bullet is cut",
        100,
        20000,
    ),
    _count("existing_memories_budget", 1500, "Existing memories in the prompt (tokens)", 0, 16000),
    _switch("verbose_log", False, "Verbose activity log"),
    Setting(
        f"{GROUP}.source",
        "choice",
        "main",
        "Which LLM extracts: the chat's own (main), a dedicated one, or the local model",
        choices=("main", "dedicated", "local"),
    ),
    Setting(
        f"{GROUP}.dedicated_provider",
        "text",
        None,
        "The dedicated extraction LLM's provider (with source dedicated)",
        check=lambda name: preset_named(name.strip()).name,
        blank_is_unset=True,
    ),
    Setting(
        f"{GROUP}.dedicated_model",
        "text",
        None,
        "The dedicated extraction LLM's model id",
        check=str.strip,
        blank_is_unset=True,
    ),
)
_BY_SHORT = {setting.short: setting for setting in SETTINGS}


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
    max_bullet_chars: int = 1000
    existing_memories_budget: int = 1500
    verbose_log: bool = False
    source: str = "main"
    dedicated_provider: str | None = None
    dedicated_model: str | None = None

    def __post_init__(self) -> None:
        for item in fields(self):
            setting = _BY_SHORT[item.name]
            value = checked(setting, getattr(self, item.name))
            if value is None and setting.default is not None:
                value = setting.default
            # Frozen: the checked form (a trimmed override) replaces what was given.
            object.__setattr__(self, item.name, value)

    @classmethod
    def from_values(cls, values: Mapping[str, Any]) -> ExtractionSettings:
        """From values by full name (`extraction.interval`); other names are left alone."""
        return cls(**{s.short: values[s.name] for s in SETTINGS if values.get(s.name) is not None})


def response_budget_hint(current: int) -> str:
    """What to change when answers run out of room: the setting, its value, a next value."""
    setting = _BY_SHORT["max_response_tokens"]
    high = int(setting.high or current)
    if current >= high:
        return (
            f"{setting.name} is already {current}, its maximum: turn the model's reasoning "
            "down (model.extra_params) or choose a model that reasons less"
        )
    suggested = min(high, max(2 * current, 2000))
    return (
        f"{setting.name} is {current}: raise it, e.g. "
        f"`charmemory settings set {setting.name} {suggested}`"
    )


def explain_budget(error: CharMemoryError, current: int) -> CharMemoryError:
    """`error`, naming the setting to change when the response budget ran out."""
    if isinstance(error, ResponseBudgetError):
        return ResponseBudgetError(f"{error}; {response_budget_hint(current)}")
    return error
