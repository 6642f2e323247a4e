import sqlite3
import threading
from collections.abc import Iterator, Sequence
from datetime import date
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from charmemory.adapters.collection_snapshot import Candidate, CollectionSnapshot
from charmemory.adapters.compute_thread import on_compute_thread
from charmemory.adapters.migrations import MIGRATIONS
from charmemory.adapters.retrieval_log import SqliteRetrievalLog
from charmemory.adapters.sqlite_db import migrate
from charmemory.adapters.sqlite_index import SqliteIndex
from charmemory.core.time_question import Days
from charmemory.errors import ConfigError
from charmemory.ports import IndexItem, RetrievalIndex, RetrievalLog
from tests.support.word_hash_embedder import WordHashEmbedder


def open_db(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    migrate(conn, MIGRATIONS)
    return conn


@pytest.fixture
def conn(tmp_path: Path) -> Iterator[sqlite3.Connection]:
    conn = open_db(tmp_path / "state.db")
    yield conn
    conn.close()


@pytest.fixture
def embedder() -> WordHashEmbedder:
    return WordHashEmbedder()


@pytest.fixture
def index(conn: sqlite3.Connection, embedder: WordHashEmbedder) -> SqliteIndex:
    return SqliteIndex(conn, embedder, embed_batch=100)


MEMORIES = [
    "Elara is afraid of deep water since her brother drowned.",
    "Seraphina keeps moonflowers in the glade.",
    "The dragon burned the merchant ships in the harbour.",
    "Kael owes the blacksmith forty silver coins.",
]


def items(texts: Sequence[str]) -> list[IndexItem]:
    return [IndexItem(text, {"n": i}) for i, text in enumerate(texts)]


async def search(index: SqliteIndex, embedder: WordHashEmbedder, query: str, k: int = 3):
    vector = (await embedder.embed([query]))[0]
    return await index.search("char:A", query, vector, k)


async def test_sync_embeds_only_new_texts(
    conn: sqlite3.Connection, index: SqliteIndex, embedder: WordHashEmbedder
) -> None:
    first = await index.sync("char:A", items(MEMORIES))
    assert (first.added, first.removed, first.kept, first.embedded) == (4, 0, 0, 4)

    version = "SELECT version FROM retrieval_collections WHERE name = 'char:A'"
    before = conn.execute(version).fetchone()[0]

    again = await index.sync("char:A", items(MEMORIES))

    assert (again.added, again.removed, again.kept, again.embedded) == (0, 0, 4, 0)
    assert embedder.embedded == 4
    assert conn.execute(version).fetchone()[0] == before  # the cached matrix stays valid
    assert isinstance(index, RetrievalIndex)


async def test_one_edit_among_many_embeds_one_item(
    index: SqliteIndex, embedder: WordHashEmbedder
) -> None:
    texts = [f"memory number {i} about topic {i % 17}" for i in range(1000)]
    await index.sync("char:A", items(texts))
    before = embedder.embedded
    texts[500] = "memory number 500 was edited by hand"

    report = await index.sync("char:A", items(texts))

    assert (report.added, report.removed, report.kept, report.embedded) == (1, 1, 999, 1)
    assert embedder.embedded - before == 1
    hits = await search(index, embedder, "edited by hand", k=1)
    assert hits[0].text == "memory number 500 was edited by hand"


async def test_moved_items_keep_their_vectors_and_get_new_payloads(
    index: SqliteIndex, embedder: WordHashEmbedder
) -> None:
    await index.sync("char:A", items(MEMORIES))
    moved = items(["A new first memory about apples.", *MEMORIES])

    report = await index.sync("char:A", moved)

    assert (report.added, report.kept, report.embedded) == (1, 4, 1)
    hits = await search(index, embedder, "dragon burned ships")
    dragon = next(hit for hit in hits if "dragon" in hit.text)
    assert dragon.payload == {"n": 3}


async def test_a_sync_that_changes_nothing_leaves_the_collection_as_it_was(
    index: SqliteIndex, conn: sqlite3.Connection
) -> None:
    # A tuple is stored as a JSON list: it reads back different but is not a change.
    tagged = [
        IndexItem(text, {"n": i, "tags": ("fear", "water")}) for i, text in enumerate(MEMORIES)
    ]
    await index.sync("char:A", tagged)
    version = conn.execute("SELECT version FROM retrieval_collections").fetchone()[0]

    await index.sync("char:A", tagged)
    await index.sync(
        "char:A",
        [IndexItem(t, {"tags": ["fear", "water"], "n": i}) for i, t in enumerate(MEMORIES)],
    )

    assert conn.execute("SELECT version FROM retrieval_collections").fetchone()[0] == version
    await index.sync("char:A", items(MEMORIES))
    assert conn.execute("SELECT version FROM retrieval_collections").fetchone()[0] == version + 1


async def test_a_stored_payload_that_is_not_json_is_written_again(
    index: SqliteIndex, embedder: WordHashEmbedder, conn: sqlite3.Connection
) -> None:
    await index.sync("char:A", items(MEMORIES))
    conn.execute("UPDATE retrieval_items SET payload = '{not json'")

    report = await index.sync("char:A", items(MEMORIES))

    assert (report.added, report.kept, report.embedded) == (0, 4, 0)
    hits = await search(index, embedder, "dragon burned ships")
    assert next(hit for hit in hits if "dragon" in hit.text).payload == {"n": 2}


async def test_removed_items_disappear_from_both_signals(
    index: SqliteIndex, embedder: WordHashEmbedder
) -> None:
    await index.sync("char:A", items(MEMORIES))
    report = await index.sync("char:A", items(MEMORIES[1:]))
    assert report.removed == 1

    hits = await search(index, embedder, "Elara drowned brother", k=10)
    assert all("Elara" not in hit.text for hit in hits)
    assert all(hit.bm25 is None for hit in hits)


async def test_a_different_model_re_embeds_everything(conn: sqlite3.Connection) -> None:
    await SqliteIndex(conn, WordHashEmbedder("words-v1")).sync("char:A", items(MEMORIES))
    other = WordHashEmbedder("words-v2", dimensions=32)

    report = await SqliteIndex(conn, other).sync("char:A", items(MEMORIES))

    assert report.reembedded_all and report.embedded == 4 and report.kept == 0
    stats = await SqliteIndex(conn, other).stats("char:A")
    assert stats is not None
    assert (stats.model, stats.dimensions, stats.items) == ("words-v2", 32, 4)
    with pytest.raises(ConfigError, match="indexed with words-v2, not words-v1"):
        await SqliteIndex(conn, WordHashEmbedder("words-v1")).search("char:A", "x", np.ones(64), 3)


async def test_duplicate_texts_are_stored_once(index: SqliteIndex) -> None:
    report = await index.sync("char:A", items([MEMORIES[0], MEMORIES[0], MEMORIES[1]]))
    assert (report.added, report.kept) == (2, 0)
    stats = await index.stats("char:A")
    assert stats is not None and stats.items == 2


async def test_search_reports_both_signals_with_ranks(
    index: SqliteIndex, embedder: WordHashEmbedder
) -> None:
    await index.sync("char:A", items(MEMORIES))

    hits = await search(index, embedder, "Kael owes blacksmith money?", k=2)

    kael = next(hit for hit in hits if hit.text.startswith("Kael"))
    assert kael.bm25_rank == 1 and kael.bm25 is not None and kael.bm25 > 0
    assert kael.vector_rank == 1 and 0 < kael.cosine <= 1.0001
    assert [hit.vector_rank for hit in hits] == sorted(hit.vector_rank for hit in hits)
    assert len({hit.key for hit in hits}) == len(hits)


async def test_lexical_matches_join_the_vector_candidates(
    index: SqliteIndex, embedder: WordHashEmbedder
) -> None:
    filler = [f"filler line {i} about nothing at all" for i in range(50)]
    await index.sync("char:A", items([*filler, "The password is xylophone."]))

    hits = await search(index, embedder, "filler nothing xylophone", k=3)

    password = next(hit for hit in hits if "xylophone" in hit.text)
    assert password.bm25_rank is not None and password.vector_rank > 3


async def test_collections_do_not_see_each_other(
    index: SqliteIndex, embedder: WordHashEmbedder
) -> None:
    await index.sync("char:A", items(MEMORIES[:2]))
    await index.sync("char:B", items(MEMORIES[2:]))
    hits = await search(index, embedder, "dragon harbour ships blacksmith", k=10)
    assert sorted(hit.text for hit in hits) == sorted(MEMORIES[:2])
    assert all(hit.bm25 is None for hit in hits)
    assert await index.collections() == ["char:A", "char:B"]


async def test_purge_forgets_a_collection(index: SqliteIndex, embedder: WordHashEmbedder) -> None:
    await index.sync("char:A", items(MEMORIES))
    assert await index.purge("char:A") == 4
    assert await index.stats("char:A") is None
    assert await search(index, embedder, "dragon") == []
    assert await index.purge("char:A") == 0


async def test_changes_from_another_connection_are_seen(
    tmp_path: Path, embedder: WordHashEmbedder
) -> None:
    reader = SqliteIndex(open_db(tmp_path / "db"), embedder)
    writer = SqliteIndex(open_db(tmp_path / "db"), embedder)
    await writer.sync("char:A", items(MEMORIES[:1]))
    assert len(await reader.search("char:A", "", (await embedder.embed(["x"]))[0], 5)) == 1

    await writer.sync("char:A", items(MEMORIES))

    assert len(await reader.search("char:A", "", (await embedder.embed(["x"]))[0], 5)) == 4


async def test_progress_is_reported_per_batch(conn: sqlite3.Connection) -> None:
    seen: list[tuple[int, int]] = []
    index = SqliteIndex(conn, WordHashEmbedder(), embed_batch=2)
    await index.sync("char:A", items(MEMORIES[:3]), on_progress=lambda d, t: seen.append((d, t)))
    assert seen == [(2, 3), (3, 3)]


async def test_vectors_of_the_wrong_size_are_refused(conn: sqlite3.Connection) -> None:
    embedder = WordHashEmbedder()
    index = SqliteIndex(conn, embedder)
    await index.sync("char:A", items(MEMORIES[:1]))
    embedder.dimensions = 16
    with pytest.raises(ConfigError, match="16-dimensional vectors"):
        await index.sync("char:A", items(MEMORIES))
    with pytest.raises(ConfigError, match="query vector has 3 dimensions"):
        await index.search("char:A", "x", np.ones(3), 3)
    with pytest.raises(ConfigError, match="not a number"):
        await index.search("char:A", "x", np.full(64, np.nan), 3)


@pytest.mark.parametrize(
    "query",
    ["\"what's up? AND (", "NEAR(a b", "*", "-dragon", "^start", "col:umn", 'a"b', "OR AND NOT"],
)
async def test_search_syntax_in_user_text_is_plain_text(
    index: SqliteIndex, embedder: WordHashEmbedder, query: str
) -> None:
    await index.sync("char:A", items([*MEMORIES, "what is up with the dragon AND the near ships"]))
    hits = await search(index, embedder, query, k=10)
    lexical = {hit.text for hit in hits if hit.bm25_rank is not None}
    if query == "-dragon":
        assert lexical == {MEMORIES[2], "what is up with the dragon AND the near ships"}


async def test_word_forms_match_through_stemming(
    index: SqliteIndex, embedder: WordHashEmbedder
) -> None:
    await index.sync("char:A", items(MEMORIES))
    hits = await search(index, embedder, "Who is drowning? ÉLARA!", k=1)
    elara = next(hit for hit in hits if hit.text == MEMORIES[0])
    assert elara.bm25_rank == 1


async def test_ranks_count_the_rows_that_score_higher(
    index: SqliteIndex, embedder: WordHashEmbedder
) -> None:
    texts = [f"filler line {i} about nothing at all" for i in range(40)]
    await index.sync("char:A", items([*texts, "The password is xylophone."]))
    query = "filler nothing xylophone"
    vector = (await embedder.embed([query]))[0]
    every = (await embedder.embed([*texts, "The password is xylophone."])) @ vector

    hits = await index.search("char:A", query, vector, 3)

    password = next(hit for hit in hits if "xylophone" in hit.text)
    assert password.vector_rank == 1 + int((every > password.cosine).sum())
    assert password.bm25_rank == 1  # the rarest word outweighs the common ones
    assert sorted(h.bm25_rank for h in hits if h.bm25_rank)[:3] == [1, 2, 2]


async def test_re_embedding_replaces_every_vector_in_place(
    conn: sqlite3.Connection, index: SqliteIndex, embedder: WordHashEmbedder
) -> None:
    await index.sync("char:A", items(MEMORIES))
    ids = conn.execute("SELECT id FROM retrieval_items ORDER BY id").fetchall()
    conn.execute("UPDATE retrieval_items SET vector = zeroblob(256)")  # damaged vectors

    report = await index.sync("char:A", items(MEMORIES), reembed=True)

    assert (report.embedded, report.kept, report.added, report.reembedded_all) == (4, 4, 0, True)
    assert conn.execute("SELECT id FROM retrieval_items ORDER BY id").fetchall() == ids
    hits = await search(index, embedder, "moonflowers glade", k=1)
    assert hits[0].text == MEMORIES[1] and hits[0].cosine > 0.5


async def test_a_sync_plan_changes_nothing(
    conn: sqlite3.Connection, index: SqliteIndex, embedder: WordHashEmbedder
) -> None:
    empty = await index.plan_sync("char:A", items(MEMORIES))
    assert (empty.added, empty.removed, empty.kept, empty.embedded) == (4, 0, 0, 4)
    await index.sync("char:A", items(MEMORIES))
    before = embedder.embedded

    plan = await index.plan_sync("char:A", items([*MEMORIES[1:], "A brand new memory."]))

    assert (plan.added, plan.removed, plan.kept, plan.embedded) == (1, 1, 3, 1)
    assert embedder.embedded == before
    stats = await index.stats("char:A")
    assert stats is not None and stats.items == 4
    other = await SqliteIndex(conn, WordHashEmbedder("words-v2")).plan_sync("char:A", items([]))
    assert (other.removed, other.reembedded_all) == (4, True)


async def test_retrieval_log_keeps_the_latest(conn: sqlite3.Connection) -> None:
    log = SqliteRetrievalLog(conn, keep=2)
    assert isinstance(log, RetrievalLog)
    assert await log.last("char:A") is None
    for n in range(3):
        await log.record("char:A", f"query {n}", {"top_k": 5}, [{"key": "k", "n": n}], "text")
    await log.record("char:B", "other", {}, [], "")

    last = await log.last("char:A")

    assert last is not None
    assert (last.query, last.settings, last.candidates) == (
        "query 2",
        {"top_k": 5},
        [{"key": "k", "n": 2}],
    )
    assert (
        conn.execute("SELECT count(*) FROM retrievals WHERE collection='char:A'").fetchone()[0] == 2
    )


async def test_a_loaded_collection_reads_only_the_rows_written_since(
    tmp_path: Path, embedder: WordHashEmbedder
) -> None:
    conn = open_db(tmp_path / "db")
    index = SqliteIndex(conn, embedder)
    texts = [f"{MEMORIES[i % 4]} Told on day {i}." for i in range(40)]
    await index.sync("char:A", items(texts))
    query = "dragon burned ships harbour"
    vector = (await embedder.embed([query]))[0]
    await index.search("char:A", query, vector, 5)  # loads the collection
    edited = [*texts[:7], *texts[8:], "The dragon burned the ships in the harbour at dawn."]
    await index.sync("char:A", items(edited))
    statements: list[str] = []
    conn.set_trace_callback(statements.append)

    hits = await index.search("char:A", query, vector, 5)

    conn.set_trace_callback(None)
    reads = [s for s in statements if s.startswith("SELECT id, vector, text")]
    assert reads and all("written >" in s for s in reads)
    rebuilt = await SqliteIndex(open_db(tmp_path / "db"), embedder).search(
        "char:A", query, vector, 5
    )
    signals = lambda found: [  # noqa: E731
        (h.key, round(h.cosine, 6), h.vector_rank, h.bm25 and round(h.bm25, 6), h.bm25_rank)
        for h in found
    ]
    assert signals(hits) == signals(rebuilt)
    assert any("at dawn" in hit.text for hit in hits)


async def test_a_row_rewritten_in_place_is_read_again_and_keeps_its_place(
    tmp_path: Path, embedder: WordHashEmbedder
) -> None:
    conn = open_db(tmp_path / "db")
    index = SqliteIndex(conn, embedder)
    await index.sync("char:A", items([f"{MEMORIES[i % 4]} Day {i}." for i in range(20)]))
    query = "Kael owes the blacksmith"
    vector = (await embedder.embed([query]))[0]
    await index.search("char:A", query, vector, 5)
    # Another process re-embeds row 3 with a different vector (as a new model build might).
    replacement = (await embedder.embed(["Kael owes the blacksmith forty silver coins."]))[0]
    conn.execute(
        "UPDATE retrieval_items SET vector = ?, written = 99 WHERE id = 3",
        (replacement.astype("<f4").tobytes(),),
    )
    conn.execute("UPDATE retrieval_collections SET version = 99")

    hits = await index.search("char:A", query, vector, 5)

    rebuilt = await SqliteIndex(open_db(tmp_path / "db"), embedder).search(
        "char:A", query, vector, 5
    )
    assert [(h.key, h.vector_rank, round(h.cosine, 6)) for h in hits] == [
        (h.key, h.vector_rank, round(h.cosine, 6)) for h in rebuilt
    ]


async def test_ranking_runs_on_the_compute_thread_not_the_event_loop(
    index: SqliteIndex, embedder: WordHashEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    await index.sync("char:A", items(MEMORIES))
    threads: list[int] = []
    rank = CollectionSnapshot.candidates

    def spy(self: CollectionSnapshot, *args: Any) -> list[Candidate]:
        threads.append(threading.get_ident())
        return rank(self, *args)

    monkeypatch.setattr(CollectionSnapshot, "candidates", spy)
    hits = await search(index, embedder, "Who owes the blacksmith?")

    assert MEMORIES[3] in [hit.text for hit in hits]
    assert threads == [await on_compute_thread(threading.get_ident)]
    assert threading.get_ident() not in threads


DATED = [
    ("The storm broke the mill wheel.", "2026-03-01 18:00"),
    ("A letter came from Elara's mother.", "2026-03-04 09:00"),
    ("Kael sold the old map.", "2026-03-09 12:00"),
]


async def test_the_items_of_the_days_asked_are_candidates_whatever_their_scores(
    conn: sqlite3.Connection, embedder: WordHashEmbedder
) -> None:
    index = SqliteIndex(conn, embedder)
    await index.sync("char:A", [IndexItem(t, {"block_date": d}) for t, d in DATED])
    vector = (await embedder.embed(["storm mill wheel"]))[0]

    plain = await index.search("char:A", "storm mill wheel", vector, 1)
    dated = await index.search(
        "char:A", "storm mill wheel", vector, 1, days=Days(date(2026, 3, 3), date(2026, 3, 5))
    )
    any_year = await index.search(
        "char:A", "x", vector, 1, days=Days(date(2024, 3, 9), date(2024, 3, 9), any_year=True)
    )

    assert [hit.text for hit in plain] == [DATED[0][0]]
    assert {hit.text for hit in dated} == {DATED[0][0], DATED[1][0]}
    assert DATED[2][0] in {hit.text for hit in any_year}


async def test_a_collection_takes_the_embedder_it_is_synced_with(
    conn: sqlite3.Connection, embedder: WordHashEmbedder
) -> None:
    index = SqliteIndex(conn, embedder)
    other = WordHashEmbedder("words-v2", dimensions=32)

    report = await index.sync("char:B", items(MEMORIES), embedder=other)
    vector = (await other.embed(["dragon"]))[0]
    hits = await index.search("char:B", "dragon", vector, 1, model="words-v2")

    assert report.model == "words-v2" and index.model_of("char:B") == "words-v2"
    assert MEMORIES[2] in {hit.text for hit in hits}
    assert embedder.embedded == 0
    with pytest.raises(ConfigError, match="indexed with words-v2"):
        await index.search("char:B", "dragon", vector, 1)
