"""The server's generated access token, kept in the workspace's state folder (mode 0600)."""

from __future__ import annotations

import os
import secrets
from pathlib import Path

TOKEN_FILE_NAME = "server-token"


class ServerTokenFile:
    def __init__(self, path: Path):
        self._path = path

    def load(self) -> str | None:
        try:
            return self._path.read_text(encoding="utf-8").strip() or None
        except FileNotFoundError:
            return None

    def create(self) -> str:
        """A new random token, replacing any earlier one; only the owner can read it."""
        token = secrets.token_urlsafe(32)
        self._path.parent.mkdir(parents=True, exist_ok=True)
        temporary = self._path.with_name(self._path.name + ".tmp")
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "w", encoding="utf-8") as file:
            file.write(token + "\n")
            file.flush()
            os.fsync(file.fileno())
        temporary.replace(self._path)
        return token
