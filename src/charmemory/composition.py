"""Builds the real object graph for a workspace: the one place adapters meet services.

`App` holds one workspace's graph and builds each part on first use, so a
command that edits one memory never builds the LLM provider or the extraction
service, and a dry run never loads a model. The CLI (and later the HTTP API)
only ever talk to an `App`.
"""

from __future__ import annotations

import gc
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from charmemory.errors import CharMemoryError, ConfigError

# Each part's modules are imported where the part is built, so a command pays only
# for what it uses (docs/architecture.md, "Start-up"); these names are for the hints.
if TYPE_CHECKING:
    import asyncio

    from charmemory.adapters.activity_log import ActivityLog
    from charmemory.adapters.books.files import BookFiles
    from charmemory.adapters.extraction_state import ExtractionState
    from charmemory.adapters.generation_log import SqliteGenerationLog
    from charmemory.adapters.library import Library
    from charmemory.adapters.lorebooks import Lorebooks
    from charmemory.adapters.memory_files import MemoryFiles
    from charmemory.adapters.model_install import ModelSpec
    from charmemory.adapters.secrets import ApiKeys
    from charmemory.adapters.server_token import ServerTokenFile
    from charmemory.adapters.workspace import Workspace
    from charmemory.core.model_settings import ModelSettings
    from charmemory.ports import ChatModel, ChatRef, CompletionRelay, Embedder, TokenCounter
    from charmemory.services.book_branching import BookBranching
    from charmemory.services.book_consolidation import BookConsolidation
    from charmemory.services.book_entries import BookEntries
    from charmemory.services.book_profiles import ProfileService
    from charmemory.services.books import BookService
    from charmemory.services.chat import ChatService
    from charmemory.services.chat_commands import ChatCommands
    from charmemory.services.chat_watch import ChatWatcher
    from charmemory.services.consolidation import ConsolidationService
    from charmemory.services.extraction import ExtractionService
    from charmemory.services.extraction_admin import ExtractionAdmin
    from charmemory.services.group_chat import GroupChatService
    from charmemory.services.lorebook_editing import LorebookEditor
    from charmemory.services.memory_access import MemoryFileAccess, MemoryLocator
    from charmemory.services.memory_endpoint import MemoryEndpoint
    from charmemory.services.memory_history import MemoryHistoryService
    from charmemory.services.memory_manager import MemoryManager
    from charmemory.services.memory_search import MemorySearch
    from charmemory.services.narrator import NarratorService
    from charmemory.services.narrator_doctor import NarratorDoctor
    from charmemory.services.prompting import PromptPreparer
    from charmemory.services.prompts import PromptService
    from charmemory.services.providers import ProviderService
    from charmemory.services.repair import RepairService
    from charmemory.services.retrieval import RetrievalService
    from charmemory.services.scene_markers import SceneMarking
    from charmemory.services.scene_writer import EntryWriter
    from charmemory.services.scenes import SceneService
    from charmemory.services.settings import SettingsService

EMBEDDER_URLS = {"openai": "https://api.openai.com/v1", "ollama": "http://127.0.0.1:11434"}


class App:
    """One workspace's services, each built on first use.

    Tests replace the outside world's parts: ``chat_model`` (the LLM every service
    uses), ``embedder``, ``clock``, and whether extraction consults the index
    (``index_for_extraction``; by default, when the embedding model is installed).
    """

    def __init__(
        self,
        workspace: Workspace,
        *,
        env: Mapping[str, str] | None = None,
        model_overrides: Mapping[str, Any] | None = None,
        chat_model: Callable[[], ChatModel] | None = None,
        embedder: Embedder | None = None,
        clock: Callable[[], datetime] | None = None,
        index_for_extraction: bool | None = None,
    ):
        self.workspace = workspace
        self._env = os.environ if env is None else env
        self._overrides = {k: v for k, v in (model_overrides or {}).items() if v is not None}
        self._chat_model = chat_model
        self._embedder = embedder
        self._clock = clock or (lambda: datetime.now(UTC))
        self._index_for_extraction = index_for_extraction
        self._freeze_after_reply = False

    @property
    def root(self) -> Path:
        return self.workspace.root

    def close(self) -> None:
        self.workspace.close()

    def freeze_after_first_reply(self) -> None:
        """Freeze the long-lived objects again once the next reply has been made.

        A reply loads what then stays for good (the embedding and tokenizer models,
        the index, the lorebooks); a command that keeps running freezes them too, so
        later collections need not walk them. Once only: later replies load nothing new.
        """
        self._freeze_after_reply = True

    def _replied(self) -> None:
        """A reply was made (in a chat, or through the memory endpoint)."""
        if self._freeze_after_reply:
            self._freeze_after_reply = False
            freeze_long_lived_objects()

    async def _after_reply(self, ref: ChatRef, lock: asyncio.Lock) -> object:
        self._replied()
        return await self.scenes.after_reply(ref, lock)

    def redact(self, text: str) -> str:
        """`text` without any API key this workspace knows, or anything shaped like one."""
        try:
            return self.keys.redact(text)
        except (CharMemoryError, OSError):  # a damaged secrets file: the environment's key
            return redact_without_workspace(text, self._env)

    # -- repositories -------------------------------------------------------------------

    @cached_property
    def keys(self) -> ApiKeys:
        from charmemory.adapters.secrets import SECRETS_FILE_NAME, ApiKeys, SecretsFile

        ws = self.workspace
        return ApiKeys(SecretsFile(ws.state_dir / SECRETS_FILE_NAME, ws.locks), self._env)

    @cached_property
    def server_token(self) -> ServerTokenFile:
        """The access token `serve --new-token` generated, if any."""
        from charmemory.adapters.server_token import TOKEN_FILE_NAME, ServerTokenFile

        return ServerTokenFile(self.workspace.state_dir / TOKEN_FILE_NAME)

    @cached_property
    def activity(self) -> ActivityLog:
        from charmemory.adapters.activity_log import ActivityLog

        return ActivityLog(self.workspace.db, redact=self.keys.redact)

    @cached_property
    def library(self) -> Library:
        from charmemory.adapters.library import Library

        return Library(self.workspace)

    @cached_property
    def _memory_files(self) -> MemoryFiles:
        from charmemory.adapters.memory_files import MemoryFiles

        return MemoryFiles(self.workspace)

    @cached_property
    def _extraction_state(self) -> ExtractionState:
        from charmemory.adapters.extraction_state import ExtractionState

        ws = self.workspace
        return ExtractionState(ws.db, ws.locks, ws.state_dir)

    # -- services -------------------------------------------------------------------------

    @cached_property
    def settings(self) -> SettingsService:
        from charmemory.adapters.settings_store import SettingsStore
        from charmemory.services.settings import SettingsService

        service = SettingsService(
            SettingsStore(self.workspace.db),
            self.library,
            self._env,
            default_provider=_embedded_if_installed,
        )
        service.add_guard(self._guard_setting)
        return service

    def _guard_setting(self, name: str, value: Any, character: str | None) -> None:
        from charmemory.services.narrator import LOREBOOK_MODE

        if name == LOREBOOK_MODE:  # manual mode stays on under a narrator chat
            self.narrator.guard_lorebook_mode(value, character)

    @cached_property
    def prompts(self) -> PromptService:
        from charmemory.adapters.prompt_store import PromptStore
        from charmemory.services.prompts import PromptService

        return PromptService(PromptStore(self.workspace.db))

    @cached_property
    def providers(self) -> ProviderService:
        from charmemory.adapters.llm.factory import build_chat_model
        from charmemory.services.providers import ProviderService

        def build(settings: ModelSettings, api_key: str | None) -> ChatModel:
            return build_chat_model(settings, api_key, redact=self.keys.redact)

        return ProviderService(self.settings, self.keys, self.activity, build)

    @cached_property
    def retrieval(self) -> RetrievalService:
        """Retrieval over the workspace index with the embedder `retrieval.embedder` names."""
        from charmemory.adapters.model_install import MULTILINGUAL_E5_SMALL_Q4
        from charmemory.adapters.retrieval_log import SqliteRetrievalLog
        from charmemory.adapters.sqlite_index import SqliteIndex
        from charmemory.services.retrieval import RetrievalService

        embedder = self._embedder or self._configured_embedder()
        local = self._embedder is None and self.settings.value("retrieval.embedder") == "local"
        return RetrievalService(
            SqliteIndex(self.workspace.db, embedder),
            embedder,
            SqliteRetrievalLog(self.workspace.db, redact=self.keys.redact),
            self.settings.retrieval,
            multilingual=_EmbedderOnFirstUse(multilingual=True) if local else None,
            multilingual_by_default=local and model_installed(MULTILINGUAL_E5_SMALL_Q4),
        )

    def _configured_embedder(self) -> Embedder:
        """The local model (loaded on first embedding) or an embedding server."""
        from charmemory.adapters.embed_http import OllamaEmbedder, OpenAIEmbedder

        kind = self.settings.value("retrieval.embedder")
        if kind == "local":
            return _EmbedderOnFirstUse()
        model = self.settings.value("retrieval.embedder_model")
        if not model:
            raise ConfigError(
                f"retrieval.embedder is {kind}, which needs a model: "
                "`charmemory settings set retrieval.embedder_model NAME`"
            )
        url = self.settings.value("retrieval.embedder_url") or EMBEDDER_URLS[kind]
        if kind == "ollama":
            return OllamaEmbedder(url, model)
        # An OpenAI-compatible server takes the key stored for the `openai` provider, if any.
        return OpenAIEmbedder(
            url, model, api_key=self.keys.lookup("openai").value, redact=self.keys.redact
        )

    @cached_property
    def locator(self) -> MemoryLocator:
        from charmemory.services.memory_access import MemoryLocator

        return MemoryLocator(self.library, self.settings)

    @cached_property
    def memory_access(self) -> MemoryFileAccess:
        """Memory files where the settings put them, followed by the retrieval index."""
        from charmemory.services.memory_access import MemoryFileAccess, index_follower

        return MemoryFileAccess(
            self.locator, self._memory_files, on_change=index_follower(lambda: self.retrieval)
        )

    @cached_property
    def memory_search(self) -> MemorySearch:
        from charmemory.services.memory_search import MemorySearch

        return MemorySearch(self.memory_access, self.retrieval)

    @cached_property
    def extraction(self) -> ExtractionService:
        """Extraction with the configured model (built on first use, so `--dry-run` needs none)."""
        from charmemory.services.extraction import ExtractionService

        return ExtractionService(
            self.memory_access,
            self._extraction_state,
            self.settings,
            self.prompts,
            model=self._extraction_model,
            log=self.activity,
            retrieval=lambda: self.retrieval if self._index_available() else None,
            clock=self._clock,
            redact=self.keys.redact,
            context_size=lambda character: int(
                self.settings.model_in_force(self._overrides, character)["context_size"].value
            ),
        )

    def _extraction_model(self, character: str) -> ChatModel:
        """The chat's model, a dedicated one or the local one, as `extraction.source` says."""
        from charmemory.core.providers import EMBEDDED

        if self._chat_model is not None:
            return self._chat_model()
        chosen = self.settings.extraction(character)
        source: dict[str, Any] = {}
        if chosen.source == "local":
            source = {"provider": EMBEDDED}
        elif chosen.source == "dedicated":
            if not chosen.dedicated_provider:
                raise ConfigError(
                    "extraction.source is dedicated but no extraction.dedicated_provider is set"
                )
            source = {"provider": chosen.dedicated_provider, "model": chosen.dedicated_model}
        return self.providers.chat_model({**source, **self._overrides}, character=character)

    def _index_available(self) -> bool:
        if self._index_for_extraction is None:
            return self._embedder is not None or embedding_model_installed()
        return self._index_for_extraction

    @cached_property
    def chat_watcher(self) -> ChatWatcher:
        from charmemory.services.chat_watch import ChatWatcher

        return ChatWatcher(self.library, self.extraction, self.activity)

    @cached_property
    def extraction_admin(self) -> ExtractionAdmin:
        from charmemory.services.extraction_admin import ExtractionAdmin

        return ExtractionAdmin(
            self.extraction, self.memory_access, self._extraction_state, log=self.activity
        )

    @cached_property
    def memories(self) -> MemoryManager:
        from charmemory.services.memory_manager import MemoryManager

        return MemoryManager(
            self.memory_access, self.settings, clock=self._clock, log=self.activity
        )

    @cached_property
    def history(self) -> MemoryHistoryService:
        from charmemory.services.memory_history import MemoryHistoryService

        return MemoryHistoryService(
            self.memory_access,
            after_undo=lambda restoration: self.extraction_admin.after_undo(restoration),
            log=self.activity,
        )

    @cached_property
    def _prompt_preparer(self) -> PromptPreparer:
        from charmemory.services.lore import LoreGatherer
        from charmemory.services.prompting import PromptPreparer

        retrieval = lambda: self.retrieval if self._index_available() else None  # noqa: E731
        return PromptPreparer(
            self.settings,
            self._memory_files,
            LoreGatherer(self._lorebooks, self.settings, retrieval),
            retrieval,
            self._token_counter,
            clock=self._clock,
        )

    @cached_property
    def _lorebooks(self) -> Lorebooks:
        from charmemory.adapters.lorebooks import Lorebooks

        return Lorebooks(self.workspace)

    @cached_property
    def lorebooks(self) -> LorebookEditor:
        from charmemory.services.lorebook_editing import LorebookEditor

        return LorebookEditor(self._lorebooks)

    @cached_property
    def _generation_log(self) -> SqliteGenerationLog:
        from charmemory.adapters.generation_log import SqliteGenerationLog

        return SqliteGenerationLog(self.workspace.db)

    @cached_property
    def chat(self) -> ChatService:
        """Chats with the character's model, its memories and its lorebooks."""
        from charmemory.services.chat import ChatService

        return ChatService(
            self.locator,
            self._prompt_preparer,
            self._generation_log,
            self.settings,
            self.extraction,
            self.activity,
            model_for=self._chat_model_for,
            clock=self._clock,
            after_reply=self._after_reply,
            after_branch=lambda parent, name: self.book_branching.after_branch(parent, name),
            narrator=self.narrator,
        )

    @cached_property
    def group_chat(self) -> GroupChatService:
        """Group chats: each member's turn is a chat turn with its own card and memories."""
        from charmemory.services.group_chat import GroupChatService

        return GroupChatService(
            self.library, self.chat, self._prompt_preparer, self.activity, clock=self._clock
        )

    @cached_property
    def memory_endpoint(self) -> MemoryEndpoint:
        """The OpenAI-compatible endpoint: a frontend's requests, recorded and remembered."""
        from charmemory.services.chat_recording import ChatRecorder
        from charmemory.services.memory_endpoint import MemoryEndpoint

        recorder = ChatRecorder(
            self.library, self.chat, self._prompt_preparer, self.activity, clock=self._clock
        )
        return MemoryEndpoint(
            self.library,
            self.locator,
            self.settings,
            self.chat,
            self._prompt_preparer,
            recorder,
            self._generation_log,
            self.activity,
            relay_for=self._relay_for,
            clock=self._clock,
            after_reply=self._replied,
        )

    def _relay_for(self, character: str | None) -> CompletionRelay:
        """The provider the memory endpoint forwards to (the character's, if it has one)."""
        from charmemory.adapters.llm.relay import ModelRelay, OpenAIRelay

        settings = self.settings.model(self._overrides, character, require_model=False)
        if self._chat_model is not None:
            return ModelRelay(self._chat_model(), settings)
        if settings.preset.dialect == "openai":
            return OpenAIRelay(settings, self.keys.lookup(settings.provider).value)
        return ModelRelay(self.providers.chat_model(self._overrides, character=character), settings)

    @cached_property
    def chat_commands(self) -> ChatCommands:
        from charmemory.services.chat_commands import ChatCommands

        return ChatCommands(self.chat, self.extraction, self.consolidation)

    def _chat_model_for(self, character: str) -> ChatModel:
        if self._chat_model is not None:
            return self._chat_model()
        return self.providers.chat_model(self._overrides, character=character)

    @cached_property
    def _counter(self) -> TokenCounter:
        from charmemory.adapters.llm.token_count import token_counter

        return token_counter()

    def _token_counter(self) -> TokenCounter:
        return self._counter

    @cached_property
    def repair(self) -> RepairService:
        """Rebuilds the state database; nothing that opens it is built before it is sound."""
        from charmemory.adapters.state_database import StateDatabaseFile
        from charmemory.services.repair import AfterRebuild, RepairService

        return RepairService(
            StateDatabaseFile(self.workspace),
            self.library,
            after_rebuild=lambda: AfterRebuild(
                self._memory_files, self._extraction_state, self.locator, self.activity
            ),
        )

    @cached_property
    def consolidation(self) -> ConsolidationService:
        """Consolidation with the configured model (built on the first call to it)."""
        from charmemory.adapters.consolidation_previews import PreviewStore
        from charmemory.services.consolidation import ConsolidationService

        return ConsolidationService(
            self.memory_access,
            PreviewStore(self.workspace.db),
            self.prompts,
            self.settings,
            model=self._chat_model or (lambda: self.providers.chat_model(self._overrides)),
            log=self.activity,
            redact=self.keys.redact,
        )

    # -- memory books ---------------------------------------------------------------------

    @cached_property
    def _book_files(self) -> BookFiles:
        from charmemory.adapters.books.files import BookFiles

        return BookFiles(self.workspace)

    @cached_property
    def books(self) -> BookService:
        """Memory books: listed, bound to chats, versioned; written all together or not at all."""
        from charmemory.adapters.books.transactions import BookTransactions
        from charmemory.services.books import BookService

        transactions = BookTransactions(
            self.workspace, self._book_files, self.library.load_chat, clock=self._clock
        )
        return BookService(
            self._book_files, transactions, self.library, self.settings, self.activity
        )

    @cached_property
    def book_profiles(self) -> ProfileService:
        from charmemory.adapters.books.profiles import ProfileStore
        from charmemory.services.book_profiles import ProfileService

        return ProfileService(ProfileStore(self.workspace.db))

    @cached_property
    def _entry_writer(self) -> EntryWriter:
        from charmemory.services.scene_writer import EntryWriter

        return EntryWriter(self.settings, self.prompts, self._book_model)

    def _book_model(self, character: str, overrides: Mapping[str, Any]) -> ChatModel:
        """A profile's model: its own connection, else the character's chat model."""
        if self._chat_model is not None:
            return self._chat_model()
        return self.providers.chat_model({**overrides, **self._overrides}, character=character)

    @cached_property
    def scenes(self) -> SceneService:
        from charmemory.services.scenes import SceneService

        return SceneService(
            self.books,
            self.book_profiles,
            self._entry_writer,
            self.activity,
            clock=self._clock,
            narrator=self.narrator,
        )

    @cached_property
    def narrator(self) -> NarratorService:
        """Narrator mode: a chat's declared cast, each member with a memory book."""
        from charmemory.services.narrator import NarratorService

        return NarratorService(self.books, self.settings, self.activity)

    @cached_property
    def narrator_doctor(self) -> NarratorDoctor:
        from charmemory.services.narrator_doctor import NarratorDoctor

        return NarratorDoctor(self.narrator, self.books, self._generation_log)

    @cached_property
    def scene_markers(self) -> SceneMarking:
        from charmemory.services.scene_markers import SceneMarking

        return SceneMarking(self.books)

    @cached_property
    def book_entries(self) -> BookEntries:
        from charmemory.services.book_entries import BookEntries

        return BookEntries(
            self.books, self.book_profiles, self._entry_writer, self.activity, clock=self._clock
        )

    @cached_property
    def book_consolidation(self) -> BookConsolidation:
        from charmemory.services.book_consolidation import BookConsolidation

        return BookConsolidation(self.books, self.book_profiles, self._entry_writer, self.activity)

    @cached_property
    def book_branching(self) -> BookBranching:
        from charmemory.services.book_branching import BookBranching

        return BookBranching(self.books, self.activity, clock=self._clock)


# -- what any command may need before (or without) a workspace --------------------------------


def redact_without_workspace(text: str, env: Mapping[str, str] | None = None) -> str:
    """`text` without the environment's API key or anything shaped like a key."""
    from charmemory.adapters.secrets import API_KEY_ENV
    from charmemory.core.redaction import Redactor

    return Redactor([(os.environ if env is None else env).get(API_KEY_ENV, "").strip()])(text)


def explain_failure(error: BaseException, app: App | None = None) -> CharMemoryError | None:
    """One line for what the filesystem or `app`'s database raised (None: a defect)."""
    from charmemory.adapters.failures import explained

    return explained(error, app.workspace.database_path if app is not None else None)


def read_text_file(path: Path) -> str:
    """A UTF-8 text file a person named, or one line on why it cannot be read."""
    from charmemory.adapters.input_files import read_input_text

    return read_input_text(path)


# -- opening workspaces ---------------------------------------------------------------------


def workspace_dir(explicit: str | os.PathLike[str] | None) -> Path:
    """`--workspace` wins over `CHARMEMORY_HOME`, which wins over the per-user default."""
    from charmemory.adapters.workspace import workspace_dir_from_env

    return workspace_dir_from_env(explicit)


def open_app(
    root: Path, *, allow_write: bool = False, model_overrides: Mapping[str, Any] | None = None
) -> App:
    from charmemory.adapters.workspace import Workspace

    return App(Workspace.open(root, allow_write=allow_write), model_overrides=model_overrides)


def create_app(root: Path, **options: Any) -> App:
    """Make (or complete) a workspace at `root` and open it (`options`: see `App`)."""
    from charmemory.adapters.workspace import Workspace

    return App(Workspace.create(root), **options)


def _embedded_if_installed() -> str | None:
    """The embedded provider where its model and runtime are installed."""
    from charmemory.adapters.llm.embedded import local_llm_ready
    from charmemory.core.providers import EMBEDDED

    return EMBEDDED if local_llm_ready() else None


def freeze_long_lived_objects() -> None:
    """Keep what a long-running command holds from startup out of garbage collection.

    The modules, classes and functions loaded at startup are tens of thousands of
    objects that live as long as the process. Every full collection walked them
    all (tens of milliseconds on a busy machine, once every dozen chat turns);
    frozen, a collection walks only what the work since allocated. Called by the
    commands that keep running (`chat`, `serve`) once their App is built, and again
    after the first reply (`App.freeze_after_first_reply`).
    """
    gc.collect()
    gc.freeze()


# -- the local model files ------------------------------------------------------------------


def embedding_model_installed() -> bool:
    """Whether the local embedding model is there (extraction then ranks related memories)."""
    from charmemory.adapters.model_install import MINILM_L6_V2_INT8

    return model_installed(MINILM_L6_V2_INT8)


def model_installed(spec: ModelSpec) -> bool:
    from charmemory.adapters.model_install import ModelNotInstalledError, load_installed

    try:
        load_installed(spec)
    except ModelNotInstalledError:
        return False
    return True


@dataclass(frozen=True)
class LocalModel:
    name: str
    summary: str
    directory: Path | None  # None: not installed
    default: bool


def local_models() -> list[LocalModel]:
    """The local models charmemory knows, whether each is installed, and the defaults."""
    from charmemory.adapters.model_install import (
        DEFAULT_INSTALL,
        MODELS,
        ModelNotInstalledError,
        load_installed,
    )

    rows = []
    for name, spec in sorted(MODELS.items()):
        try:
            directory: Path | None = load_installed(spec).directory
        except ModelNotInstalledError:
            directory = None
        rows.append(LocalModel(name, spec.summary, directory, spec in DEFAULT_INSTALL))
    return rows


def models_to_install(names: Sequence[str]) -> list[LocalModel]:
    """The models named (each checked), or the defaults when none is."""
    from charmemory.adapters.model_install import DEFAULT_INSTALL, model_spec

    specs = [model_spec(name) for name in names] if names else list(DEFAULT_INSTALL)
    return [LocalModel(spec.name, spec.summary, None, spec in DEFAULT_INSTALL) for spec in specs]


def install_local_model(name: str, *, force: bool, progress: Callable[[str], None]) -> Path:
    """Download, verify by sha256 and unpack one model; returns where it is."""
    from charmemory.adapters.model_install import ModelInstaller, model_spec

    return ModelInstaller(progress=progress).install(model_spec(name), force=force).directory


class _EmbedderOnFirstUse:
    """A local embedder, located only when a text has to be embedded.

    Keeping the index in step after an edit embeds nothing for a character that
    was never indexed, so an edit must not fail for want of the embedding model.
    """

    def __init__(self, *, multilingual: bool = False) -> None:
        from charmemory.adapters.embed_onnx import DIMENSIONS
        from charmemory.adapters.model_install import MINILM_L6_V2_INT8, MULTILINGUAL_E5_SMALL_Q4

        spec = MULTILINGUAL_E5_SMALL_Q4 if multilingual else MINILM_L6_V2_INT8
        self._multilingual = multilingual
        self.model_name = spec.name
        self.dimensions = DIMENSIONS  # both local models
        self._embedder: Embedder | None = None

    async def embed(self, texts: Sequence[str]) -> Any:
        if self._embedder is None:
            if self._multilingual:
                from charmemory.adapters.embed_e5 import E5Embedder

                self._embedder = E5Embedder()
            else:
                from charmemory.adapters.embed_onnx import OnnxEmbedder

                self._embedder = OnnxEmbedder()
        return await self._embedder.embed(texts)
