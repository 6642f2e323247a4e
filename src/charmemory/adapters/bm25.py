"""BM25 over one collection, held in memory: the lexical half of hybrid search.

SQLite's FTS5 ranks by BM25 as well, but it scores every row that matches any
query word, and a common word (a character's name, "day") matches tens of
thousands of memories in a large collection: at 100,000 items that took
10-130 ms per query. Here a collection's postings are built once per collection
version, next to its vector matrix, and a query costs a few numpy operations
over the postings of its own words.

Words are stemmed by FTS5's own tokenizer (``porter unicode61
remove_diacritics 2``) through a temporary FTS5 table, so "drowned" still finds
"drowning" and "Élara" finds "Elara"; Russian words, which porter leaves alone,
by the Snowball stemmer for Russian ("лодку" finds "лодка"). Chinese, Japanese
and Korean write words without spaces between them: a run of their characters
is indexed as its characters and its overlapping character pairs, so "南瓜" in a
query finds "嫩南瓜" (bench/RESULTS.md: Chinese BM25 recall@5 0 -> 0.85).
Scores follow FTS5's ``bm25()``: k1 = 1.2,
b = 0.75, idf = ln((N - n + 0.5) / (n + 0.5)) and at least 1e-6, with N, n and
the average length taken over the collection.
"""

from __future__ import annotations

import itertools
import math
import re
import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from charmemory.adapters.russian_stemmer import russian_stem
from charmemory.adapters.sqlite_db import transaction
from charmemory.core.language import CJK

_WORD = re.compile(r"[^\W_]+")
_CJK_RUN = re.compile(f"[{CJK}]+")
_CYRILLIC = re.compile(r"[\u0400-\u04ff]")
_SEPARATOR = "\x00"
_TOKEN = re.compile(r"[^\W_]+|\x00")  # words, and the separator between documents
# Function words match nearly every memory: they only cost time and add noise.
_STOPWORD_TEXT = (
    "a an and are as at be been but by did do does for from had has have he her hers him his how "
    "i if in into is it its me my no not of on or our she so than that the their them then "
    "there they this to too us was we were what when where which who why will with would you your"
)
_STOPWORDS = frozenset(_STOPWORD_TEXT.split())
# Enough for two long role-play messages (the query is the newest first): at 64, the
# words of the older message were cut off and long chat queries scored recall@5 0.616
# instead of 0.714 (bench/RESULTS.md). A word no memory holds costs one dictionary lookup.
MAX_QUERY_WORDS = 256
_K1 = 1.2
_B = 0.75
_MIN_IDF = 1e-6


def query_words(text: str) -> list[str]:
    """The content words of a query, in order, each once.

    Function words and single ASCII characters (the "s" of "where's") are left out.
    """
    words = dict.fromkeys(
        word
        for word in _WORD.findall(segmented(text.lower()))
        if word not in _STOPWORDS and not (len(word) == 1 and word.isascii())
    )
    return list(words)[:MAX_QUERY_WORDS]


def segmented(text: str) -> str:
    """``text`` with each run of CJK characters spelled as its characters and their pairs."""
    if not _CJK_RUN.search(text):
        return text
    return _CJK_RUN.sub(_pieces, text)


def _pieces(run: re.Match[str]) -> str:
    chars = run.group(0)
    pairs = [chars[i : i + 2] for i in range(len(chars) - 1)]
    return " " + " ".join((*pairs, *chars)) + " "


class Stemmer:
    """The index terms FTS5 makes of words, remembered across calls.

    The temporary tables live in the connection's ``temp`` schema: nothing is
    written to the workspace database.
    """

    def __init__(self, conn: sqlite3.Connection, *, remembered: int = 500_000) -> None:
        self._conn = conn
        self._remembered = remembered
        self._known: dict[str, tuple[str, ...]] = {}
        self._ready = False

    def terms(self, words: Sequence[str]) -> list[tuple[str, ...]]:
        """Each word's terms: usually one, none for a word the tokenizer drops."""
        unknown = [word for word in dict.fromkeys(words) if word not in self._known]
        if unknown:
            if len(self._known) + len(unknown) > self._remembered:
                self._known.clear()
            self._known.update(zip(unknown, self._tokenize(unknown), strict=True))
        return [self._known[word] for word in words]

    def _tokenize(self, words: list[str]) -> list[tuple[str, ...]]:
        self._create_tables()
        found: list[list[str]] = [[] for _ in words]
        # 'delete-all' empties the index itself: rows deleted one by one would leave
        # tombstones that every later read of the vocabulary has to walk past.
        clear = "INSERT INTO temp.retrieval_words (retrieval_words) VALUES ('delete-all')"
        with transaction(self._conn):
            self._conn.executemany(
                "INSERT INTO temp.retrieval_words (rowid, word) VALUES (?, ?)", enumerate(words)
            )
            rows = self._conn.execute(
                "SELECT doc, term FROM temp.retrieval_word_terms ORDER BY doc, offset"
            ).fetchall()
            self._conn.execute(clear)
        for doc, term in rows:
            found[doc].append(russian_stem(term) if _CYRILLIC.search(term) else term)
        return [tuple(terms) for terms in found]

    def _create_tables(self) -> None:
        if self._ready:
            return
        self._conn.execute(
            "CREATE VIRTUAL TABLE IF NOT EXISTS temp.retrieval_words USING fts5("
            "word, content='', tokenize='porter unicode61 remove_diacritics 2')"
        )
        self._conn.execute(
            "CREATE VIRTUAL TABLE IF NOT EXISTS temp.retrieval_word_terms "
            "USING fts5vocab(temp, retrieval_words, instance)"
        )
        self._ready = True


@dataclass(frozen=True)
class Bm25:
    """The postings of one collection; documents are positions 0..n-1."""

    terms: dict[str, int]  # term -> its postings, docs[starts[t]:starts[t + 1]]
    starts: np.ndarray  # int64, one more than there are terms
    docs: np.ndarray  # int64 document positions, ascending within a term
    freqs: np.ndarray  # float64 term frequency in the document
    lengths: np.ndarray  # float64 terms per document
    norms: np.ndarray  # float64 per document: k1 * (1 - b + b * length / average length)

    @property
    def size(self) -> int:
        return len(self.norms)

    @classmethod
    def build(cls, texts: Sequence[str], stemmer: Stemmer) -> Bm25:
        token_words, token_docs, vocabulary = _tokens(texts)
        terms: dict[str, int] = {}
        stems = stemmer.terms(vocabulary)
        word_terms = np.fromiter(
            (terms.setdefault(term, len(terms)) for row in stems for term in row), dtype=np.int64
        )
        # Each token becomes one occurrence per term of its word (almost always one).
        per_word = np.array([len(row) for row in stems], dtype=np.int64)
        first = np.concatenate(([0], np.cumsum(per_word)[:-1])) if len(stems) else per_word
        per_token = per_word[token_words]
        within = np.arange(per_token.sum()) - np.repeat(np.cumsum(per_token) - per_token, per_token)
        occurrence_terms = word_terms[np.repeat(first[token_words], per_token) + within]
        occurrence_docs = np.repeat(token_docs, per_token)
        lengths = np.bincount(occurrence_docs, minlength=len(texts)).astype(np.float64)
        pairs, freqs = np.unique(
            occurrence_terms * max(len(texts), 1) + occurrence_docs, return_counts=True
        )
        return cls._from_postings(
            terms,
            pairs // max(len(texts), 1),
            pairs % max(len(texts), 1),
            freqs.astype(np.float64),
            lengths,
        )

    def merged(self, keep: np.ndarray, fresh: Bm25, placed: np.ndarray) -> Bm25:
        """The documents ``keep`` marks (a bool per document) and ``fresh``'s, rearranged.

        ``placed`` gives each its new position: the kept documents in their order,
        then the fresh ones. Only the postings are re-sorted; no text is read again.
        """
        kept = int(keep.sum())
        renumbered = np.full(self.size, -1, dtype=np.int64)
        renumbered[keep] = placed[:kept]
        terms = dict(self.terms)
        fresh_terms = np.fromiter(
            (terms.setdefault(term, len(terms)) for term in fresh.terms),
            dtype=np.int64,
            count=len(fresh.terms),
        )
        live = keep[self.docs]
        posting_terms = np.concatenate(
            (_posting_terms(self.starts)[live], fresh_terms[_posting_terms(fresh.starts)])
        )
        posting_docs = np.concatenate((renumbered[self.docs[live]], placed[kept:][fresh.docs]))
        order = np.lexsort((posting_docs, posting_terms))
        lengths = np.empty(len(placed))
        lengths[placed] = np.concatenate((self.lengths[keep], fresh.lengths))
        return Bm25._from_postings(
            terms,
            posting_terms[order],
            posting_docs[order],
            np.concatenate((self.freqs[live], fresh.freqs))[order],
            lengths,
        )

    @classmethod
    def _from_postings(
        cls,
        terms: dict[str, int],
        posting_terms: np.ndarray,
        docs: np.ndarray,
        freqs: np.ndarray,
        lengths: np.ndarray,
    ) -> Bm25:
        """From postings sorted by term, then document."""
        average = lengths.mean() if len(lengths) and lengths.any() else 1.0
        return cls(
            terms=terms,
            starts=np.searchsorted(posting_terms, np.arange(len(terms) + 1)),
            docs=docs,
            freqs=freqs,
            lengths=lengths,
            norms=_K1 * (1 - _B + _B * lengths / average),
        )

    def scores(self, terms: Iterable[str]) -> tuple[np.ndarray, np.ndarray]:
        """Positions of the documents matching any term (ascending) and their scores."""
        total = np.zeros(self.size)
        for term in set(terms):
            row = self.terms.get(term)
            if row is None:
                continue
            start, end = self.starts[row], self.starts[row + 1]
            docs, freqs = self.docs[start:end], self.freqs[start:end]
            matching = end - start
            idf = max(math.log((self.size - matching + 0.5) / (matching + 0.5)), _MIN_IDF)
            total[docs] += idf * freqs * (_K1 + 1) / (freqs + self.norms[docs])
        positions = np.flatnonzero(total)
        return positions, total[positions]


def _posting_terms(starts: np.ndarray) -> np.ndarray:
    """The term of each posting, from where each term's postings start."""
    return np.repeat(np.arange(len(starts) - 1), np.diff(starts))


def _tokens(texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Every word of every text: its word id and document position, and the words by id.

    The texts are lowercased and searched as one string, and the words are numbered
    by C-level calls only: word by word in Python, 100,000 memories took seconds.
    """
    joined = _SEPARATOR.join(texts)
    if joined.count(_SEPARATOR) != max(len(texts) - 1, 0):
        joined = _SEPARATOR.join(text.replace(_SEPARATOR, " ") for text in texts)
    words = _TOKEN.findall(segmented(joined.lower()))
    first_seen: dict[str, int] = {}
    # setdefault keeps the first position a word was seen at: a unique, sparse id.
    ids = np.fromiter(
        map(first_seen.setdefault, words, itertools.count()), dtype=np.int64, count=len(words)
    )
    separators = ids == first_seen.get(_SEPARATOR, -1)
    docs = np.cumsum(separators)[~separators]
    firsts, dense = np.unique(ids[~separators], return_inverse=True)
    return dense, docs, [words[i] for i in firsts]
