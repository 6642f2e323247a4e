"""A generation's lorebooks: gathered from the chat, the persona, the character and the workspace.

The chat's book is `chat_metadata.world_info`; the persona's is
`persona.lorebook`; the character's are its card's primary book
(`data.extensions.world`, or the card's embedded book when the workspace has
no book of that name) and `world_info.extra_books`; the global ones are
`world_info.global_books`. In the manual lorebook mode of memory books the
chat's memory book (`STMemoryBooks.manualLorebook`) and the character's own
member book join the character's books (source `memory book`). A book that is
named but missing is reported, not fatal. Vectorized entries are scored by the
retrieval index's similarity to the scan text, each book indexed as its own
collection.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from charmemory.core.books.chat_state import bindings_of
from charmemory.core.retrieval import Collection
from charmemory.core.world_info import (
    Candidates,
    LoreSources,
    NamedBook,
    WorldInfoSettings,
    gather_candidates,
)
from charmemory.core.world_info.character_book import book_from_character_book
from charmemory.formats.chat import Chat
from charmemory.formats.lorebook import Lorebook
from charmemory.ports import Character, IndexItem, LorebookStore
from charmemory.services.retrieval import RetrievalService
from charmemory.services.settings import SettingsService

CHAT_BOOK_KEY = "world_info"  # chat_metadata key SillyTavern binds a chat's book under
BOOK_COLLECTION = "book:"


@dataclass(frozen=True)
class GatheredLore:
    candidates: Candidates
    sources: LoreSources
    books: list[tuple[str, str, int]] = field(default_factory=list)  # (source, name, entries)
    missing: list[str] = field(default_factory=list)  # books named but not found

    @property
    def named_books(self) -> list[NamedBook]:
        sources = self.sources
        return [
            book
            for book in (sources.chat, sources.persona, *sources.character, *sources.global_books)
            if book is not None
        ]


class LoreGatherer:
    def __init__(
        self,
        books: LorebookStore,
        settings: SettingsService,
        retrieval: Callable[[], RetrievalService | None],
    ):
        self._books = books
        self._settings = settings
        self._retrieval = retrieval
        self._indexed: dict[str, int] = {}  # book name -> id() of the book object indexed

    def gather(
        self, character: Character, chat: Chat, world_info: WorldInfoSettings
    ) -> GatheredLore:
        found: list[tuple[str, str, int]] = []
        missing: list[str] = []

        def named(source: str, name: object) -> NamedBook | None:
            if not isinstance(name, str) or not name.strip():
                return None
            book = self._books.load(name)
            if book is None:
                missing.append(name)
                return None
            found.append((source, name, len(book.entries)))
            return NamedBook(name, book)

        chat_book = named("chat", chat.header.chat_metadata.get(CHAT_BOOK_KEY))
        persona = named("persona", self._settings.value("persona.lorebook"))
        own = [self._primary(character, found, missing)]
        own += [
            named("character", n)
            for n in self._settings.value("world_info.extra_books", character.name)
        ]
        own += [named("memory book", n) for n in self._memory_books(character, chat)]
        global_books = [named("global", n) for n in self._settings.value("world_info.global_books")]
        sources = LoreSources(
            chat=chat_book,
            persona=persona,
            character=tuple(book for book in own if book is not None),
            global_books=tuple(book for book in global_books if book is not None),
        )
        return GatheredLore(gather_candidates(sources, world_info), sources, found, missing)

    def _memory_books(self, character: Character, chat: Chat) -> list[str]:
        """In manual mode, the chat's memory book and the character's own member book."""
        if self._settings.value("books.lorebook_mode", character.name) != "manual":
            return []
        bindings = bindings_of(chat.header)
        member = bindings.member_books.get(character.card_path.name)
        return [name for name in (bindings.manual_book, member) if name]

    def _primary(
        self, character: Character, found: list[tuple[str, str, int]], missing: list[str]
    ) -> NamedBook | None:
        name = character.card.extensions.get("world")
        book: Lorebook | None = None
        if isinstance(name, str) and name.strip():
            book = self._books.load(name)
        if book is None and character.card.character_book:
            book = book_from_character_book(character.card.character_book)
            name = name if isinstance(name, str) and name.strip() else f"{character.name}'s book"
        if book is None:
            if isinstance(name, str) and name.strip():
                missing.append(name)
            return None
        assert isinstance(name, str)
        found.append(("character", name, len(book.entries)))
        return NamedBook(name, book)

    async def vector_scores(
        self, lore: GatheredLore, candidates: Candidates, query: str
    ) -> dict[tuple[str, int], float]:
        """Similarity of each vectorized entry to ``query`` (none without the index)."""
        wanted = {item.entry.book for item in candidates.entries if item.entry.vectorized}
        retrieval = self._retrieval() if wanted and query.strip() else None
        if retrieval is None:
            return {}
        scores: dict[tuple[str, int], float] = {}
        for named_book in lore.named_books:
            if named_book.name not in wanted:
                continue
            collection = Collection(BOOK_COLLECTION + named_book.name)
            if self._indexed.get(named_book.name) != id(named_book.book):
                items = [
                    IndexItem(entry.content, {"uid": uid})
                    for uid, entry in named_book.book.entries.items()
                    if entry.to_dict().get("vectorized") and entry.content.strip()
                ]
                await retrieval.index_items(collection, items)
                self._indexed[named_book.name] = id(named_book.book)
            for hit in await retrieval.nearest(collection, query, len(named_book.book.entries)):
                scores[(named_book.name, int(hit.payload["uid"]))] = hit.cosine
        return scores
