"""What the core and services need from the outside world.

Adapters implement these Protocols; services receive them through their
constructors. Nothing here does IO.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Literal, Protocol, runtime_checkable

from charmemory.core.consolidation_diff import ConsolidationDiff, ConsolidationPreview
from charmemory.core.memory_history import Version
from charmemory.formats.card import Card
from charmemory.formats.chat import Chat
from charmemory.formats.memory_file import MemoryFile

Role = Literal["system", "user", "assistant"]


@dataclass(frozen=True)
class ChatMessage:
    role: Role
    content: str


@dataclass(frozen=True)
class Usage:
    prompt_tokens: int | None = None
    completion_tokens: int | None = None


@dataclass(frozen=True)
class Completion:
    """A finished answer: the text, kept apart from any reasoning the model did."""

    text: str
    reasoning: str = ""
    finish_reason: str | None = None
    usage: Usage = field(default_factory=Usage)
    model: str = ""


@dataclass(frozen=True)
class StreamDelta:
    text: str = ""
    reasoning: str = ""
    finish_reason: str | None = None
    usage: Usage | None = None


@dataclass(frozen=True)
class ModelInfo:
    id: str
    owner: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


# ---- Answer formats -------------------------------------------------------------
# What a caller needs the answer to be, said to the model in so many words: an adapter
# never guesses it from the prompt's wording. Each adapter honours a format (a grammar,
# an API's structured output) or ignores it explicitly, leaving it to the prompt.


@dataclass(frozen=True)
class FreeText:
    """Any text: nothing holds the answer to a shape."""


@dataclass(frozen=True)
class NewMemories:
    """What extraction reads: one `<memory>` block of at most `max_bullets` one-line
    `- ` bullets, or NO_NEW_MEMORIES when the chat holds nothing new.

    `character` is whose memories they are and `user` whom the chat is with; a model
    that restates the request in its own words uses them to say who is who.
    """

    max_bullets: int
    character: str = ""
    user: str = ""


@dataclass(frozen=True)
class ConsolidatedMemories:
    """What consolidation reads: `<memory sources="1,3">` blocks of one-line `- `
    bullets, each naming the blocks sent (numbered 1 to `blocks_sent`) it draws on."""

    blocks_sent: int


@dataclass(frozen=True)
class JsonAnswer:
    """One JSON value that follows `schema`; `name` is the schema's name where an API
    asks for one."""

    name: str
    schema: dict[str, Any]


AnswerFormat = FreeText | NewMemories | ConsolidatedMemories | JsonAnswer
FREE_TEXT = FreeText()


@runtime_checkable
class ChatModel(Protocol):
    """One configured LLM: a provider plus a model name."""

    provider: str
    model: str

    async def complete(
        self,
        messages: Sequence[ChatMessage],
        *,
        max_tokens: int,
        temperature: float,
        stop: Sequence[str] | None = None,
        answer_format: AnswerFormat = FREE_TEXT,
    ) -> Completion: ...

    def stream(
        self,
        messages: Sequence[ChatMessage],
        *,
        max_tokens: int,
        temperature: float,
        stop: Sequence[str] | None = None,
        answer_format: AnswerFormat = FREE_TEXT,
    ) -> AsyncIterator[StreamDelta]: ...

    async def list_models(self) -> list[ModelInfo]: ...


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into unit-length float32 vectors (rows of a 2-D array)."""

    model_name: str
    dimensions: int

    async def embed(self, texts: Sequence[str]) -> Any:  # numpy.ndarray[float32], (n, dims)
        ...


# ---- Retrieval ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class IndexItem:
    """One searchable unit: the text that is embedded and matched, plus what comes back."""

    text: str
    payload: dict[str, Any] = field(default_factory=dict)  # JSON-serialisable


@dataclass(frozen=True)
class IndexHit:
    """A candidate from one collection with both signals' scores and ranks (1-based)."""

    key: str
    text: str
    payload: dict[str, Any]
    cosine: float
    vector_rank: int
    bm25: float | None = None  # higher is better; None when no query word matched
    bm25_rank: int | None = None


@dataclass(frozen=True)
class SyncReport:
    """What keeping a collection in sync did."""

    added: int
    removed: int
    kept: int
    embedded: int
    model: str
    reembedded_all: bool = False


@dataclass(frozen=True)
class IndexStats:
    collection: str
    model: str
    dimensions: int
    items: int
    updated_at: str


@dataclass(frozen=True)
class RetrievalRecord:
    """One retrieval as it happened, kept for diagnostics."""

    id: int
    at: str
    collection: str
    query: str
    settings: dict[str, Any]
    candidates: list[dict[str, Any]]
    injected: str


class SyncProgress(Protocol):
    def __call__(self, embedded: int, total: int) -> None: ...


@runtime_checkable
class RetrievalIndex(Protocol):
    """Hybrid lexical + vector index over named collections of items."""

    async def sync(
        self,
        collection: str,
        items: Sequence[IndexItem],
        *,
        on_progress: SyncProgress | None = None,
        reembed: bool = False,
    ) -> SyncReport:
        """Make the collection hold exactly ``items``, embedding only new texts.

        With ``reembed`` every item is embedded again and its stored vector replaced.
        """
        ...

    async def plan_sync(self, collection: str, items: Sequence[IndexItem]) -> SyncReport:
        """What `sync` would do now, without embedding or changing anything."""
        ...

    async def purge(self, collection: str) -> int: ...

    async def search(
        self, collection: str, query_text: str, query_vector: Any, k: int
    ) -> list[IndexHit]:
        """The top ``k`` by BM25 and the top ``k`` by cosine, merged."""
        ...

    async def stats(self, collection: str) -> IndexStats | None: ...

    async def collections(self) -> list[str]: ...


@runtime_checkable
class RetrievalLog(Protocol):
    async def record(
        self,
        collection: str,
        query: str,
        settings: dict[str, Any],
        candidates: list[dict[str, Any]],
        injected: str,
    ) -> int: ...

    async def last(self, collection: str) -> RetrievalRecord | None: ...


# ---- The workspace's files -----------------------------------------------------


@dataclass(frozen=True)
class FileVersion:
    """What a file held when it was read; `digest` is None when it did not exist."""

    path: Path
    digest: str | None


@dataclass(frozen=True)
class Character:
    name: str
    stem: str  # card file name without its extension; also the chat folder's name
    card_path: Path
    card: Card


@dataclass(frozen=True)
class ChatRef:
    character: Character
    id: str  # the chat file name without `.jsonl`, as SillyTavern names chats
    path: Path


@dataclass(frozen=True)
class LoadedChat:
    ref: ChatRef
    chat: Chat
    version: FileVersion


@dataclass(frozen=True)
class LatestChatRef:
    """The chat taken as a character's latest, and why (shown when a command picks it)."""

    ref: ChatRef
    reason: str


@dataclass(frozen=True)
class ChatStamp:
    """A chat file seen from outside (size and modification time): when it changes,
    the chat changed. Reading it costs no parsing."""

    size: int
    modified_ns: int


ImportKind = Literal["card", "chat", "lorebook", "memory file"]


@dataclass(frozen=True)
class Imported:
    kind: ImportKind
    source: Path
    target: Path
    unchanged: bool  # the same bytes were already there
    note: str = ""  # how the import decided something the file did not say


@runtime_checkable
class CharacterLibrary(Protocol):
    """The characters and chats of a workspace."""

    def characters(self) -> list[Character]: ...

    def unreadable_cards(self) -> list[tuple[Path, str]]: ...

    def character(self, name: str) -> Character: ...

    def chats(self, character: Character) -> list[ChatRef]:
        """The character's chats, oldest first."""
        ...

    def chat(self, character: Character, chat_id: str | None = None) -> ChatRef:
        """A chat by id; None: the latest."""
        ...

    def latest_chat(self, character: Character) -> LatestChatRef | None:
        """The chat SillyTavern would open for the character (None: it has none)."""
        ...

    def load_chat(self, ref: ChatRef) -> LoadedChat: ...

    def chat_stamps(self, character: Character) -> dict[str, ChatStamp]:
        """Each of the character's chat files by chat id, as `ChatStamp`, none read."""
        ...

    def import_file(self, source: Path, *, character: str | None = None) -> Imported: ...


@dataclass(frozen=True)
class LoadedMemories:
    """A memory file as read; `file` is its workspace-relative path."""

    file: str
    memories: MemoryFile
    version: FileVersion
    # The layout found on disk when it was not blocks (the file was migrated in
    # memory; saving it writes the migrated form).
    migrated_from: str | None = None
    size: int = 0  # bytes on disk

    @property
    def exists(self) -> bool:
        return self.version.digest is not None


@runtime_checkable
class MemoryFileStore(Protocol):
    """Memory files, addressed by workspace-relative path; every change is versioned."""

    def load(self, file: str) -> LoadedMemories: ...

    def save(
        self,
        loaded: LoadedMemories,
        new: MemoryFile,
        *,
        cause: str | None = None,
        detail: str = "",
    ) -> LoadedMemories: ...

    def delete(self, loaded: LoadedMemories, *, cause: str, detail: str = "") -> None: ...

    def restore(self, loaded: LoadedMemories, number: int) -> Version | None: ...

    def versions(self, file: str) -> list[Version]: ...

    def latest_version(self, file: str) -> Version | None: ...

    def version_bytes(self, file: str, number: int) -> bytes | None: ...

    def require_writable(self, what: str) -> None: ...


# ---- Extraction state -----------------------------------------------------------


@dataclass(frozen=True)
class ChatState:
    character: str
    chat: str
    watermark: int = -1
    last_run_at: datetime | None = None


@dataclass(frozen=True)
class PendingAppend:
    id: int
    character: str
    chat: str
    file: str
    block: str
    first_idx: int
    last_idx: int
    fingerprints: dict[int, str]


ExtractionSnapshot = dict[str, dict[str, object]]


@runtime_checkable
class ExtractionStateStore(Protocol):
    """Where each chat's extraction stands, with the journal of appends in flight."""

    def exclusive(self, character: str, chat: str) -> AbstractContextManager[None]:
        """Held while one process extracts from a chat."""
        ...

    def chat(self, character: str, chat: str) -> ChatState: ...

    def fingerprints(self, character: str, chat: str) -> dict[int, str]: ...

    def begin_append(
        self,
        character: str,
        chat: str,
        *,
        file: str,
        block: str,
        first_idx: int,
        last_idx: int,
        fingerprints: dict[int, str],
        now: datetime,
    ) -> PendingAppend: ...

    def commit_append(self, pending: PendingAppend, *, now: datetime) -> None: ...

    def abandon_append(self, pending: PendingAppend) -> None: ...

    def pending(self, character: str | None = None) -> list[PendingAppend]: ...

    def replace_watermark(
        self, character: str, chat: str, last_index: int, fingerprints: dict[int, str]
    ) -> None: ...

    def mark_attempt(self, character: str, chat: str, at: datetime) -> None: ...

    def reset(self, character: str, chats: Iterable[str] | None = None) -> None: ...

    def snapshot(self, character: str) -> ExtractionSnapshot: ...

    def restore(self, character: str, snapshot: ExtractionSnapshot) -> None: ...

    def keep_cleared(self, character: str, snapshot: ExtractionSnapshot) -> None:
        """Keep what a clear reset, so undoing the clear can bring it back."""
        ...

    def take_cleared(self, character: str) -> ExtractionSnapshot | None:
        """What the last clear reset (forgotten once taken); None when nothing is kept."""
        ...


# ---- Settings, API keys, prompts, previews, the activity log -----------------------


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
