"""Settings, API keys, prompts, consolidation previews and the activity log."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

if TYPE_CHECKING:
    from charmemory.core.consolidation_diff import ConsolidationDiff, ConsolidationPreview


@runtime_checkable
class SettingsRepository(Protocol):
    """Stored setting values by scope (`""` the workspace, `character:X`, `provider:X`)."""

    def get(self, key: str, default: Any = None, *, scope: str = "") -> Any: ...

    def set(self, key: str, value: Any, *, scope: str = "") -> None: ...

    def delete(self, key: str, *, scope: str = "") -> None: ...

    def all(self, *, scope: str = "") -> dict[str, Any]: ...


class KeyLookup(Protocol):
    """A provider's API key, if any, and where it came from (`env`, `secrets file`)."""

    @property
    def value(self) -> str | None: ...

    @property
    def source(self) -> str | None: ...


@runtime_checkable
class ApiKeyStore(Protocol):
    """API keys: never settings, never shown back, scrubbed from everything logged."""

    def lookup(self, provider: str) -> KeyLookup: ...

    def store(self, provider: str, key: str) -> None: ...

    def remove(self, provider: str) -> bool: ...

    def redact(self, text: str) -> str:
        """`text` without any key known (stored or in the environment) or shaped like one."""
        ...


@runtime_checkable
class PromptStore(Protocol):
    """Prompts a person replaced, by name (`extraction`, `consolidation.balanced` ...)."""

    def get(self, name: str) -> str | None: ...

    def set(self, name: str, text: str) -> None: ...

    def delete(self, name: str) -> None: ...


@runtime_checkable
class PreviewRepository(Protocol):
    def add(
        self,
        *,
        character: str,
        file: str,
        digest: str | None,
        strategy: str,
        blocks: Sequence[int],
        diff: ConsolidationDiff,
        result: str,
        warnings: Sequence[str],
        calls: int,
    ) -> ConsolidationPreview: ...

    def get(self, preview_id: int) -> ConsolidationPreview: ...

    def mark_applied(self, preview_id: int) -> None: ...


Level = Literal["info", "warning", "error"]


@dataclass(frozen=True)
class ActivityEntry:
    id: int
    at: str
    level: Level
    kind: str
    character: str | None
    chat: str | None
    message: str
    data: dict[str, Any] | None


@runtime_checkable
class ActivityRecorder(Protocol):
    """The activity log: secrets are scrubbed from everything before it is kept."""

    def record(
        self,
        kind: str,
        message: str,
        *,
        level: Level = "info",
        character: str | None = None,
        chat: str | None = None,
        data: dict[str, Any] | None = None,
    ) -> int: ...

    def entries(
        self, *, character: str | None = None, after_id: int = 0, limit: int = 200
    ) -> list[ActivityEntry]: ...
