"""A workspace on disk, laid out like a SillyTavern user data folder.

```
characters/<card>.png|json     chats/<card stem>/<chat>.jsonl
groups/<id>.json               group chats/<chat>.jsonl
worlds/<book>.json             user/files/<memory file>.md
charmemory/                    our own state (database, locks, kept memory listings)
```

A folder that SillyTavern made (it has `characters/`, `chats/` ... but no
`charmemory/workspace.json`) is opened read-only unless the user allows
writes; its state then lives in the per-user data directory, so not one byte
of the user's folder changes.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import platformdirs

from charmemory.adapters.atomic_file import FileLocks
from charmemory.adapters.books.journal import recover_pending
from charmemory.adapters.migrations import MIGRATIONS
from charmemory.adapters.sqlite_db import connect
from charmemory.errors import (
    CharMemoryError,
    NotFoundError,
    ReadOnlyWorkspaceError,
    UnsafePathError,
)

APP_NAME = "charmemory"
MARKER = "workspace.json"
DATABASE = "state.db"
ST_LAYOUT = ("characters", "chats", "worlds", "settings.json")
FOLDERS = ("characters", "chats", "worlds", "user/files")


def default_workspace_dir() -> Path:
    return Path(platformdirs.user_data_dir(APP_NAME)) / "workspace"


def workspace_dir_from_env(explicit: str | os.PathLike[str] | None) -> Path:
    """`--workspace` wins over `CHARMEMORY_HOME`, which wins over the default."""
    chosen = explicit or os.environ.get("CHARMEMORY_HOME")
    return Path(chosen).expanduser() if chosen else default_workspace_dir()


@dataclass
class Workspace:
    root: Path
    writable: bool
    state_dir: Path
    # What opening the database finished of writes a killed process left half-done.
    recovered: list[str] = field(default_factory=list)

    @classmethod
    def open(cls, root: Path, *, allow_write: bool = False) -> Workspace:
        root = root.expanduser().resolve()
        _refuse_a_file(root)
        if not root.is_dir():
            raise NotFoundError(
                f"no workspace at {root}; create one with `charmemory init --workspace {root}`"
            )
        ours = (root / APP_NAME / MARKER).is_file()
        from_sillytavern = not ours and any((root / name).exists() for name in ST_LAYOUT)
        writable = ours or allow_write or not from_sillytavern
        if from_sillytavern and not (root / APP_NAME).is_dir() and not allow_write:
            state_dir = external_state_dir(root)
        else:
            state_dir = root / APP_NAME
        return cls(root=root, writable=writable, state_dir=state_dir)

    @classmethod
    def create(cls, root: Path) -> Workspace:
        """Make (or complete) a workspace at `root`; existing files are left alone."""
        root = root.expanduser().resolve()
        _refuse_a_file(root)
        state = root / APP_NAME
        marker = state / MARKER
        try:
            for folder in (*FOLDERS, APP_NAME):
                (root / folder).mkdir(parents=True, exist_ok=True)
            if not marker.exists():
                marker.write_text(json.dumps({"format": 1}) + "\n", encoding="utf-8")
        except OSError as error:
            where = error.filename or root
            raise CharMemoryError(
                f"cannot make a workspace at {root}: {where}: {error.strerror}"
            ) from None
        return cls(root=root, writable=True, state_dir=state)

    # -- layout ------------------------------------------------------------------

    @property
    def characters_dir(self) -> Path:
        return self.root / "characters"

    @property
    def chats_dir(self) -> Path:
        return self.root / "chats"

    @property
    def groups_dir(self) -> Path:
        return self.root / "groups"

    @property
    def group_chats_dir(self) -> Path:
        return self.root / "group chats"

    @property
    def worlds_dir(self) -> Path:
        return self.root / "worlds"

    @property
    def files_dir(self) -> Path:
        return self.root / "user" / "files"

    @property
    def locks(self) -> FileLocks:
        return FileLocks(self.state_dir / "locks")

    @property
    def database_path(self) -> Path:
        return self.state_dir / DATABASE

    @cached_property
    def db(self) -> sqlite3.Connection:
        conn = connect(self.database_path, MIGRATIONS)
        if self.writable:
            # A memory-book write a killed process left half-done is finished first.
            self.recovered = recover_pending(conn, self.root, self.locks)
        return conn

    def inside(self, base: Path, *parts: str) -> Path:
        """`base/parts...`, refused if it would leave `base` (path traversal)."""
        target = base.joinpath(*parts).resolve()
        if not target.is_relative_to(base.resolve()):
            raise UnsafePathError(f"{'/'.join(parts)!r} would lead outside {base.name}/")
        return target

    def require_writable(self, what: str) -> None:
        if not self.writable:
            raise ReadOnlyWorkspaceError(
                f"cannot {what}: {self.root} is a SillyTavern folder opened read-only "
                "(pass --allow-write to let charmemory change it)"
            )

    def close(self) -> None:
        if "db" in self.__dict__:
            self.db.close()
            del self.__dict__["db"]


def _refuse_a_file(root: Path) -> None:
    if root.exists() and not root.is_dir():
        raise CharMemoryError(f"{root} is a file; a workspace is a folder (pick another one)")


def external_state_dir(root: Path) -> Path:
    key = hashlib.sha1(str(root).encode()).hexdigest()[:12]
    return Path(platformdirs.user_data_dir(APP_NAME)) / "external" / f"{root.name}-{key}"
