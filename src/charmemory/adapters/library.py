"""The characters and chats of a workspace (a repository): finding, reading, importing."""

from __future__ import annotations

import json
from pathlib import Path

from charmemory.adapters.atomic_file import read_versioned, write_atomic
from charmemory.adapters.workspace import Workspace
from charmemory.core.naming import checked_file_name
from charmemory.errors import CharMemoryError, FormatError, NotFoundError
from charmemory.formats.card import read_card
from charmemory.formats.chat import parse_chat
from charmemory.formats.lorebook import parse_lorebook
from charmemory.formats.memory_file import parse_memory_file
from charmemory.ports import Character, ChatRef, Imported, ImportKind, LoadedChat

CARD_SUFFIXES = (".png", ".json")


class Library:
    def __init__(self, workspace: Workspace):
        self._ws = workspace

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
        wanted = name.casefold()
        candidates = self.characters()
        for match in (
            lambda c: c.stem == name,
            lambda c: c.name == name,
            lambda c: c.stem.casefold() == wanted,
            lambda c: c.name.casefold() == wanted,
        ):
            hits = [c for c in candidates if match(c)]
            if len(hits) == 1:
                return hits[0]
            if len(hits) > 1:
                stems = ", ".join(c.stem for c in hits)
                raise NotFoundError(
                    f"{name!r} names several characters ({stems}); use the card file name"
                )
        for path, problem in self.unreadable_cards():
            if path.stem.casefold() == wanted:
                # The card is there but broken: say so rather than "unknown character".
                raise FormatError(problem)
        known = ", ".join(c.name for c in candidates) or "none yet (charmemory import CARD)"
        raise NotFoundError(f"unknown character {name!r}; known: {known}")

    # -- chats ----------------------------------------------------------------------

    def chats(self, character: Character) -> list[ChatRef]:
        folder = self._ws.chats_dir / character.stem
        if not folder.is_dir():
            return []
        refs = [ChatRef(character, path.stem, path) for path in folder.glob("*.jsonl")]
        return sorted(refs, key=lambda r: r.path.stat().st_mtime)

    def chat(self, character: Character, chat_id: str | None = None) -> ChatRef:
        """A chat by id (file name without `.jsonl`); none given means the latest."""
        refs = self.chats(character)
        if not refs:
            raise NotFoundError(f"{character.name} has no chats yet (charmemory import CHAT.jsonl)")
        if chat_id is None:
            return refs[-1]
        wanted = chat_id.removesuffix(".jsonl")
        for ref in refs:
            if ref.id == wanted:
                return ref
        known = ", ".join(r.id for r in refs)
        raise NotFoundError(f"{character.name} has no chat {chat_id!r}; chats: {known}")

    def load_chat(self, ref: ChatRef) -> LoadedChat:
        read = read_versioned(ref.path)
        if read.data is None:
            raise NotFoundError(f"chat {ref.id!r} disappeared from {ref.path.parent}")
        text = _decode(read.data, ref.path)
        return LoadedChat(ref, parse_chat(text, source=ref.path.name), read.version)

    # -- import ---------------------------------------------------------------------

    def import_file(self, source: Path, *, character: str | None = None) -> Imported:
        """Copy a card, chat, lorebook or memory file into its place in the workspace."""
        self._ws.require_writable("import files")
        if not source.is_file():
            raise NotFoundError(f"no such file: {source}")
        data = source.read_bytes()
        kind, folder = self._classify(source, data, character)
        target = self._ws.inside(folder, checked_file_name(source.name))
        existing = read_versioned(target)
        if existing.data == data:
            return Imported(kind, source, target, unchanged=True)
        if existing.data is not None:
            raise CharMemoryError(
                f"{target.relative_to(self._ws.root)} already exists with other content; "
                "rename the file to import it beside the existing one"
            )
        write_atomic(target, data, expected=existing.version, locks=self._ws.locks)
        return Imported(kind, source, target, unchanged=False)

    def _classify(
        self, source: Path, data: bytes, character: str | None
    ) -> tuple[ImportKind, Path]:
        suffix = source.suffix.lower()
        name = source.name
        if suffix == ".png":
            read_card(data, source=name)
            return "card", self._ws.characters_dir
        if suffix == ".md":
            parse_memory_file(_decode(data, source))
            return "memory file", self._ws.files_dir
        if suffix == ".jsonl":
            chat = parse_chat(_decode(data, source), source=name)
            owner = character or chat.header.character_name
            if not owner:
                raise FormatError(
                    "the chat does not say whose it is; pass --character NAME", source=name
                )
            return "chat", self._ws.inside(self._ws.chats_dir, self.character(owner).stem)
        if suffix == ".json":
            document = _json_object(data, source)
            if isinstance(document.get("entries"), dict):
                parse_lorebook(_decode(data, source), source=name)
                return "lorebook", self._ws.worlds_dir
            read_card(data, source=name)
            return "card", self._ws.characters_dir
        raise FormatError(
            "not a file charmemory imports (card .png/.json, chat .jsonl, "
            "lorebook .json, memory file .md)",
            source=name,
        )

    # -- internals --------------------------------------------------------------------

    def _card_paths(self) -> list[Path]:
        folder = self._ws.characters_dir
        if not folder.is_dir():
            return []
        return sorted(p for p in folder.iterdir() if p.suffix.lower() in CARD_SUFFIXES)

    def _load_character(self, path: Path) -> Character:
        card = read_card(path.read_bytes(), source=path.name)
        return Character(name=card.name or path.stem, stem=path.stem, card_path=path, card=card)


def _decode(data: bytes, source: Path) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise FormatError(f"not UTF-8 text (byte {error.start})", source=source.name) from None


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
