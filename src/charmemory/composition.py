"""Builds the real object graph for a workspace: the one place adapters meet services."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from charmemory.adapters.activity_log import ActivityLog
from charmemory.adapters.llm.factory import build_chat_model
from charmemory.adapters.secrets import SECRETS_FILE_NAME, ApiKeys, SecretsFile
from charmemory.adapters.settings_store import SettingsStore
from charmemory.adapters.workspace import Workspace
from charmemory.services.extraction import ExtractionService
from charmemory.services.providers import ProviderService


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
    )
