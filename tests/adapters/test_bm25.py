import sqlite3
from collections.abc import Iterator

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from charmemory.adapters.bm25 import Bm25, Stemmer, query_words

TEXTS = [
    "Elara is afraid of deep water since her brother drowned.",
    "Seraphina keeps moonflowers in the glade, and moonflowers glow.",
    "The dragon burned the merchant ships in the harbour.",
    "Kael owes the blacksmith forty silver coins.",
    "Elara drowns her sorrows at the harbour tavern on rainy days.",
    "A day at the market: Kael sold a silver key to Elara.",
]


@pytest.fixture
def conn() -> Iterator[sqlite3.Connection]:
    conn = sqlite3.connect(":memory:", isolation_level=None)
    yield conn
    conn.close()


@pytest.fixture
def stemmer(conn: sqlite3.Connection) -> Stemmer:
    return Stemmer(conn)


def fts5_scores(conn: sqlite3.Connection, texts: list[str], terms: list[str]) -> dict[int, float]:
    """Row position -> SQLite's own bm25() for a query of ``terms`` (higher is better)."""
    conn.execute(
        "CREATE VIRTUAL TABLE reference USING fts5(text, "
        "tokenize='porter unicode61 remove_diacritics 2')"
    )
    conn.executemany("INSERT INTO reference (rowid, text) VALUES (?, ?)", enumerate(texts))
    rows = conn.execute(
        "SELECT rowid, bm25(reference) FROM reference WHERE reference MATCH ?",
        (" OR ".join(f'"{term}"' for term in terms),),
    )
    return {rowid: -score for rowid, score in rows}


@pytest.mark.parametrize(
    "query",
    ["Elara drowned", "harbour", "silver day coins", "moonflowers", "dragons and days at sea"],
)
def test_scores_are_those_of_sqlite_fts5(
    conn: sqlite3.Connection, stemmer: Stemmer, query: str
) -> None:
    terms = sorted({term for found in stemmer.terms(query_words(query)) for term in found})
    expected = fts5_scores(conn, TEXTS, terms)

    positions, scores = Bm25.build(TEXTS, stemmer).scores(terms)

    assert dict(zip(positions.tolist(), scores.tolist(), strict=True)) == pytest.approx(expected)


def test_words_are_stemmed_and_folded_like_fts5(stemmer: Stemmer) -> None:
    assert stemmer.terms(["drowned", "Élara", "days", "moonflowers"]) == [
        ("drown",),
        ("elara",),
        ("dai",),
        ("moonflow",),
    ]


def test_unknown_terms_and_empty_collections_match_nothing(stemmer: Stemmer) -> None:
    positions, scores = Bm25.build(TEXTS, stemmer).scores(["xylophon"])
    assert positions.size == 0 and scores.size == 0
    empty = Bm25.build([], stemmer)
    assert empty.size == 0 and empty.scores(["elara"])[0].size == 0


def test_function_words_alone_make_no_query() -> None:
    assert query_words("what is it? and the...") == []
    assert query_words("Where's the DRAGON, Kael? The dragon!") == ["dragon", "kael"]
    assert len(query_words(" ".join(f"word{i}" for i in range(300)))) == 256


@settings(max_examples=100, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.text(max_size=40), max_size=6), st.text(max_size=40))
def test_any_text_can_be_indexed_and_searched(
    stemmer: Stemmer, texts: list[str], query: str
) -> None:
    index = Bm25.build(texts, stemmer)
    terms = [term for found in stemmer.terms(query_words(query)) for term in found]
    positions, scores = index.scores(terms)
    assert np.all(scores > 0) and np.all(positions < max(len(texts), 1))


WORDS = [
    "elara",
    "kael",
    "dragon",
    "harbour",
    "silver",
    "coins",
    "moonflowers",
    "glade",
    "day",
    "water",
    "ships",
    "key",
]


@settings(max_examples=80, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data())
def test_a_merged_index_scores_as_one_built_from_the_final_texts(
    stemmer: Stemmer, data: st.DataObject
) -> None:
    phrase = st.lists(st.sampled_from(WORDS), min_size=1, max_size=6).map(" ".join)
    old = data.draw(st.lists(phrase, min_size=1, max_size=8), label="old")
    keep = np.array(data.draw(st.lists(st.booleans(), min_size=len(old), max_size=len(old))))
    fresh = data.draw(st.lists(phrase, max_size=5), label="fresh")
    final = [text for text, kept in zip(old, keep, strict=True) if kept] + fresh
    order = np.array(data.draw(st.permutations(range(len(final)))), dtype=np.int64)
    placed = np.empty_like(order)
    placed[order] = np.arange(len(order))
    query = data.draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=4), label="query")

    merged = Bm25.build(old, stemmer).merged(keep, Bm25.build(fresh, stemmer), placed)
    rebuilt = Bm25.build([final[i] for i in order], stemmer)

    terms = [term for found in stemmer.terms(query) for term in found]
    got, expected = merged.scores(terms), rebuilt.scores(terms)
    assert np.array_equal(got[0], expected[0])
    assert got[1] == pytest.approx(expected[1])


def test_chinese_text_is_searched_by_its_characters_and_their_pairs(stemmer: Stemmer) -> None:
    texts = ["林小满在巷口开了一家面馆。", "沈清辞把玉佩留在了江南。", "嫩南瓜切丝清炒。"]
    index = Bm25.build(texts, stemmer)

    def best(query: str) -> int:
        terms = [t for found in stemmer.terms(query_words(query)) for t in found]
        positions, scores = index.scores(terms)
        return int(positions[np.argmax(scores)])

    assert best("南瓜怎么做") == 2
    assert best("玉佩在哪里") == 1
    assert "南瓜" in query_words("南瓜怎么做") and "瓜" in query_words("南瓜怎么做")


def test_russian_words_match_in_their_other_forms(stemmer: Stemmer) -> None:
    texts = ["Ярослава потеряла лодку у старой мельницы.", "Артём пишет письма сестре."]
    index = Bm25.build(texts, stemmer)
    terms = [t for found in stemmer.terms(query_words("Где её лодка и мельница?")) for t in found]

    positions, _ = index.scores(terms)

    assert positions.tolist() == [0]
