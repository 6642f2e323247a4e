import sqlite3
from collections.abc import Callable

import pytest

from charmemory.adapters.embed_onnx import OnnxEmbedder
from charmemory.adapters.model_install import MINILM_L6_V2_INT8, ModelInstaller
from charmemory.adapters.retrieval_log import SqliteRetrievalLog
from charmemory.adapters.sqlite_index import SqliteIndex
from charmemory.core.chunking import ChunkSettings, chunk_file
from charmemory.core.fusion import SingleSignal
from charmemory.core.retrieval import (
    Collection,
    EmbeddingContext,
    MemoryItem,
    items_from_memory_file,
)
from charmemory.core.retrieval_settings import RetrievalSettings
from charmemory.formats.memory_file import (
    parse_memory_file,
)
from charmemory.ports import Embedder
from charmemory.services.retrieval import RetrievalService
from tests.support.word_hash_embedder import WordHashEmbedder

MEMORY_FILE = """<memory chat="Elara - 2026-02-15@10h00m00s" date="2026-02-15 10:42">
- [Elara, Player — the drowned brother]
- Elara is afraid of deep water.
- Her brother Tomas drowned in the mill pond when she was nine.
</memory>

<memory chat="Elara - 2026-03-01@09h00m00s" date="2026-03-01 09:30">
- Elara learned to read from the temple scribe.
- Kael owes the blacksmith forty silver coins.
- The dragon burned the merchant ships in the harbour.
- Elara is afraid of deep water.
</memory>
"""
COLLECTION = Collection("char:Elara", "Elara")
OTHER = Collection("char:Other", "Other")


def make_service(
    conn: sqlite3.Connection, embedder: Embedder, settings: RetrievalSettings | None = None
) -> RetrievalService:
    return RetrievalService(
        SqliteIndex(conn, embedder), embedder, SqliteRetrievalLog(conn), settings
    )


def memory_items(text: str = MEMORY_FILE) -> list[MemoryItem]:
    return items_from_memory_file(COLLECTION.name, "Elara.md", parse_memory_file(text))


@pytest.fixture
def embedder() -> WordHashEmbedder:
    return WordHashEmbedder()


@pytest.fixture
async def service(conn: sqlite3.Connection, embedder: WordHashEmbedder) -> RetrievalService:
    service = make_service(conn, embedder)
    await service.sync(COLLECTION, memory_items())
    return service


async def test_search_returns_ranked_memories_with_provenance(service: RetrievalService) -> None:
    results = await service.search(COLLECTION, "Who owes the blacksmith coins?", k=2)

    assert results[0].text == "Kael owes the blacksmith forty silver coins."
    assert results[0].block_chat == "Elara - 2026-03-01@09h00m00s"
    assert results[0].block_date == "2026-03-01 09:30"
    assert results[0].provenance.bullet_index == 1
    assert results[0].bm25_rank == 1 and results[0].score > results[1].score
    assert len(results) == 2


async def test_every_retrieval_is_recorded_with_its_candidates(service: RetrievalService) -> None:
    retrieval = await service.retrieve(COLLECTION, "dragon ships harbour")

    record = await service.last_retrieval(COLLECTION)

    assert record is not None and record.id == retrieval.record_id
    assert record.query == "dragon ships harbour"
    assert record.injected == retrieval.injection.text
    assert retrieval.injection.text.startswith("Related information:\n- ")
    assert record.settings["fusion"]["kind"] == "weighted"
    dragon = next(c for c in record.candidates if "dragon" in c["text"])
    assert dragon["injected"] and dragon["bm25_rank"] == 1 and dragon["score"] > 0
    assert len(record.candidates) == 6  # every indexed memory was a candidate


async def test_asking_again_does_not_embed_the_query_again(
    service: RetrievalService, embedder: WordHashEmbedder
) -> None:
    first = await service.retrieve(COLLECTION, "dragon ships harbour")
    before = embedder.embedded

    again = await service.retrieve(COLLECTION, "dragon ships harbour")
    await service.retrieve(COLLECTION, "afraid of deep water")

    assert embedder.embedded == before + 1  # only the new query
    assert [r.id for r in again.results] == [r.id for r in first.results]


async def test_a_lookup_made_for_another_purpose_is_not_recorded(
    service: RetrievalService,
) -> None:
    shown = await service.retrieve(COLLECTION, "dragon ships harbour")
    lookup = await service.retrieve(COLLECTION, "afraid of deep water", record=False)

    record = await service.last_retrieval(COLLECTION)

    assert lookup.record_id is None and lookup.results
    assert record is not None and record.id == shown.record_id
    assert record.query == "dragon ships harbour"


async def test_the_same_memory_in_two_blocks_is_returned_once(service: RetrievalService) -> None:
    results = await service.search(COLLECTION, "afraid of deep water", k=5)
    texts = [result.text for result in results]
    assert texts.count("Elara is afraid of deep water.") == 1


async def test_editing_one_bullet_re_embeds_only_that_bullet(
    service: RetrievalService, embedder: WordHashEmbedder
) -> None:
    before = embedder.embedded
    edited = MEMORY_FILE.replace("forty silver coins", "fifty silver coins")

    report = await service.sync(COLLECTION, memory_items(edited))

    assert (report.embedded, report.removed) == (1, 1)
    assert embedder.embedded - before == 1


async def test_the_query_is_built_from_the_last_two_messages(service: RetrievalService) -> None:
    messages = ["The dragon attacked.", "Did Kael pay?", "*She frowns.* The blacksmith asked."]
    retrieval = await service.retrieve_for_chat(COLLECTION, messages)
    assert retrieval.query == "*She frowns.* The blacksmith asked.\nDid Kael pay?"
    assert retrieval.results[0].text.startswith("Kael owes")


async def test_many_queries_share_one_embedding_call(
    service: RetrievalService, embedder: WordHashEmbedder
) -> None:
    calls = len(embedder.calls)
    outcomes = await service.retrieve_many(COLLECTION, ["dragon", "blacksmith", "  "], k=1)
    assert len(embedder.calls) == calls + 1
    assert [o.results[0].text.split()[0] for o in outcomes[:2]] == ["The", "Kael"]
    assert outcomes[2].results == [] and outcomes[2].injection.text == ""


async def test_the_cosine_threshold_drops_weak_matches(
    conn: sqlite3.Connection, embedder: WordHashEmbedder
) -> None:
    strict = make_service(
        conn, embedder, RetrievalSettings(min_cosine=0.99, fusion=SingleSignal("vector"))
    )
    await strict.sync(COLLECTION, memory_items())
    assert await strict.search(COLLECTION, "blacksmith") == []


async def test_items_of_another_collection_are_refused(service: RetrievalService) -> None:
    with pytest.raises(ValueError, match="char:Other"):
        await service.sync(COLLECTION, [*memory_items()[:1], *items_from_other()])


def items_from_other() -> list[MemoryItem]:
    return items_from_memory_file("char:Other", "Other.md", parse_memory_file(MEMORY_FILE))


@pytest.mark.local_model
async def test_a_paraphrase_finds_the_memory_with_the_real_model(
    conn: sqlite3.Connection,
) -> None:
    installed = ModelInstaller().install(MINILM_L6_V2_INT8)
    service = make_service(conn, OnnxEmbedder(installed, intra_op_threads=1))
    await service.sync(COLLECTION, memory_items())

    results = await service.search(COLLECTION, "Why does she refuse to go swimming?", k=2)

    assert results[0].text == "Elara is afraid of deep water."


def per_character(**settings: RetrievalSettings) -> Callable[[str | None], RetrievalSettings]:
    return lambda character: settings.get(character or "", RetrievalSettings())


async def test_each_character_gets_its_own_settings(
    conn: sqlite3.Connection, embedder: WordHashEmbedder
) -> None:
    chatty = RetrievalSettings(top_k=1, query_messages=1, context=EmbeddingContext(date=True))
    service = make_service(conn, embedder, per_character(Elara=chatty))
    await service.sync(COLLECTION, memory_items())
    assert any(text.startswith("2026-03-01 09:30: Kael owes") for text in embedder.calls[-1])

    retrieval = await service.retrieve_for_chat(COLLECTION, ["The dragon attacked.", "Kael?"])

    assert retrieval.query == "Kael?" and len(retrieval.results) == 1
    await service.sync(OTHER, items_from_other())
    assert len(await service.search(OTHER, "Elara deep water")) > 1


async def test_chunk_granularity_indexes_and_injects_chunks(
    conn: sqlite3.Connection, embedder: WordHashEmbedder
) -> None:
    chunked = RetrievalSettings(
        granularity="chunk",
        chunks=ChunkSettings(size_threshold_kb=0, chunk_size=150),
        chunk_count=3,
        min_cosine=0,
    )
    service = make_service(conn, embedder, per_character(Elara=chunked))
    collection = Collection("char:Elara/chunks", "Elara", chunks=True)

    report = await service.sync_file(collection, "Elara.md", parse_memory_file(MEMORY_FILE))
    assert report.added == len(chunk_file(MEMORY_FILE, chunked.chunks)) > 2

    retrieval = await service.retrieve(collection, "blacksmith coins")
    assert retrieval.results[0].provenance.chunk is not None
    assert "Kael owes the blacksmith" in retrieval.results[0].text
    # Chunks go in whole and in file order, one per line, as in SillyTavern's Data Bank.
    in_order = sorted(retrieval.results, key=lambda result: result.provenance.chunk or 0)
    expected = "Related information:\n" + "\n".join(result.text for result in in_order)
    assert retrieval.injection.text == expected and len(retrieval.results) == 3


async def test_revectorize_embeds_again_and_purge_starts_over(
    service: RetrievalService, embedder: WordHashEmbedder
) -> None:
    memory = parse_memory_file(MEMORY_FILE)
    before = embedder.embedded

    again = await service.revectorize(COLLECTION, "Elara.md", memory)
    assert (again.embedded, again.kept, again.reembedded_all) == (6, 6, True)
    purged = await service.revectorize(COLLECTION, "Elara.md", memory, purge=True)
    assert (purged.embedded, purged.kept, purged.added) == (6, 0, 6)
    assert embedder.embedded - before == 12
    assert (await service.search(COLLECTION, "blacksmith", k=1))[0].text.startswith("Kael")


async def test_a_sync_plan_tells_what_the_file_changed(
    service: RetrievalService, embedder: WordHashEmbedder
) -> None:
    before = embedder.embedded
    edited = parse_memory_file(MEMORY_FILE.replace("forty silver", "fifty silver"))

    plan = await service.plan_sync_file(COLLECTION, "Elara.md", edited)

    assert (plan.added, plan.removed, plan.kept) == (1, 1, 5)
    assert embedder.embedded == before


async def test_a_collection_never_indexed_finds_nothing_but_is_recorded(
    service: RetrievalService,
) -> None:
    nobody = Collection("char:Nobody", "Nobody")
    retrieval = await service.retrieve(nobody, "dragon")
    assert retrieval.results == [] and retrieval.injection.text == ""
    record = await service.last_retrieval(nobody)
    assert record is not None and record.query == "dragon" and record.candidates == []
