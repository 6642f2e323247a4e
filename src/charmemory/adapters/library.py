"""The characters and chats of a workspace (a repository): finding, reading, importing."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path

from charmemory.adapters.atomic_file import read_versioned, write_atomic
from charmemory.adapters.group_files import GroupFiles
from charmemory.adapters.input_files import decoded, read_input
from charmemory.adapters.workspace import Workspace
from charmemory.core.character_match import find_character
from charmemory.core.chat_owner import resolve_chat_owner
from charmemory.core.latest_chat import ChatActivity, chats_oldest_first, latest_chat
from charmemory.core.naming import checked_file_name, memory_file_stem, sanitize, sharing_a_stem
from charmemory.errors import (
    CharMemoryError,
    ConflictError,
    FormatError,
    NameTakenError,
    NotFoundError,
)
from charmemory.formats.card import read_card
from charmemory.formats.chat import (
    Chat,
    MessagePage,
    last_message_send_date,
    parse_chat,
    parse_message_page,
)
from charmemory.formats.chat_name import CHAT_EXTENSION
from charmemory.formats.group import Group, looks_like_group, parse_group
from charmemory.formats.lorebook import parse_lorebook
from charmemory.formats.memory_file import (
    parse_memory_file,
)
from charmemory.ports import (
    Character,
    ChatRef,
    ChatStamp,
    FileVersion,
    GroupMembership,
    Imported,
    ImportKind,
    LatestChatRef,
    LoadedChat,
    LoadedGroup,
)

CARD_SUFFIXES = (".png", ".json")
# Enough of a chat's end to hold its last message in nearly every chat.
_TAIL_BYTES = 64 * 1024
# Dates without a zone (older send_date forms, file-name stamps) are this machine's time.
_LOCAL_ZONE = datetime.now().astimezone().tzinfo or UTC


class Library:
    def __init__(self, workspace: Workspace):
        self._ws = workspace
        self._groups = GroupFiles(workspace)
        # Parsed cards by path, with the (mtime, size) they were read at: every
        # memory location needs every character's name, and cards can be large PNGs.
        self._cards: dict[Path, tuple[tuple[int, int], Character]] = {}

    # -- characters ---------------------------------------------------------------

    def characters(self) -> list[Character]:
        """Every readable card; unreadable ones raise only when asked for by name."""
        found = []
        for path in self._card_paths():
            try:
                found.append(self._load_character(path))
            except FormatError:
                continue
        return sorted(found, key=lambda c: c.name.casefold())

    def unreadable_cards(self) -> list[tuple[Path, str]]:
        problems = []
        for path in self._card_paths():
            try:
                self._load_character(path)
            except FormatError as error:
                problems.append((path, str(error)))
        return problems

    def character(self, name: str) -> Character:
        """Find a character by card name or card file stem (case-insensitive)."""
        candidates = self.characters()
        try:
            return find_character(name, candidates)
        except NotFoundError:
            wanted = name.casefold()
            for path, problem in self.unreadable_cards():
                if path.stem.casefold() == wanted:
                    # The card is there but broken: say so rather than "unknown character".
                    raise FormatError(problem) from None
            if not candidates:
                raise NotFoundError(
                    f"unknown character {name!r}; known: none yet (charmemory import CARD)"
                ) from None
            raise

    # -- chats ----------------------------------------------------------------------

    def chats(self, character: Character) -> list[ChatRef]:
        """The character's chats, oldest first by their last message (as SillyTavern orders)."""
        by_id = {ref.id: ref for ref in self._chat_files(character)}
        ordered = chats_oldest_first(self._activities(by_id.values()), local_zone=_LOCAL_ZONE)
        return [by_id[activity.chat_id] for activity in ordered]

    def latest_chat(self, character: Character) -> LatestChatRef | None:
        """The chat SillyTavern would open: the card's last one, else the newest."""
        by_id = {ref.id: ref for ref in self._chat_files(character)}
        latest = latest_chat(
            self._activities(by_id.values()),
            card_chat=character.card.last_chat,
            local_zone=_LOCAL_ZONE,
        )
        if latest is None:
            return None
        return LatestChatRef(by_id[latest.chat.chat_id], latest.why)

    def chat(self, character: Character, chat_id: str | None = None) -> ChatRef:
        """A chat by id (file name without `.jsonl`); none given means the latest."""
        if chat_id is None:
            latest = self.latest_chat(character)
            if latest is None:
                raise NotFoundError(
                    f"{character.name} has no chats yet (charmemory import CHAT.jsonl)"
                )
            return latest.ref
        refs = self._chat_files(character)
        wanted = chat_id.removesuffix(".jsonl")
        for ref in refs:
            if ref.id == wanted:
                return ref
        in_group = self._group_chat_of(character, wanted)
        if in_group is not None:
            return in_group
        if not refs:
            raise NotFoundError(f"{character.name} has no chats yet (charmemory import CHAT.jsonl)")
        known = ", ".join(r.id for r in refs)
        raise NotFoundError(f"{character.name} has no chat {chat_id!r}; chats: {known}")

    def load_chat(self, ref: ChatRef) -> LoadedChat:
        read = read_versioned(ref.path)
        if read.data is None:
            raise NotFoundError(f"chat {ref.id!r} disappeared from {ref.path.parent}")
        text = _decode(read.data, ref.path)
        return LoadedChat(ref, parse_chat(text, source=ref.path.name), read.version)

    def message_page(self, ref: ChatRef, *, before: int | None, count: int) -> MessagePage:
        """Messages of the chat without reading the rest (see `parse_message_page`)."""
        try:
            data = ref.path.read_bytes()
        except FileNotFoundError:
            raise NotFoundError(f"chat {ref.id!r} disappeared from {ref.path.parent}") from None
        text = _decode(data, ref.path)
        return parse_message_page(text, before=before, count=count, source=ref.path.name)

    def save_chat(self, loaded: LoadedChat, chat: Chat) -> LoadedChat:
        """Write ``chat`` over the file ``loaded`` came from, unless it changed since."""
        self._ws.require_writable("write chats")
        version = write_atomic(
            loaded.ref.path,
            chat.render().encode("utf-8"),
            expected=loaded.version,
            locks=self._ws.locks,
        )
        return LoadedChat(loaded.ref, chat, version)

    def create_chat(self, character: Character, chat_id: str, chat: Chat) -> LoadedChat:
        """A new chat file in the character's folder; refused if one of that name exists."""
        self._ws.require_writable("create chats")
        folder = self._ws.inside(self._ws.chats_dir, character.stem)
        path = self._ws.inside(folder, checked_file_name(chat_id + CHAT_EXTENSION))
        ref = ChatRef(character, path.stem, path)
        try:
            return self.save_chat(LoadedChat(ref, chat, FileVersion(path, None)), chat)
        except ConflictError:
            raise ConflictError(f"{character.name} already has a chat {ref.id!r}") from None

    def chat_stamps(self, character: Character) -> dict[str, ChatStamp]:
        stamps = {}
        for ref in self._chat_files(character):
            try:
                found = ref.path.stat()
            except FileNotFoundError:  # removed since the folder was listed
                continue
            stamps[ref.id] = ChatStamp(found.st_size, found.st_mtime_ns)
        return stamps

    # -- groups -----------------------------------------------------------------------

    def groups(self) -> list[LoadedGroup]:
        return self._groups.all()

    def group(self, name: str) -> LoadedGroup:
        return self._groups.find(name)

    def create_group(self, group: Group) -> LoadedGroup:
        return self._groups.create(group)

    def save_group(self, loaded: LoadedGroup, group: Group) -> LoadedGroup:
        return self._groups.save(loaded, group)

    def group_members(self, group: Group) -> list[Character | None]:
        characters = self.characters()
        by_file = {c.card_path.name: c for c in characters}
        by_name = {c.name: c for c in characters}  # groups of SillyTavern's first versions
        return [by_file.get(member) or by_name.get(member) for member in group.members]

    def group_chat(self, loaded: LoadedGroup, member: Character, chat_id: str) -> ChatRef:
        group = loaded.group
        names = tuple(
            found.name if found is not None else Path(member_id).stem
            for member_id, found in zip(group.members, self.group_members(group), strict=True)
        )
        joins = group.joins(chat_id)
        joined = joins.get(member.card_path.name) or joins.get(member.name)
        membership = GroupMembership(group.id, group.name, names, joined)
        return ChatRef(member, chat_id, self._groups.chat_path(chat_id), membership)

    def create_group_chat(
        self, loaded: LoadedGroup, member: Character, chat_id: str, chat: Chat
    ) -> LoadedChat:
        self._ws.require_writable("create chats")
        if chat_id not in loaded.group.chats:
            raise CharMemoryError(f"group {loaded.group.name!r} does not list a chat {chat_id!r}")
        ref = self.group_chat(loaded, member, chat_id)
        try:
            return self.save_chat(LoadedChat(ref, chat, FileVersion(ref.path, None)), chat)
        except ConflictError:
            raise ConflictError(f"a group chat {chat_id!r} already exists") from None

    def _group_chat_of(self, character: Character, chat_id: str) -> ChatRef | None:
        """``chat_id`` as ``character`` takes part in it, when it is a chat of its group."""
        for loaded in self.groups():
            group = loaded.group
            member = character.card_path.name in group.members or character.name in group.members
            if member and chat_id in group.chats and self._groups.chat_path(chat_id).is_file():
                return self.group_chat(loaded, character, chat_id)
        return None

    # -- import ---------------------------------------------------------------------

    def import_file(
        self, source: Path, *, character: str | None = None, group: str | None = None
    ) -> Imported:
        """Copy a card, chat, lorebook, memory file, group or group chat into its place."""
        self._ws.require_writable("import files")
        data = read_input(source)
        kind, target, note = self._classify(source, data, character, group)
        if kind == "card":
            name = read_card(data, source=source.name).name or target.stem
            note = self._shared_name_note(name, target)
        existing = read_versioned(target)
        if existing.data == data:
            return Imported(kind, source, target, unchanged=True, note=note)
        if existing.data is not None:
            raise NameTakenError(
                f"{target.relative_to(self._ws.root)} already exists with other content; "
                "rename the file to import it beside the existing one"
            )
        write_atomic(target, data, expected=existing.version, locks=self._ws.locks)
        if kind == "group chat" and group is not None:
            self._list_group_chat(self.group(group), target.stem)
        return Imported(kind, source, target, unchanged=False, note=note)

    def _classify(
        self, source: Path, data: bytes, character: str | None, group: str | None
    ) -> tuple[ImportKind, Path, str]:
        suffix = source.suffix.lower()
        name = source.name
        if suffix == ".png":
            read_card(data, source=name)
            return "card", self._inside(self._ws.characters_dir, name), ""
        if suffix == ".md":
            parse_memory_file(_decode(data, source))
            return "memory file", self._inside(self._ws.files_dir, name), ""
        if suffix == ".jsonl":
            chat = parse_chat(_decode(data, source), source=name)
            owning = self.group(group) if group is not None else self._group_listing(source.stem)
            if owning is not None:
                target = self._groups.chat_path(source.stem)
                return "group chat", target, f"group: {owning.group.name}"
            owner = resolve_chat_owner(
                chat, self.characters(), path=source.resolve(), explicit=character
            )
            folder = self._ws.inside(self._ws.chats_dir, owner.character.stem)
            return "chat", self._inside(folder, name), f"owner: {owner.describe()}"
        if suffix == ".json":
            document = _json_object(data, source)
            if "entries" in document:  # a lorebook (no card has top-level entries)
                parse_lorebook(_decode(data, source), source=name)
                return "lorebook", self._inside(self._ws.worlds_dir, name), ""
            if looks_like_group(document):
                found = parse_group(_decode(data, source), source=name)
                return "group", self._groups.path_of(found.id), self._members_note(found)
            read_card(data, source=name)
            return "card", self._inside(self._ws.characters_dir, name), ""
        raise FormatError(
            "not a file charmemory imports (card .png/.json, chat .jsonl, "
            "lorebook .json, memory file .md, group .json)",
            source=name,
        )

    def _inside(self, folder: Path, name: str) -> Path:
        return self._ws.inside(folder, checked_file_name(name))

    def _group_listing(self, chat_id: str) -> LoadedGroup | None:
        """The group whose chat list names ``chat_id``, if one does."""
        return next((g for g in self.groups() if chat_id in g.group.chats), None)

    def _list_group_chat(self, loaded: LoadedGroup, chat_id: str) -> None:
        if chat_id in loaded.group.chats:
            return
        loaded.group.set("chats", [*loaded.group.chats, chat_id])
        self.save_group(loaded, loaded.group)

    def _members_note(self, group: Group) -> str:
        found = self.group_members(group)
        missing = [member for member, c in zip(group.members, found, strict=True) if c is None]
        note = f"{group.name}: {len(group.members)} members"
        if missing:
            note += f"; not here yet: {', '.join(missing)} (import their cards)"
        return note

    def _shared_name_note(self, name: str, target: Path) -> str:
        """What to know when the card's name makes the memory file name of another's."""
        others = [c.name for c in self.characters() if c.card_path != target]
        sharing = sharing_a_stem(name, others)
        if not sharing:
            return ""
        names = [*others, name]
        own = ", ".join(
            f"{who!r}: {memory_file_stem(who, names)}-memories.md" for who in [*sharing, name]
        )
        note = (
            f"{', '.join(map(repr, sharing))} and {name!r} sanitise to one file name; "
            f"each keeps memory files of its own ({own})"
        )
        plain = self._ws.files_dir / f"{sanitize(sharing[0])}-memories.md"
        if len(sharing) == 1 and plain.exists():
            moved = f"{memory_file_stem(sharing[0], names)}-memories.md"
            note += (
                f"; {plain.name} holds {sharing[0]!r}'s memories from before: "
                f"rename it to {moved} to keep using them"
            )
        return note

    # -- internals --------------------------------------------------------------------

    def _chat_files(self, character: Character) -> list[ChatRef]:
        folder = self._ws.chats_dir / character.stem
        if not folder.is_dir():
            return []
        return [ChatRef(character, path.stem, path) for path in folder.glob("*.jsonl")]

    @staticmethod
    def _activities(refs: Iterable[ChatRef]) -> list[ChatActivity]:
        return [
            ChatActivity(ref.id, _last_send_date(ref.path), ref.path.stat().st_mtime)
            for ref in refs
        ]

    def _card_paths(self) -> list[Path]:
        folder = self._ws.characters_dir
        if not folder.is_dir():
            return []
        return sorted(p for p in folder.iterdir() if p.suffix.lower() in CARD_SUFFIXES)

    def _load_character(self, path: Path) -> Character:
        stat = path.stat()
        seen = (stat.st_mtime_ns, stat.st_size)
        cached = self._cards.get(path)
        if cached is not None and cached[0] == seen:
            return cached[1]
        card = read_card(path.read_bytes(), source=path.name)
        loaded = Character(name=card.name or path.stem, stem=path.stem, card_path=path, card=card)
        self._cards[path] = (seen, loaded)
        return loaded


def _last_send_date(path: Path) -> object:
    """The raw `send_date` of a chat's last message, read from the end of the file only."""
    with path.open("rb") as handle:
        size = handle.seek(0, os.SEEK_END)
        handle.seek(max(size - _TAIL_BYTES, 0))
        tail = handle.read()
    last = last_message_send_date(tail.decode("utf-8", errors="replace"))
    if last is None and size > _TAIL_BYTES:
        # A last message longer than the tail: read it all (rare, and still one line).
        last = last_message_send_date(path.read_bytes().decode("utf-8", errors="replace"))
    return last


def _decode(data: bytes, source: Path) -> str:
    return decoded(data, source.name)


def _json_object(data: bytes, source: Path) -> dict:
    try:
        document = json.loads(_decode(data, source))
    except json.JSONDecodeError as error:
        raise FormatError(
            f"malformed JSON: {error.msg}", source=source.name, line=error.lineno
        ) from None
    if not isinstance(document, dict):
        raise FormatError("expected a JSON object", source=source.name)
    return document
