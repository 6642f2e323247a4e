"""The workspace's files: characters, chats and memory files, and the values they come in."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol, runtime_checkable

if TYPE_CHECKING:
    from charmemory.core.memory_history import Version
    from charmemory.formats.card import Card
    from charmemory.formats.chat import Chat, MessagePage
    from charmemory.formats.group import Group, GroupJoin
    from charmemory.formats.memory_file import (
        MemoryFile,
    )
    from charmemory.formats.memory_listing import FileListing


@dataclass(frozen=True)
class FileVersion:
    """What a file held when it was read; `digest` is None when it did not exist."""

    path: Path
    digest: str | None


@dataclass(frozen=True)
class Character:
    name: str
    stem: str  # card file name without its extension; also the chat folder's name
    card_path: Path
    card: Card


@dataclass(frozen=True)
class GroupMembership:
    """A group chat as one of its members takes part in it."""

    group_id: str
    group_name: str
    members: tuple[str, ...]  # every member's name, in the group's order (muted ones too)
    joined: GroupJoin | None = None  # set when the member joined after the chat began


@dataclass(frozen=True)
class ChatRef:
    character: Character
    id: str  # the chat file name without `.jsonl`, as SillyTavern names chats
    path: Path
    group: GroupMembership | None = None  # a group chat, seen as `character`'s


@dataclass(frozen=True)
class LoadedGroup:
    """A group file as read (`path` is `groups/<id>.json`)."""

    group: Group
    path: Path
    version: FileVersion


@dataclass(frozen=True)
class LoadedChat:
    ref: ChatRef
    chat: Chat
    version: FileVersion


@dataclass(frozen=True)
class LatestChatRef:
    """The chat taken as a character's latest, and why (shown when a command picks it)."""

    ref: ChatRef
    reason: str


@dataclass(frozen=True)
class ChatStamp:
    """A chat file seen from outside (size and modification time): when it changes,
    the chat changed. Reading it costs no parsing."""

    size: int
    modified_ns: int


ImportKind = Literal["card", "chat", "lorebook", "memory file", "group", "group chat"]


@dataclass(frozen=True)
class Imported:
    kind: ImportKind
    source: Path
    target: Path
    unchanged: bool  # the same bytes were already there
    note: str = ""  # how the import decided something the file did not say


@runtime_checkable
class CharacterLibrary(Protocol):
    """The characters and chats of a workspace."""

    def characters(self) -> list[Character]: ...

    def unreadable_cards(self) -> list[tuple[Path, str]]: ...

    def character(self, name: str) -> Character: ...

    def chats(self, character: Character) -> list[ChatRef]:
        """The character's chats, oldest first."""
        ...

    def chat(self, character: Character, chat_id: str | None = None) -> ChatRef:
        """A chat by id (a group chat the character is a member of too); None: the latest."""
        ...

    def latest_chat(self, character: Character) -> LatestChatRef | None:
        """The chat SillyTavern would open for the character (None: it has none)."""
        ...

    def load_chat(self, ref: ChatRef) -> LoadedChat: ...

    def message_page(self, ref: ChatRef, *, before: int | None, count: int) -> MessagePage:
        """The ``count`` messages before message ``before`` (None: the newest), the rest
        of the chat not parsed; for showing a long chat a page at a time."""
        ...

    def chat_stamps(self, character: Character) -> dict[str, ChatStamp]:
        """Each of the character's chat files by chat id, as `ChatStamp`, none read."""
        ...

    def save_chat(self, loaded: LoadedChat, chat: Chat) -> LoadedChat:
        """Write the chat back, refused (ConflictError) if its file changed since it was read."""
        ...

    def create_chat(self, character: Character, chat_id: str, chat: Chat) -> LoadedChat: ...

    def import_file(
        self, source: Path, *, character: str | None = None, group: str | None = None
    ) -> Imported:
        """A card, chat, lorebook, memory file, group or group chat (into ``group``)."""
        ...

    # -- groups: `groups/<id>.json`, their chats in `group chats/<chat>.jsonl` ----------

    def groups(self) -> list[LoadedGroup]:
        """Every readable group, by name."""
        ...

    def group(self, name: str) -> LoadedGroup:
        """A group by id or name (case-insensitive)."""
        ...

    def create_group(self, group: Group) -> LoadedGroup: ...

    def save_group(self, loaded: LoadedGroup, group: Group) -> LoadedGroup:
        """Write the group back, refused (ConflictError) if its file changed since it was read."""
        ...

    def group_members(self, group: Group) -> list[Character | None]:
        """The character of each member, in the group's order (None: no such card here)."""
        ...

    def group_chat(self, loaded: LoadedGroup, member: Character, chat_id: str) -> ChatRef:
        """One of the group's chats, as ``member`` takes part in it."""
        ...

    def create_group_chat(
        self, loaded: LoadedGroup, member: Character, chat_id: str, chat: Chat
    ) -> LoadedChat:
        """A new chat file in `group chats/` (the group must list it); refused if it exists."""
        ...


@dataclass(frozen=True)
class LoadedMemories:
    """A memory file as read; `file` is its workspace-relative path."""

    file: str
    memories: MemoryFile
    version: FileVersion
    # The layout found on disk when it was not blocks (the file was migrated in
    # memory; saving it writes the migrated form).
    migrated_from: str | None = None
    size: int = 0  # bytes on disk

    @property
    def exists(self) -> bool:
        return self.version.digest is not None


@dataclass(frozen=True)
class ListedMemories:
    """A memory file as listed (see `formats.memory_listing`); `file` as in LoadedMemories."""

    file: str
    listing: FileListing
    version: FileVersion

    @property
    def exists(self) -> bool:
        return self.version.digest is not None


@runtime_checkable
class MemoryFileStore(Protocol):
    """Memory files, addressed by workspace-relative path; every change is versioned."""

    def load(self, file: str) -> LoadedMemories: ...

    def listing(self, file: str) -> ListedMemories:
        """What `load` gives, as listed; unchanged files are not parsed again."""
        ...

    def digest(self, file: str) -> str | None:
        """What the file holds now, as a digest (None: no file), without reading it as memories."""
        ...

    def save(
        self,
        loaded: LoadedMemories,
        new: MemoryFile,
        *,
        cause: str | None = None,
        detail: str = "",
    ) -> LoadedMemories: ...

    def all_files(self) -> list[str]:
        """Every memory file in the workspace, whoever it belongs to."""
        ...

    def current_version(self, file: str) -> FileVersion:
        """The file's version on disk, recorded first if changed outside; bytes not read as text."""
        ...

    def delete(self, file: str, expected: FileVersion, *, cause: str, detail: str = "") -> None: ...

    def restore(self, file: str, expected: FileVersion, number: int) -> Version | None: ...

    def versions(self, file: str) -> list[Version]: ...

    def latest_version(self, file: str) -> Version | None: ...

    def version_bytes(self, file: str, number: int) -> bytes | None: ...

    def require_writable(self, what: str) -> None: ...


@dataclass(frozen=True)
class Salvaged:
    """What a damaged database still held, by part: each copied whole, or not at all."""

    recovered: tuple[str, ...]
    lost: tuple[str, ...]
    not_carried: tuple[str, ...]  # never copied: each starts again


@runtime_checkable
class StateDatabase(Protocol):
    """The workspace's own database as one file (a person never edits it)."""

    def problem(self) -> str | None:
        """What is wrong with it, or None when it is sound."""
        ...

    def set_aside(self) -> Path:
        """Move it beside itself under a new name (returned); the next use makes a new one."""
        ...

    def salvage(self, damaged: Path) -> Salvaged:
        """Copy what the damaged file still reads into the new database."""
        ...
