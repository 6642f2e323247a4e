"""Settings of `charmemory serve`: who may call it from a browser, how big a request
may be, and how the memory endpoint picks a character and a model."""

from __future__ import annotations

from typing import Any

from charmemory.core.settings.spec import ScopeKind, Setting

_WORKSPACE: frozenset[ScopeKind] = frozenset({"workspace"})
DEFAULT_MAX_BODY_BYTES = 16 * 1024 * 1024  # a long chat with a few inline images fits


def _origins(value: Any) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise ValueError('must be a JSON list of origins, e.g. ["http://localhost:8000"]')
    return [v.strip().rstrip("/") for v in value]


SETTINGS: tuple[Setting, ...] = (
    Setting(
        "server.cors_origins",
        "json",
        [],
        "Web origins allowed to call the API from a browser (none: CORS off)",
        scopes=_WORKSPACE,
        check=_origins,
    ),
    Setting(
        "server.max_body_bytes",
        "int",
        DEFAULT_MAX_BODY_BYTES,
        "Largest request body the server reads",
        low=1024,
        high=1024 * 1024 * 1024,
        scopes=_WORKSPACE,
    ),
    Setting(
        "server.default_character",
        "text",
        None,
        "Character the shared /v1 endpoint uses when it recognises none",
        blank_is_unset=True,
        scopes=_WORKSPACE,
    ),
    Setting(
        "server.model",
        "text",
        None,
        "Model the memory endpoint asks for, whatever the frontend chose",
        blank_is_unset=True,
    ),
)
