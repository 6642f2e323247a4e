"""The settings of memory books (`books.*`), and the typed value the book services read."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from charmemory.core.books.presets import MAX_PREVIOUS
from charmemory.core.books.progress import (
    AUTO_HIDE_MODES,
    DEFAULT_BUFFER,
    DEFAULT_INTERVAL,
    MAX_BUFFER,
    MAX_INTERVAL,
    MIN_INTERVAL,
    AutoHide,
)
from charmemory.core.settings.spec import Setting

LorebookMode = Literal["automatic", "auto-create", "manual"]
LOREBOOK_MODES: tuple[LorebookMode, ...] = ("automatic", "auto-create", "manual")
DEFAULT_NAME_TEMPLATE = "LTM - {{char}} - {{chat}}"


@dataclass(frozen=True)
class BookSettings:
    lorebook_mode: LorebookMode = "automatic"
    name_template: str = DEFAULT_NAME_TEMPLATE
    allow_overlap: bool = False
    include_hidden: bool = False
    preview: bool = True
    auto_hide: AutoHide = "none"
    keep_unhidden: int = 2
    auto_enabled: bool = False
    auto_interval: int = DEFAULT_INTERVAL
    auto_buffer: int = DEFAULT_BUFFER
    previous_memories: int = 0
    copy_on_branch: bool = True

    @classmethod
    def from_values(cls, values: Mapping[str, Any]) -> BookSettings:
        return cls(**{name: values[f"books.{name}"] for name in cls.__dataclass_fields__})


_DEFAULTS = BookSettings()


def _setting(name: str, kind: Any, help: str, **rules: Any) -> Setting:
    return Setting(f"books.{name}", kind, getattr(_DEFAULTS, name), help, **rules)


SETTINGS: tuple[Setting, ...] = (
    _setting(
        "lorebook_mode",
        "choice",
        "Where scene memories go: the chat's bound book, a new book, or a chosen one",
        choices=LOREBOOK_MODES,
    ),
    _setting(
        "name_template", "text", "Name of an auto-created book ({{char}}, {{chat}}, {{user}})"
    ),
    _setting("allow_overlap", "bool", "Allow a scene overlapping a memory already in the book"),
    _setting("include_hidden", "bool", "Read hidden messages into scene memories"),
    _setting("preview", "bool", "Show a scene memory for approval before saving it"),
    _setting(
        "auto_hide",
        "choice",
        "Hide summarised messages: all up to the scene's end, the scene only, or none",
        choices=AUTO_HIDE_MODES,
    ),
    _setting("keep_unhidden", "int", "Newest summarised messages left visible", low=0, high=50),
    _setting("auto_enabled", "bool", "Write scene memories automatically while chatting"),
    _setting(
        "auto_interval",
        "int",
        "Messages between automatic scene memories",
        low=MIN_INTERVAL,
        high=MAX_INTERVAL,
    ),
    _setting(
        "auto_buffer", "int", "Newest messages automatic memories leave out", low=0, high=MAX_BUFFER
    ),
    _setting(
        "previous_memories",
        "int",
        "Previous memories of the book shown to the model as context",
        low=0,
        high=MAX_PREVIOUS,
    ),
    _setting("copy_on_branch", "bool", "Copy a chat's memory books when it is branched"),
)
