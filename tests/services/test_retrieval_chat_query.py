"""A chat query's vector: each message embedded apart, added, and made ahead of time."""

import asyncio
import sqlite3
from collections.abc import Sequence

import numpy as np
import pytest

from charmemory.adapters.retrieval_log import SqliteRetrievalLog
from charmemory.adapters.sqlite_index import SqliteIndex
from charmemory.core.retrieval import Collection, chat_query_parts, items_from_memory_file
from charmemory.core.retrieval_settings import RetrievalSettings
from charmemory.errors import CharMemoryError
from charmemory.formats.memory_file import parse_memory_file
from charmemory.services.retrieval import RECENT_QUERIES, RetrievalService
from tests.support.word_hash_embedder import WordHashEmbedder

MIRA = Collection("char:Mira", "Mira")
FILE = """<memory chat="c" date="2026-05-02 18:20">
- A navy cutter hit the aft balloon with cannon fire.
- Juno keeps a tin of ginger biscuits under the chart table.
</memory>
"""
REPLY = "*Mira taps the patched aft balloon.* The cannon fire nearly took it."
ASKED = "Do you still have those ginger biscuits, Juno?"


class FailingOnce(WordHashEmbedder):
    """Refuses its first call, as a model that is still loading might."""

    def __init__(self) -> None:
        super().__init__()
        self.failed = False

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not self.failed:
            self.failed = True
            raise CharMemoryError("the embedding model is not ready")
        return await super().embed(texts)


async def synced(conn: sqlite3.Connection, embedder: WordHashEmbedder) -> RetrievalService:
    service = RetrievalService(
        SqliteIndex(conn, embedder),
        embedder,
        SqliteRetrievalLog(conn),
        RetrievalSettings(min_cosine=0),
    )
    await service.sync(MIRA, items_from_memory_file(MIRA.name, "Mira.md", parse_memory_file(FILE)))
    embedder.calls.clear()
    return service


async def test_each_message_is_embedded_apart_and_the_vectors_are_added(
    conn: sqlite3.Connection,
) -> None:
    embedder = WordHashEmbedder()
    service = await synced(conn, embedder)

    found = await service.retrieve_for_chat(MIRA, ["old news", REPLY, ASKED], 2)

    assert embedder.calls == [[ASKED, REPLY]]  # newest first, the oldest message left out
    # The query's vector is the words-weighted sum: each message's memory is found, the
    # newest message's first.
    assert [r.text for r in found.results] == [
        "Juno keeps a tin of ginger biscuits under the chart table.",
        "A navy cutter hit the aft balloon with cannon fire.",
    ]
    vectors = dict(zip([ASKED, REPLY], await embedder.embed([ASKED, REPLY]), strict=True))
    expected = sum(w * vectors[t] for t, w in chat_query_parts([REPLY, ASKED], 2, 96))
    expected /= np.linalg.norm(expected)
    for result in found.results:
        (item,) = [
            hit
            for hit in await SqliteIndex(conn, embedder).search(MIRA.name, "", expected, 5)
            if hit.payload["id"] == result.id
        ]
        assert result.cosine == pytest.approx(item.cosine, abs=1e-5)


async def test_a_message_embedded_ahead_is_not_embedded_again(conn: sqlite3.Connection) -> None:
    embedder = WordHashEmbedder()
    service = await synced(conn, embedder)

    service.prefetch(MIRA, REPLY)  # the reply, as it is written
    await asyncio.sleep(0)
    service.prefetch(MIRA, ASKED)  # the user's message, still being embedded as it is asked
    found = await service.retrieve_for_chat(MIRA, [REPLY, ASKED])

    assert embedder.calls == [[REPLY], [ASKED]]
    assert found.results
    service.prefetch(MIRA, ASKED)  # known already: nothing to do
    service.prefetch(MIRA, "   ")
    await asyncio.sleep(0)
    assert embedder.calls == [[REPLY], [ASKED]]


async def test_a_failed_prefetch_is_embedded_again_by_the_query(
    conn: sqlite3.Connection,
) -> None:
    embedder = FailingOnce()
    embedder.failed = True  # the index builds
    service = await synced(conn, embedder)
    embedder.failed = False

    service.prefetch(MIRA, ASKED)
    await asyncio.sleep(0)
    found = await service.retrieve_for_chat(MIRA, [ASKED])

    assert embedder.calls == [[ASKED]]  # the second attempt; the first was refused
    assert found.results[0].text == "Juno keeps a tin of ginger biscuits under the chart table."


async def test_more_queries_at_once_than_vectors_kept_are_all_answered(
    conn: sqlite3.Connection,
) -> None:
    embedder = WordHashEmbedder()
    service = await synced(conn, embedder)
    asked = [f"ginger biscuits number {n}" for n in range(RECENT_QUERIES + 6)]

    found = await service.retrieve_many(MIRA, asked, 1, record=False)

    assert [r.query for r in found] == asked
    assert all(r.results[0].text.startswith("Juno keeps a tin") for r in found)
