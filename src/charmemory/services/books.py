"""Memory books as a library: listed, shown, bound to chats, and taken back to a version.

Which book a chat's scene memories go to depends on `books.lorebook_mode`:
`automatic` uses the chat's bound book (`chat_metadata.world_info`),
`auto-create` does the same but makes (and binds) a book named from
`books.name_template` when the chat has none, and `manual` uses the book chosen
for the chat (`STMemoryBooks.manualLorebook`). In manual mode a chat whose
members each have a book of their own (`manualCharacterLorebooks`) writes every
memory as a canonical entry and linked copies (see `core.books.layout`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from charmemory.core.books import chat_state
from charmemory.core.books.entry import chat_of, is_memory, memories
from charmemory.core.books.layout import Member
from charmemory.core.books.settings import BookSettings
from charmemory.core.chat_user import chat_user_name
from charmemory.core.memory_history import UNDO, Version, undo_target
from charmemory.core.settings.registry import in_group
from charmemory.errors import CharMemoryError, NotFoundError
from charmemory.formats.lorebook import LorebookEntry
from charmemory.ports import (
    ActivityRecorder,
    BookStore,
    BookTransactions,
    Character,
    CharacterLibrary,
    ChatRef,
    LoadedBook,
    LoadedChat,
)
from charmemory.services.settings import SettingsService

_FILE_UNSAFE = re.compile(r'[/\\:*?"<>|]')
MAX_NAME = 60


@dataclass(frozen=True)
class BookSummary:
    name: str
    entries: int
    memories: int
    chats: tuple[str, ...]  # the chats its memories came from


class BookService:
    def __init__(
        self,
        store: BookStore,
        transactions: BookTransactions,
        library: CharacterLibrary,
        settings: SettingsService,
        activity: ActivityRecorder,
    ):
        self.store = store
        self.transactions = transactions
        self.library = library
        self._settings = settings
        self._activity = activity

    def settings(self, character: str | None = None) -> BookSettings:
        return BookSettings.from_values(
            {s.name: self._settings.value(s.name, character) for s in in_group("books")}
        )

    # -- reading ----------------------------------------------------------------------

    def summaries(self) -> list[BookSummary]:
        found = []
        for name in self.store.names():
            book = self.store.load(name).book
            entries = list(book.entries.values())
            kept = memories(entries)
            chats = tuple(dict.fromkeys(c for e in kept if (c := chat_of(e)) is not None))
            found.append(BookSummary(name, len(entries), len(kept), chats))
        return found

    def book(self, name: str) -> LoadedBook:
        """An existing book, or a NotFoundError naming the books there are."""
        loaded = self.store.load(name)
        if not loaded.exists:
            known = ", ".join(self.store.names()) or "none yet"
            raise NotFoundError(f"no lorebook named {loaded.name!r}; books: {known}")
        return loaded

    def memory_count(self, name: str) -> int:
        return sum(1 for entry in self.book(name).book.entries.values() if is_memory(entry))

    # -- binding books to chats ---------------------------------------------------------

    def bind(
        self,
        character_name: str,
        book: str | None,
        chat_id: str | None = None,
        *,
        manual: bool = False,
        member: str | None = None,
    ) -> str:
        """Bind ``book`` (None: unbind) to a chat: as its book, its manual memory book, or a
        member's book; says what changed."""
        character = self.library.character(character_name)
        ref = self.library.chat(character, chat_id)
        if book is not None:
            book = self.book(book).name
        with self.transactions.open([], ref, cause="bind") as write:
            chat = write.chat().chat
            bindings = chat_state.bindings_of(chat.header)
            if member is not None:
                key = self.member(member).key
                if book is not None and book == bindings.manual_book:
                    raise CharMemoryError(
                        f"{book} is the chat's manual memory book; a member needs a book of its own"
                    )
                chat_state.set_member_book(chat.header, key, book)
                what = f"{member}'s memory book"
            elif manual:
                if book is not None and book in bindings.member_books.values():
                    raise CharMemoryError(f"{book} is a member's book; choose another")
                chat_state.update_state(chat.header, **{chat_state.MANUAL_BOOK: book})
                what = "the manual memory book"
            else:
                chat_state.set_chat_book(chat.header, book)
                what = "the chat's book"
            write.save_chat(chat)
        return f"{what} of {ref.id}: {book or 'none'}"

    def member(self, name: str) -> Member:
        """A character as a group member: keyed by its card file name, as STMB keys it."""
        character = self.library.character(name)
        return Member(character.card_path.name, character.name)

    def members(self, loaded: LoadedChat) -> list[Member]:
        """The chat's members with a book of their own, by their card file names."""
        by_key = {c.card_path.name: c for c in self.library.characters()}
        keys = chat_state.bindings_of(loaded.chat.header).member_books
        return [
            Member(key, by_key[key].name if key in by_key else Member(key, key).filter_name)
            for key in keys
        ]

    def chat(self, character_name: str, chat_id: str | None) -> tuple[Character, LoadedChat]:
        character = self.library.character(character_name)
        return character, self.library.load_chat(self.library.chat(character, chat_id))

    def chat_with_id(self, chat_id: str) -> ChatRef:
        """The chat a memory came from, found by its id among every character's chats."""
        for character in self.library.characters():
            for ref in self.library.chats(character):
                if ref.id == chat_id:
                    return ref
        raise NotFoundError(f"the chat {chat_id!r} this memory came from is not in the workspace")

    def people_of(self, entries: Sequence[LorebookEntry]) -> tuple[str, str]:
        """(character, user) of the chat the first of ``entries`` with a chat came from."""
        for entry in entries:
            chat_id = chat_of(entry)
            if chat_id is None:
                continue
            try:
                ref = self.chat_with_id(chat_id)
            except NotFoundError:
                continue
            return ref.character.name, chat_user_name(self.library.load_chat(ref).chat)
        return "the character", "the user"

    def new_book_name(self, character: Character, ref: ChatRef, user: str) -> str:
        """A name from `books.name_template`, made unique with a numeric suffix."""
        template = (
            self.settings(character.name).name_template.strip() or "LTM - {{char}} - {{chat}}"
        )
        name = (
            template.replace("{{chat}}", ref.id)
            .replace("{{char}}", character.name)
            .replace("{{user}}", user)
        )
        name = re.sub("_{2,}", "_", _FILE_UNSAFE.sub("_", name)).strip()[:MAX_NAME].strip()
        taken = {existing.casefold() for existing in self.store.names()}
        if name.casefold() not in taken:
            return name
        number = 2
        while f"{name} {number}".casefold() in taken:
            number += 1
        return f"{name} {number}"

    # -- versions -------------------------------------------------------------------------

    def versions(self, name: str) -> list[Version]:
        return self.store.versions(self.store.load(name).name)

    def undo(self, name: str, to: int | None = None) -> Version:
        """Bring back the version before the book's current one (or version ``to``)."""
        loaded = self.store.load(name)
        target = undo_target(self.store.versions(loaded.name), to)
        data = self.store.version_bytes(loaded.name, target.number)
        detail = f"back to v{target.number}"
        with self.transactions.open([loaded.name], cause=UNDO, detail=detail) as write:
            write.restore(loaded.name, data, restores=target.number)
        self._activity.record("books.undo", f"{loaded.name}: back to version {target.number}")
        return target
