"""Builds the real object graph for a workspace: the one place adapters meet services."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

from charmemory.adapters.activity_log import ActivityLog
from charmemory.adapters.consolidation_previews import PreviewStore
from charmemory.adapters.embed_onnx import OnnxEmbedder
from charmemory.adapters.library import Library
from charmemory.adapters.llm.embedded import local_llm_ready
from charmemory.adapters.llm.factory import build_chat_model
from charmemory.adapters.memory_files import MemoryFiles
from charmemory.adapters.model_install import (
    MINILM_L6_V2_INT8,
    ModelNotInstalledError,
    load_installed,
)
from charmemory.adapters.retrieval_log import SqliteRetrievalLog
from charmemory.adapters.secrets import SECRETS_FILE_NAME, ApiKeys, SecretsFile
from charmemory.adapters.settings_store import SettingsStore, character_scope
from charmemory.adapters.sqlite_index import SqliteIndex
from charmemory.adapters.workspace import Workspace
from charmemory.core.providers import EMBEDDED
from charmemory.core.retrieval_settings import RetrievalSettings
from charmemory.core.retrieval_settings import merge_settings as merge_retrieval_settings
from charmemory.ports import Embedder
from charmemory.services.consolidation import ConsolidationService
from charmemory.services.extraction import ExtractionService
from charmemory.services.extraction_admin import ExtractionAdmin
from charmemory.services.memory_access import MemoryFileAccess, index_follower
from charmemory.services.memory_history import MemoryHistoryService
from charmemory.services.memory_manager import MemoryManager
from charmemory.services.providers import ProviderService
from charmemory.services.retrieval import RetrievalService, SettingsSource


def api_keys(ws: Workspace, env: Mapping[str, str]) -> ApiKeys:
    return ApiKeys(SecretsFile(ws.state_dir / SECRETS_FILE_NAME, ws.locks), env)


def provider_service(ws: Workspace, env: Mapping[str, str] | None = None) -> ProviderService:
    """The provider use-cases wired to a workspace."""
    environment = os.environ if env is None else env
    keys = api_keys(ws, environment)
    return ProviderService(
        settings=SettingsStore(ws.db),
        keys=keys,
        activity=ActivityLog(ws.db, redact=keys.redact),
        build_model=build_chat_model,
        env=environment,
        default_provider=EMBEDDED if local_llm_ready() else None,
    )


def extraction_service(
    ws: Workspace, model_overrides: Mapping[str, Any] | None = None
) -> ExtractionService:
    """Extraction with the configured model (built on first use, so `--dry-run` needs none)."""
    providers = provider_service(ws)
    keys = api_keys(ws, os.environ)
    return ExtractionService(
        ws,
        model=lambda: providers.chat_model(dict(model_overrides or {})),
        log=ActivityLog(ws.db, redact=keys.redact),
        retrieval=lambda: retrieval_service(ws) if embedding_model_installed() else None,
    )


def embedding_model_installed() -> bool:
    """Whether the local embedding model is there (extraction then ranks related memories)."""
    try:
        load_installed(MINILM_L6_V2_INT8)
    except ModelNotInstalledError:
        return False
    return True


def stored_retrieval_settings(store: SettingsStore) -> SettingsSource:
    """The retrieval settings in force for a character, read from the store on each call."""

    def settings_for(character: str | None) -> RetrievalSettings:
        own = store.all(scope=character_scope(character)) if character is not None else None
        return merge_retrieval_settings(store.all(), own)

    return settings_for


def retrieval_service(ws: Workspace, embedder: Embedder | None = None) -> RetrievalService:
    """Retrieval over the workspace index with the local embedding model and stored settings."""
    embedder = embedder or OnnxEmbedder()
    return RetrievalService(
        SqliteIndex(ws.db, embedder),
        embedder,
        SqliteRetrievalLog(ws.db),
        stored_retrieval_settings(SettingsStore(ws.db)),
    )


class _EmbedderOnFirstUse:
    """The local embedder, located only when a text has to be embedded.

    Keeping the index in step after an edit embeds nothing for a character that
    was never indexed, so an edit must not fail for want of the embedding model.
    """

    model_name = OnnxEmbedder.model_name
    dimensions = OnnxEmbedder.dimensions

    def __init__(self) -> None:
        self._embedder: OnnxEmbedder | None = None

    async def embed(self, texts: Sequence[str]) -> Any:
        if self._embedder is None:
            self._embedder = OnnxEmbedder()
        return await self._embedder.embed(texts)


def memory_access(ws: Workspace, retrieval: RetrievalService | None = None) -> MemoryFileAccess:
    """A character's memory files, where extraction puts them, followed by the index."""
    files = MemoryFiles(ws)
    if retrieval is None:
        retrieval = retrieval_service(ws, _EmbedderOnFirstUse())
    # `charmemory index` builds a character's collection from its main memory file.
    follow = index_follower(retrieval, lambda character: files.relative(files.path_for(character)))
    return MemoryFileAccess(
        Library(ws), files, extraction_service(ws).memory_path_for, on_change=follow
    )


def memory_manager(ws: Workspace) -> MemoryManager:
    return MemoryManager(memory_access(ws))


def memory_history(ws: Workspace) -> MemoryHistoryService:
    admin = ExtractionAdmin(ws, extraction_service(ws))
    return MemoryHistoryService(memory_access(ws), on_clear_undone=admin.restore_cleared_state)


def consolidation_service(
    ws: Workspace, model_overrides: Mapping[str, Any] | None = None
) -> ConsolidationService:
    """Consolidation with the configured model (built on the first call to it)."""
    providers = provider_service(ws)
    keys = api_keys(ws, os.environ)
    return ConsolidationService(
        memory_access(ws),
        PreviewStore(ws.db),
        SettingsStore(ws.db),
        model=lambda: providers.chat_model(dict(model_overrides or {})),
        log=ActivityLog(ws.db, redact=keys.redact),
    )
