"""Retrieval for questions about time, and the model chosen by a memory file's language."""

import sqlite3
from datetime import date

from charmemory.adapters.retrieval_log import SqliteRetrievalLog
from charmemory.adapters.sqlite_index import SqliteIndex
from charmemory.core.retrieval import Collection, items_from_memory_file
from charmemory.core.retrieval_settings import MULTILINGUAL_MODEL, RetrievalSettings
from charmemory.formats.memory_file import (
    parse_memory_file,
)
from charmemory.services.retrieval import RetrievalService
from tests.support.word_hash_embedder import WordHashEmbedder

DIARY = """<memory chat="Mira - 2026-04-30@20h00m00s" date="2026-04-30 20:30">
- [Mira, Player — the blockade run]
- The Kestrel slipped past the blockade under a moonless sky.
</memory>

<memory chat="Mira - 2026-05-01@09h00m00s" date="2026-05-01 09:45">
- Mira repainted the hull a dull grey.
</memory>

<memory chat="Mira - 2026-05-02@18h00m00s" date="2026-05-02 18:20">
- A navy cutter hit the aft balloon with cannon fire.
</memory>

<memory chat="Mira - 2026-05-27@16h00m00s" date="2026-05-27 16:00">
- The crew celebrated Juno's thirtieth birthday in a canyon.
</memory>
"""
MIRA = Collection("char:Mira", "Mira")


def service_over(
    conn: sqlite3.Connection,
    settings: RetrievalSettings | None = None,
    multilingual: WordHashEmbedder | None = None,
) -> RetrievalService:
    english = WordHashEmbedder("english-v1")
    return RetrievalService(
        SqliteIndex(conn, english),
        english,
        SqliteRetrievalLog(conn),
        settings,
        multilingual=multilingual,
    )


async def texts_for(service: RetrievalService, query: str, **options) -> list[str]:
    await service.sync(MIRA, items_from_memory_file(MIRA.name, "Mira.md", parse_memory_file(DIARY)))
    return [result.text for result in (await service.retrieve(MIRA, query, 1, **options)).results]


async def test_yesterday_is_the_day_before_the_chat_s_last_message(
    conn: sqlite3.Connection,
) -> None:
    found = await texts_for(service_over(conn), "What happened yesterday?", now=date(2026, 5, 28))

    assert found == ["The crew celebrated Juno's thirtieth birthday in a canyon."]


async def test_two_days_after_an_event_counts_from_the_event_s_block(
    conn: sqlite3.Connection,
) -> None:
    found = await texts_for(service_over(conn), "What happened two days after the blockade run?")

    assert found == ["A navy cutter hit the aft balloon with cannon fire."]


async def test_time_questions_can_be_turned_off(conn: sqlite3.Connection) -> None:
    settings = RetrievalSettings(time_questions=False)

    found = await texts_for(
        service_over(conn, settings), "What happened two days after the blockade run?"
    )

    assert found == ["The Kestrel slipped past the blockade under a moonless sky."]


async def test_a_chat_asks_about_time_in_its_newest_message(conn: sqlite3.Connection) -> None:
    service = service_over(conn)
    await texts_for(service, "warm up")
    messages = ["*Mira laughs.* Yesterday was a long day.", "What did we do on Friday?"]

    retrieval = await service.retrieve_for_chat(MIRA, messages, 1, now=date(2026, 5, 5))

    assert [r.text for r in retrieval.results] == ["Mira repainted the hull a dull grey."]


CHINESE = """<memory chat="林小满 - 2026-01-02@10h00m00s" date="2026-01-02 10:00">
- 林小满在巷口开了一家面馆。
- {{user}}每天都来吃面。
</memory>
"""
LIN = Collection("char:林小满", "林小满")


async def test_a_file_not_in_english_is_embedded_with_the_multilingual_model(
    conn: sqlite3.Connection,
) -> None:
    multilingual = WordHashEmbedder("multi-v1")
    # The stand-in embedder reads a Chinese sentence as one word: BM25 finds it here.
    service = service_over(conn, RetrievalSettings(min_cosine=0), multilingual=multilingual)
    chinese = items_from_memory_file(LIN.name, "林小满.md", parse_memory_file(CHINESE))
    english = items_from_memory_file(MIRA.name, "Mira.md", parse_memory_file(DIARY))

    report = await service.sync(LIN, chinese)
    await service.sync(MIRA, english)
    found = await service.search(LIN, "面馆", 1)

    assert report.model == "multi-v1"
    assert found and found[0].text == "林小满在巷口开了一家面馆。"
    assert (await service.stats(MIRA)).model == "english-v1"  # type: ignore[union-attr]
    assert ["面馆"] in multilingual.calls  # the query went through the collection's model


async def test_the_setting_can_name_one_model_for_every_file(conn: sqlite3.Connection) -> None:
    settings = RetrievalSettings(local_model=MULTILINGUAL_MODEL)
    service = service_over(conn, settings, multilingual=WordHashEmbedder("multi-v1"))

    report = await service.sync(
        MIRA, items_from_memory_file(MIRA.name, "Mira.md", parse_memory_file(DIARY))
    )

    assert report.model == "multi-v1"


async def test_only_the_leading_words_of_a_long_query_are_embedded(
    conn: sqlite3.Connection,
) -> None:
    english = WordHashEmbedder("english-v1")
    service = RetrievalService(
        SqliteIndex(conn, english),
        english,
        SqliteRetrievalLog(conn),
        RetrievalSettings(query_vector_words=4, min_cosine=0),
    )
    await texts_for(service, "warm up")
    english.calls.clear()

    found = await service.search(MIRA, "Tell me about the cannon fire that hit the aft balloon", 2)

    assert english.calls == [["Tell me about the"]]
    # BM25 read the whole query.
    assert "A navy cutter hit the aft balloon with cannon fire." in [r.text for r in found]
