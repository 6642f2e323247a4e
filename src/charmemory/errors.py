"""Errors a user can cause and fix.

Every exception here is shown to the user as one line (the CLI exits with
code 2, the HTTP API answers 4xx). Messages must never contain secrets.
"""

from __future__ import annotations


class CharMemoryError(Exception):
    """Base of every user-facing error: its message is the whole explanation."""


class FormatError(CharMemoryError):
    """A file or payload does not follow the format it claims to be in."""

    def __init__(self, message: str, *, source: str | None = None, line: int | None = None):
        self.source = source
        self.line = line
        where = source or ""
        if line is not None:
            where = f"{where}:{line}" if where else f"line {line}"
        super().__init__(f"{where}: {message}" if where else message)


class NotFoundError(CharMemoryError):
    """A named thing (character, chat, file, setting) does not exist."""


class ChatOwnerError(CharMemoryError):
    """Whose chat a file is cannot be told (or its clues disagree); it says what to pass."""


class ConflictError(CharMemoryError):
    """A file changed on disk since it was read; nothing was written."""


class NameTakenError(ConflictError):
    """An import would replace another file of the same name; nothing was written."""


class UnsafePathError(CharMemoryError):
    """A name, id or override would lead outside the workspace."""


class ReadOnlyWorkspaceError(CharMemoryError):
    """A write was asked of a workspace opened read-only."""


class ConfigError(CharMemoryError):
    """A setting is missing or invalid."""


class ContextTooSmallError(CharMemoryError):
    """The prompt's fixed parts do not fit the context size less the response length."""


class DamagedDatabaseError(CharMemoryError):
    """The workspace's own database cannot be read; `charmemory repair` rebuilds it."""


class ResponseBudgetError(CharMemoryError):
    """The response budget (max tokens) ran out before the model wrote any answer."""


class StaleVersionError(ConflictError):
    """A change was asked of a version that is no longer current (a stale `If-Match`)."""


class UpstreamError(CharMemoryError):
    """The LLM provider refused or failed a request; `status` is its HTTP status, if any."""

    status: int | None = None
