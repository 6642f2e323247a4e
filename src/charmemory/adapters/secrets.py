"""API keys: a private file in the workspace state folder, the environment, and a redactor.

The secrets file (`secrets.json`, mode 0600) holds one key per provider. It is
written atomically and never readable by other users, not even for the
moment between creating and renaming the temporary file. A key in
`CHARMEMORY_API_KEY` wins over the file, for whichever provider is in use.
Keys are never settings, so no settings export can carry one; everything
that might echo a key (errors, the activity log, model answers) goes through
a `Redactor` that knows every key stored here and in the environment.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from charmemory.adapters.atomic_file import FileLocks, FileVersion, read_versioned, write_atomic
from charmemory.core.redaction import Redactor
from charmemory.errors import ConfigError

SECRETS_FILE_NAME = "secrets.json"
API_KEY_ENV = "CHARMEMORY_API_KEY"
PRIVATE_MODE = 0o600

KeySource = Literal["env", "secrets file"]


@contextlib.contextmanager
def _private_files() -> Iterator[None]:
    # The atomic writer creates its temporary file with the process umask; a
    # tight umask for the duration keeps the key private from the first byte.
    previous = os.umask(0o077)
    try:
        yield
    finally:
        os.umask(previous)


class SecretsFile:
    def __init__(self, path: Path, locks: FileLocks):
        self.path = path
        self._locks = locks

    def get(self, provider: str) -> str | None:
        return self._read()[0].get(provider)

    def providers(self) -> list[str]:
        return sorted(self._read()[0])

    def values(self) -> list[str]:
        return list(self._read()[0].values())

    def set(self, provider: str, key: str) -> None:
        keys, version = self._read()
        self._write({**keys, provider: key}, version)

    def delete(self, provider: str) -> bool:
        keys, version = self._read()
        if provider not in keys:
            return False
        self._write({name: key for name, key in keys.items() if name != provider}, version)
        return True

    def _read(self) -> tuple[dict[str, str], FileVersion]:
        self._tighten_mode()
        read = read_versioned(self.path)
        if read.data is None:
            return {}, read.version
        try:
            payload: Any = json.loads(read.data)
            keys = payload["api_keys"]
            if not isinstance(keys, dict) or not all(
                isinstance(k, str) and isinstance(v, str) for k, v in keys.items()
            ):
                raise ValueError
        except (ValueError, KeyError, TypeError):
            # Never quote the content: it is made of secrets.
            raise ConfigError(
                f"{self.path} is damaged; delete it and store the keys again "
                "with `charmemory secrets set PROVIDER`"
            ) from None
        return keys, read.version

    def _write(self, keys: Mapping[str, str], expected: FileVersion) -> None:
        data = json.dumps({"api_keys": dict(sorted(keys.items()))}, indent=2) + "\n"
        with _private_files():
            write_atomic(self.path, data.encode(), expected=expected, locks=self._locks)
        self.path.chmod(PRIVATE_MODE)

    def _tighten_mode(self) -> None:
        """A copy or restore can leave the file readable by others; take that back."""
        try:
            mode = stat.S_IMODE(self.path.stat().st_mode)
        except FileNotFoundError:
            return
        if mode & 0o077:
            self.path.chmod(PRIVATE_MODE)


@dataclass(frozen=True)
class KeyLookup:
    value: str | None
    source: KeySource | None


class ApiKeys:
    """Key lookup for a provider: the environment first, then the secrets file."""

    def __init__(self, secrets: SecretsFile, env: Mapping[str, str]):
        self._secrets = secrets
        self._env = env

    def lookup(self, provider: str) -> KeyLookup:
        from_env = self._env.get(API_KEY_ENV, "").strip()
        if from_env:
            return KeyLookup(from_env, "env")
        stored = self._secrets.get(provider)
        return KeyLookup(stored, "secrets file" if stored else None)

    def store(self, provider: str, key: str) -> None:
        key = key.strip()
        if not key:
            raise ConfigError("no key given; nothing was stored")
        if any(ch.isspace() for ch in key):
            raise ConfigError("an API key cannot contain spaces or line breaks; nothing was stored")
        self._secrets.set(provider, key)

    def remove(self, provider: str) -> bool:
        return self._secrets.delete(provider)

    def redactor(self) -> Redactor:
        return Redactor([self._env.get(API_KEY_ENV, "").strip(), *self._secrets.values()])

    def redact(self, text: str) -> str:
        """Scrubs every key known right now (one stored a moment ago included)."""
        return self.redactor()(text)
