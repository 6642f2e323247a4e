"""Profiles: named ways of writing scene memories (model, preset, entry settings, title).

A profile's connection is a provider with a model and a temperature, or none:
then the chat's own model writes the memory. Its preset is one of ours (whose
text a workspace may replace). With separate prompts on, a multi-book memory
is written twice over: the group preset gives the canonical entry and the
character preset each participant's copy. One profile is the default; a
workspace without profiles has `Default`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from charmemory.core.books.entry import EntrySettings
from charmemory.core.books.presets import CHARACTER, GROUP, SUMMARY, check_preset
from charmemory.core.books.titles import DEFAULT_TITLE_FORMAT
from charmemory.errors import ConfigError

DEFAULT_NAME = "Default"


@dataclass(frozen=True)
class Connection:
    provider: str
    model: str = ""
    temperature: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"provider": self.provider, "model": self.model, "temperature": self.temperature}


@dataclass(frozen=True)
class Profile:
    name: str
    preset: str = SUMMARY
    title_format: str = DEFAULT_TITLE_FORMAT
    entry: EntrySettings = field(default_factory=EntrySettings)
    connection: Connection | None = None  # None: the chat's own model
    separate_prompts: bool = False
    group_preset: str = GROUP
    character_preset: str = CHARACTER

    def __post_init__(self) -> None:
        if not self.name.strip():
            raise ConfigError("a profile needs a name")
        for preset in (self.preset, self.group_preset, self.character_preset):
            check_preset(preset)
        if not self.title_format.strip():
            raise ConfigError("a profile's title format cannot be empty")

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "preset": self.preset,
            "titleFormat": self.title_format,
            **self.entry.to_dict(),
            "connection": None if self.connection is None else self.connection.to_dict(),
            "useGroupSpecificPrompts": self.separate_prompts,
            "groupPreset": self.group_preset,
            "characterPreset": self.character_preset,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Profile:
        connection = data.get("connection")
        return cls(
            name=str(data.get("name") or ""),
            preset=str(data.get("preset") or SUMMARY),
            title_format=str(data.get("titleFormat") or DEFAULT_TITLE_FORMAT),
            entry=EntrySettings.from_dict(data),
            connection=(
                Connection(
                    str(connection.get("provider") or ""),
                    str(connection.get("model") or ""),
                    connection.get("temperature"),
                )
                if isinstance(connection, dict) and connection.get("provider")
                else None
            ),
            separate_prompts=bool(data.get("useGroupSpecificPrompts", False)),
            group_preset=str(data.get("groupPreset") or GROUP),
            character_preset=str(data.get("characterPreset") or CHARACTER),
        )


DEFAULT_PROFILE = Profile(DEFAULT_NAME)
