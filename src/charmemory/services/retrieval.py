"""Keeping a collection's index in sync and finding the memories that fit a chat.

The settings in force come per character (`settings_for`): granularity, fusion,
threshold, query length, embedded context and injection. Every retrieval is
recorded with all its candidates and their scores, so ``last_retrieval`` can
show why a memory was (or was not) put into the prompt. Lookups made for
another purpose (extraction's related memories and duplicate checks) pass
``record=False``: they are not what the character was shown.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any

from charmemory.core.fusion import select
from charmemory.core.injection import Injection, InjectionEntry, build_injection
from charmemory.core.language import written_in_english
from charmemory.core.retrieval import (
    Collection,
    MemoryItem,
    Provenance,
    build_query,
    chat_query_parts,
    chunk_items_from_memory_file,
    dedupe_key,
    embedding_text,
    items_from_memory_file,
    leading_words,
    newest_message,
)
from charmemory.core.retrieval_settings import (
    ENGLISH_MODEL,
    MULTILINGUAL_MODEL,
    RetrievalSettings,
)
from charmemory.core.time_question import (
    Days,
    TimeFocus,
    TimeQuestion,
    block_day,
    read_time_question,
)
from charmemory.formats.memory_file import (
    MemoryFile,
)
from charmemory.ports import (
    Embedder,
    IndexHit,
    IndexItem,
    IndexStats,
    RetrievalIndex,
    RetrievalLog,
    RetrievalRecord,
    SyncProgress,
    SyncReport,
)

# The settings in force for a character (None: a collection that is no character's).
SettingsSource = Callable[[str | None], RetrievalSettings]
# Query vectors kept for asking again: a regenerated or swiped reply repeats its query,
# and embedding a chat-length query costs more than searching 100,000 memories.
RECENT_QUERIES = 64


@dataclass(frozen=True)
class Result:
    """One retrieved memory with its scores (ranks are 1-based)."""

    id: str
    text: str
    score: float
    cosine: float
    vector_rank: int
    bm25: float | None
    bm25_rank: int | None
    provenance: Provenance

    @property
    def block_chat(self) -> str:
        return self.provenance.block_chat

    @property
    def block_date(self) -> str:
        return self.provenance.block_date


@dataclass(frozen=True)
class Retrieval:
    collection: str
    query: str
    results: list[Result]
    injection: Injection
    record_id: int | None  # None when the retrieval was not recorded


class RetrievalService:
    """Indexes memory items and answers queries; one instance reuses one loaded model."""

    def __init__(
        self,
        index: RetrievalIndex,
        embedder: Embedder,
        log: RetrievalLog,
        settings: RetrievalSettings | SettingsSource | None = None,
        *,
        multilingual: Embedder | None = None,
        multilingual_by_default: bool = True,
    ) -> None:
        """``embedder`` embeds English memories (and every memory without ``multilingual``).

        ``multilingual``: the local multilingual model, for memory files not written in
        English when `retrieval.local_model` is ``auto`` and ``multilingual_by_default``
        (it is installed), or for every file when the setting names it.
        """
        self._index = index
        self._embedder = embedder
        self._multilingual = multilingual
        self._multilingual_by_default = multilingual_by_default
        self._recent: OrderedDict[tuple[str, str], Any] = OrderedDict()
        self._log = log
        if settings is None or isinstance(settings, RetrievalSettings):
            fixed = settings or RetrievalSettings()
            self._settings: SettingsSource = lambda character: fixed
        else:
            self._settings = settings

    # ---- what a collection holds ----------------------------------------------------

    def settings_for(self, collection: Collection) -> RetrievalSettings:
        return self._settings(collection.character)

    def items_for(self, collection: Collection, file: str, memory: MemoryFile) -> list[MemoryItem]:
        """What ``collection`` holds of a memory file: chunks or bullets."""
        if collection.chunks:
            chunks = self.settings_for(collection).chunks
            return chunk_items_from_memory_file(collection.name, file, memory, chunks)
        return items_from_memory_file(collection.name, file, memory)

    # ---- keeping the index in step -------------------------------------------------

    async def sync(
        self,
        collection: Collection,
        items: Sequence[MemoryItem],
        *,
        on_progress: SyncProgress | None = None,
    ) -> SyncReport:
        """Make the collection's index hold exactly ``items``; only new texts are embedded."""
        indexed = self._indexed(collection, items)
        return await self._index.sync(
            collection.name,
            indexed,
            on_progress=on_progress,
            embedder=self._embedder_for(collection, indexed),
        )

    async def sync_file(
        self,
        collection: Collection,
        file: str,
        memory: MemoryFile,
        *,
        on_progress: SyncProgress | None = None,
    ) -> SyncReport:
        """Bring the collection in step with a memory file (`items_for` says what it holds)."""
        return await self.sync(
            collection, self.items_for(collection, file, memory), on_progress=on_progress
        )

    async def revectorize(
        self,
        collection: Collection,
        file: str,
        memory: MemoryFile,
        *,
        purge: bool = False,
        on_progress: SyncProgress | None = None,
    ) -> SyncReport:
        """Embed every item of the file again; ``purge`` forgets the collection first."""
        if purge:
            await self._index.purge(collection.name)
        items = self._indexed(collection, self.items_for(collection, file, memory))
        return await self._index.sync(
            collection.name,
            items,
            on_progress=on_progress,
            reembed=not purge,
            embedder=self._embedder_for(collection, items),
        )

    async def plan_sync_file(
        self, collection: Collection, file: str, memory: MemoryFile
    ) -> SyncReport:
        """What `sync_file` would change now; nothing is embedded or written."""
        items = self._indexed(collection, self.items_for(collection, file, memory))
        embedder = self._embedder_for(collection, items)
        return await self._index.plan_sync(collection.name, items, embedder=embedder)

    def _embedder_for(
        self,
        collection: Collection,
        items: Sequence[IndexItem] | None = None,
        settings: RetrievalSettings | None = None,
    ) -> Embedder:
        """The model a collection's items and queries are embedded with.

        Syncing decides from the items' language; a query follows what the
        collection holds. ``settings``: the collection's, when already read.
        """
        multilingual = self._multilingual
        choice = (settings or self.settings_for(collection)).local_model
        if multilingual is None or choice == ENGLISH_MODEL:
            return self._embedder
        if choice == MULTILINGUAL_MODEL:
            return multilingual
        if items is None:
            held = self._index.model_of(collection.name)
            return multilingual if held == multilingual.model_name else self._embedder
        english = written_in_english(item.text for item in items)
        return self._embedder if english or not self._multilingual_by_default else multilingual

    def _indexed(self, collection: Collection, items: Sequence[MemoryItem]) -> list[IndexItem]:
        strangers = {item.collection for item in items} - {collection.name}
        if strangers:
            raise ValueError(
                f"items of {', '.join(sorted(strangers))} synced into {collection.name}"
            )
        context = self.settings_for(collection).context
        return [IndexItem(embedding_text(item, context), item.to_payload()) for item in items]

    # ---- answering -----------------------------------------------------------------

    async def search(
        self, collection: Collection, query: str, k: int | None = None, *, record: bool = True
    ) -> list[Result]:
        return (await self.retrieve(collection, query, k, record=record)).results

    async def retrieve(
        self,
        collection: Collection,
        query: str,
        k: int | None = None,
        *,
        record: bool = True,
        now: date | None = None,
    ) -> Retrieval:
        """Ranked results and the injection text for ``query``; recorded unless told not.

        ``now``: the day the query is asked, for questions such as "what happened yesterday?".
        """
        return (await self.retrieve_many(collection, [query], k, record=record, now=now))[0]

    async def retrieve_for_chat(
        self,
        collection: Collection,
        messages: Sequence[str],
        k: int | None = None,
        *,
        now: date | None = None,
    ) -> Retrieval:
        """Retrieve for the chat's last messages (``query_messages`` of them).

        A question about time is read from the newest message only; ``now`` is the
        day of the chat's last message.
        """
        settings = self.settings_for(collection)
        query = build_query(messages, settings.query_messages)
        questions = [newest_message(messages)]
        parts = [chat_query_parts(messages, settings.query_messages, settings.query_vector_words)]
        outcome = await self._retrieve_many(
            collection,
            settings,
            [query],
            k,
            record=True,
            now=now,
            questions=questions,
            parts=parts,
        )
        return outcome[0]

    def prefetch(self, collection: Collection, message: str) -> None:
        """Start embedding ``message`` for a coming chat query that holds it, and return.

        For the user's message as it is sent (embedded while the chat is read) and a
        reply as it is written (so the next turn embeds only the user's words). The
        vector waits among the recent ones; a failure here is the query's to report.
        """
        if not message.strip():
            return
        settings = self.settings_for(collection)
        embedder = self._embedder_for(collection, settings=settings)
        text = leading_words(message, settings.query_vector_words)
        key = (embedder.model_name, text)
        if key not in self._recent:
            made = asyncio.ensure_future(_first_vector(embedder, text))
            made.add_done_callback(_seen)
            self._remember(key, made)

    async def retrieve_many(
        self,
        collection: Collection,
        queries: Sequence[str],
        k: int | None = None,
        *,
        record: bool = True,
        now: date | None = None,
        questions: Sequence[str] | None = None,
    ) -> list[Retrieval]:
        """Several queries against one collection, embedded together in one call.

        ``questions``: per query, the text a question about time is read from
        (default: the query itself).
        """
        settings = self.settings_for(collection)
        return await self._retrieve_many(
            collection, settings, queries, k, record=record, now=now, questions=questions
        )

    async def _retrieve_many(
        self,
        collection: Collection,
        settings: RetrievalSettings,
        queries: Sequence[str],
        k: int | None,
        *,
        record: bool,
        now: date | None,
        questions: Sequence[str] | None,
        parts: Sequence[Sequence[tuple[str, float]]] | None = None,
    ) -> list[Retrieval]:
        """``parts``: per query, the texts its vector adds up (default: its leading words)."""
        asked = [query.strip() for query in queries]
        times = [
            read_time_question(text, now) if settings.time_questions and text.strip() else None
            for text in (questions if questions is not None else asked)
        ]
        anchors = [t.anchor for t in times if t is not None and t.anchor]
        if parts is None:
            parts = [[(leading_words(query, settings.query_vector_words), 1.0)] for query in asked]
        wanted = [text for query_parts in parts for text, _ in query_parts] + anchors
        embedder = self._embedder_for(collection, settings=settings)
        vector_of = await self._query_vectors(embedder, wanted)
        top_k = k or settings.retrieved
        pool = max(settings.candidates, top_k)
        outcomes = []
        for query, time, query_parts in zip(asked, times, parts, strict=True):
            hits: list[IndexHit] = []
            focus = None
            if query and query_parts:
                days = await self._days_asked(
                    collection, settings, time, vector_of, embedder.model_name
                )
                if time is not None:
                    focus = TimeFocus(days, time.order, _day_of_hit)
                hits = await self._index.search(
                    collection.name,
                    query,
                    _sum_of(vector_of, query_parts),
                    pool,
                    days=days,
                    model=embedder.model_name,
                )
            outcome = await self._answer(collection, settings, query, hits, top_k, record, focus)
            outcomes.append(outcome)
        return outcomes

    async def _days_asked(
        self,
        collection: Collection,
        settings: RetrievalSettings,
        time: TimeQuestion | None,
        vector_of: dict[str, Any],
        model: str,
    ) -> Days | None:
        """The days a question asks about; for "the day after X", X's day comes from a search."""
        if time is None or time.anchor is None:
            return None if time is None else time.days
        pool = max(settings.candidates, 1)
        hits = await self._index.search(
            collection.name, time.anchor, vector_of[time.anchor], pool, model=model
        )
        found = select(hits, settings.fusion, top_k=1, min_cosine=settings.min_cosine)
        day = _day_of_hit(found[0][0]) if found else None
        return time.days_from(day) if day is not None else None

    async def _query_vectors(self, embedder: Embedder, texts: Sequence[str]) -> dict[str, Any]:
        """Each text's vector; recent ones come from memory (a swipe asks the same again,
        and the next turn's query holds this turn's messages), or are being made."""
        model = embedder.model_name
        missing = list(dict.fromkeys(t for t in texts if (model, t) not in self._recent))
        if missing:
            for text, vector in zip(missing, await embedder.embed(missing), strict=True):
                self._remember((model, text), vector)
        found = {}
        for text in dict.fromkeys(texts):
            held = self._recent.get((model, text))
            if isinstance(held, asyncio.Future):
                try:  # a prefetch: awaited, not cancelled with this query
                    held = await asyncio.shield(held)
                except Exception:  # the prefetch failed: ask again, here
                    held = (await embedder.embed([text]))[0]
                self._remember((model, text), held)
            elif held is None:  # pushed out of memory by the texts made after it
                held = (await embedder.embed([text]))[0]
            else:
                self._recent.move_to_end((model, text))
            found[text] = held
        return found

    def _remember(self, key: tuple[str, str], vector: Any) -> None:
        self._recent[key] = vector
        self._recent.move_to_end(key)
        while len(self._recent) > RECENT_QUERIES:
            self._recent.popitem(last=False)

    async def _answer(
        self,
        collection: Collection,
        settings: RetrievalSettings,
        query: str,
        hits: list[IndexHit],
        top_k: int,
        record: bool,
        time: TimeFocus | None = None,
    ) -> Retrieval:
        chosen = select(
            hits,
            settings.fusion,
            top_k=top_k,
            min_cosine=settings.min_cosine,
            dedupe_by=(lambda hit: dedupe_key(hit.payload["text"])) if settings.dedupe else None,
            time=time,
            block_of=_block_of_hit,
            block_weight=settings.block_weight,
        )
        results = [_result(collection.name, hit, score) for hit, score in chosen]
        injection = build_injection(
            [_entry(result) for result in results], settings.injection_in_force
        )
        if not record:
            return Retrieval(collection.name, query, results, injection, None)
        scores = {hit.key: score for hit, score in chosen}
        candidates = [
            {
                "id": hit.payload.get("id"),
                "text": hit.payload.get("text"),
                "cosine": hit.cosine,
                "vector_rank": hit.vector_rank,
                "bm25": hit.bm25,
                "bm25_rank": hit.bm25_rank,
                "score": scores.get(hit.key),
                "injected": hit.payload.get("id") in injection.included,
            }
            for hit in hits
        ]
        record_id = await self._log.record(
            collection.name, query, settings.to_dict(), candidates, injection.text
        )
        return Retrieval(collection.name, query, results, injection, record_id)

    # ---- other collections (lorebook entries) ---------------------------------------

    async def index_items(self, collection: Collection, items: Sequence[IndexItem]) -> SyncReport:
        """Make a collection of other things than memories hold exactly ``items``."""
        return await self._index.sync(
            collection.name, items, embedder=self._embedder_for(collection, items)
        )

    async def nearest(self, collection: Collection, query: str, k: int) -> list[IndexHit]:
        """The items of ``collection`` nearest to ``query`` by their vectors, nearest first."""
        embedder = self._embedder_for(collection)
        vectors = await self._query_vectors(embedder, [query])
        hits = await self._index.search(
            collection.name, query, vectors[query], k, model=embedder.model_name
        )
        return sorted(hits, key=lambda hit: hit.vector_rank)

    # ---- looking at it -------------------------------------------------------------

    async def last_retrieval(self, collection: Collection) -> RetrievalRecord | None:
        return await self._log.last(collection.name)

    async def purge(self, collection: Collection) -> int:
        return await self._index.purge(collection.name)

    async def stats(self, collection: Collection) -> IndexStats | None:
        return await self._index.stats(collection.name)


async def _first_vector(embedder: Embedder, text: str) -> Any:
    return (await embedder.embed([text]))[0]


def _seen(made: asyncio.Future[Any]) -> None:
    """A prefetch's failure is noted as seen: the query that needs the vector asks again."""
    if not made.cancelled():
        made.exception()


def _sum_of(vector_of: dict[str, Any], parts: Sequence[tuple[str, float]]) -> Any:
    """The unit vector of the parts' weighted sum (one part: its own vector)."""
    if len(parts) == 1:
        return vector_of[parts[0][0]]
    total = sum(weight * vector_of[text] for text, weight in parts)  # arrays, added
    return total / max(float(total @ total) ** 0.5, 1e-12)


def _block_of_hit(hit: IndexHit) -> tuple[tuple[str, int], int] | None:
    payload = hit.payload
    size = payload.get("block_size")
    if not size or payload.get("chunk") is not None:
        return None
    return (str(payload.get("file")), int(payload.get("block_index", 0))), int(size)


def _day_of_hit(hit: IndexHit) -> date | None:
    return block_day(str(hit.payload.get("block_date", "")))


def _result(collection: str, hit: IndexHit, score: float) -> Result:
    item = MemoryItem.from_payload(collection, hit.payload)
    return Result(
        id=item.id,
        text=item.text,
        score=score,
        cosine=hit.cosine,
        vector_rank=hit.vector_rank,
        bm25=hit.bm25,
        bm25_rank=hit.bm25_rank,
        provenance=item.provenance,
    )


def _entry(result: Result) -> InjectionEntry:
    source = result.provenance
    return InjectionEntry(
        id=result.id,
        text=result.text,
        place=source.place,
        chat=source.block_chat,
        date=source.block_date,
        topic=source.topic,
    )
