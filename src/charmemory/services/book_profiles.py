"""Scene memory profiles: listed, shown, changed, and which one is the default."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from charmemory.core.books.entry import EntrySettings
from charmemory.core.books.profiles import DEFAULT_PROFILE, Connection, Profile
from charmemory.errors import ConfigError, NotFoundError
from charmemory.ports import ProfileRepository

_ENTRY_FIELDS = {f.name for f in dataclasses.fields(EntrySettings)}
_PROFILE_FIELDS = {f.name for f in dataclasses.fields(Profile)} - {"name", "entry", "connection"}
_CONNECTION_FIELDS = {"provider", "model", "temperature"}
FIELDS = tuple(sorted(_ENTRY_FIELDS | _PROFILE_FIELDS | _CONNECTION_FIELDS))


class ProfileService:
    def __init__(self, store: ProfileRepository):
        self._store = store

    def all(self) -> list[tuple[Profile, bool]]:
        """Every profile with whether it is the default (`Default` when none is stored)."""
        stored = [Profile.from_dict(data) for data in self._store.all()]
        if not stored:
            return [(DEFAULT_PROFILE, True)]
        default = self.default().name
        return [(profile, profile.name == default) for profile in stored]

    def get(self, name: str | None = None) -> Profile:
        """A profile by name (case ignored); None: the default."""
        if name is None:
            return self.default()
        for profile, _ in self.all():
            if profile.name.casefold() == name.strip().casefold():
                return profile
        known = ", ".join(profile.name for profile, _ in self.all())
        raise NotFoundError(f"no profile {name!r}; profiles: {known}")

    def default(self) -> Profile:
        name = self._store.default_name()
        data = self._store.get(name) if name else None
        if data is None:
            stored = self._store.all()
            data = stored[0] if stored else None
        return DEFAULT_PROFILE if data is None else Profile.from_dict(data)

    def set(self, name: str, changes: Mapping[str, Any], *, make_default: bool = False) -> Profile:
        """Create or change a profile; ``changes`` use the names in `FIELDS`."""
        unknown = sorted(set(changes) - set(FIELDS))
        if unknown:
            raise ConfigError(
                f"unknown profile field {', '.join(unknown)}; fields: {', '.join(FIELDS)}"
            )
        try:
            current = self.get(name)
        except NotFoundError:
            current = Profile(name.strip())
        updated = _changed(current, changes)
        self._store.put(updated.name, updated.to_dict())
        if make_default or self._store.default_name() is None:
            self._store.set_default(updated.name)
        return updated

    def delete(self, name: str) -> None:
        profile = self.get(name)
        if not self._store.delete(profile.name):
            raise NotFoundError(f"{profile.name} is built in and cannot be deleted")


def _changed(profile: Profile, changes: Mapping[str, Any]) -> Profile:
    entry = dataclasses.replace(
        profile.entry, **{k: v for k, v in changes.items() if k in _ENTRY_FIELDS}
    )
    connection = profile.connection
    wanted = {k: v for k, v in changes.items() if k in _CONNECTION_FIELDS}
    if wanted:
        base = connection.to_dict() if connection else {"provider": "", "model": ""}
        merged = {**base, **wanted}
        # An empty provider means the chat's own model again.
        connection = Connection(**merged) if merged.get("provider") else None
    own = {k: v for k, v in changes.items() if k in _PROFILE_FIELDS}
    return dataclasses.replace(profile, entry=entry, connection=connection, **own)
