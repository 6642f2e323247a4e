"""The workspace's groups: `groups/<id>.json`, and where their chats live (`group chats/`)."""

from __future__ import annotations

from pathlib import Path

from charmemory.adapters.atomic_file import read_versioned, write_atomic
from charmemory.adapters.workspace import Workspace
from charmemory.core.naming import checked_file_name
from charmemory.errors import ConflictError, FormatError, NotFoundError
from charmemory.formats.chat_name import CHAT_EXTENSION
from charmemory.formats.group import Group, parse_group, render_group
from charmemory.ports import FileVersion, LoadedGroup

GROUP_EXTENSION = ".json"


class GroupFiles:
    def __init__(self, workspace: Workspace):
        self._ws = workspace

    def all(self) -> list[LoadedGroup]:
        """Every readable group, by name; an unreadable file raises only when asked for."""
        found = []
        for path in self._paths():
            try:
                found.append(self.load(path))
            except FormatError:
                continue
        return sorted(found, key=lambda loaded: (loaded.group.name.casefold(), loaded.group.id))

    def find(self, name: str) -> LoadedGroup:
        """A group by id, else by name (case-insensitive)."""
        groups = self.all()
        for loaded in groups:
            if loaded.group.id == name:
                return loaded
        named = [loaded for loaded in groups if loaded.group.name.casefold() == name.casefold()]
        if len(named) == 1:
            return named[0]
        if named:
            ids = ", ".join(loaded.group.id for loaded in named)
            raise NotFoundError(f"several groups are named {name!r}; give one of their ids: {ids}")
        known = ", ".join(repr(loaded.group.name) for loaded in groups) or "none yet"
        raise NotFoundError(
            f"unknown group {name!r}; known: {known} (charmemory group create NAME MEMBER...)"
        )

    def load(self, path: Path) -> LoadedGroup:
        read = read_versioned(path)
        if read.data is None:
            raise NotFoundError(f"group file {path.name} disappeared")
        try:
            text = read.data.decode("utf-8-sig")
        except UnicodeDecodeError as error:
            raise FormatError(f"not UTF-8 text (byte {error.start})", source=path.name) from None
        return LoadedGroup(parse_group(text, source=path.name), path, read.version)

    def save(self, loaded: LoadedGroup, group: Group) -> LoadedGroup:
        self._ws.require_writable("write groups")
        version = write_atomic(
            loaded.path,
            render_group(group).encode("utf-8"),
            expected=loaded.version,
            locks=self._ws.locks,
        )
        return LoadedGroup(group, loaded.path, version)

    def create(self, group: Group) -> LoadedGroup:
        self._ws.require_writable("create groups")
        path = self.path_of(group.id)
        try:
            return self.save(LoadedGroup(group, path, FileVersion(path, None)), group)
        except ConflictError:
            raise ConflictError(f"a group with id {group.id!r} already exists") from None

    def path_of(self, group_id: str) -> Path:
        return self._ws.inside(self._ws.groups_dir, checked_file_name(group_id + GROUP_EXTENSION))

    def chat_path(self, chat_id: str) -> Path:
        return self._ws.inside(
            self._ws.group_chats_dir, checked_file_name(chat_id + CHAT_EXTENSION)
        )

    def _paths(self) -> list[Path]:
        folder = self._ws.groups_dir
        if not folder.is_dir():
            return []
        return sorted(p for p in folder.iterdir() if p.suffix.lower() == GROUP_EXTENSION)
