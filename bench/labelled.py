"""The labelled retrieval sets: memory files and the queries whose answers are known.

One set per language: English in bench/data/memories/*.md with bench/data/queries.json,
the others in bench/data/memories/<language>/*.md with bench/data/queries_<language>.json.
A query names its character (a memory file's stem), its kind, its text (``query``, or
``messages`` from which the text is built as a chat builds it) and its answers as
fragments, each found in exactly one bullet of the character's file. A question about
time may carry ``now``, the ISO date it is asked on, so that "yesterday" can be resolved.
"""

from __future__ import annotations

import json
import re
import sqlite3
import sys
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from charmemory.adapters.bm25 import Stemmer, query_words
from charmemory.core.retrieval import MemoryItem, build_query, items_from_memory_file
from charmemory.formats.memory_file import (
    parse_memory_file,
)

DATA = Path(__file__).resolve().parent / "data"
LANGUAGES = ("en", "zh", "ru")


@dataclass(frozen=True)
class Query:
    character: str
    kind: str
    text: str
    answers: tuple[str, ...]  # item ids
    now: date | None = None  # the day the question is asked, for "yesterday", "last week"
    language: str = "en"
    messages: tuple[str, ...] = ()  # a chat query's messages, oldest first


def memory_folder(language: str = "en") -> Path:
    return DATA / "memories" if language == "en" else DATA / "memories" / language


def queries_file(language: str = "en") -> Path:
    return DATA / ("queries.json" if language == "en" else f"queries_{language}.json")


def load_labelled(
    language: str = "en",
) -> tuple[dict[str, list[MemoryItem]], dict[str, str], list[Query]]:
    """Bullets per character, each memory file's text, and the queries with answer ids."""
    items: dict[str, list[MemoryItem]] = {}
    files: dict[str, str] = {}
    for path in sorted(memory_folder(language).glob("*.md")):
        name = path.stem
        files[name] = path.read_text(encoding="utf-8")
        items[name] = items_from_memory_file(
            f"char:{name}", path.name, parse_memory_file(files[name])
        )
    queries = []
    for raw in json.loads(queries_file(language).read_text(encoding="utf-8")):
        pool = items[raw["character"]]
        answers = []
        for fragment in raw["answers"]:
            found = [item.id for item in pool if fragment in item.text]
            if len(found) != 1:
                sys.exit(f"answer {fragment!r} matches {len(found)} bullets of {raw['character']}")
            answers.append(found[0])
        text = raw.get("query") or build_query(raw["messages"])
        now = date.fromisoformat(raw["now"]) if "now" in raw else None
        language_of = raw.get("language", "en")
        messages = tuple(raw.get("messages", ()))
        queries.append(
            Query(raw["character"], raw["kind"], text, tuple(answers), now, language_of, messages)
        )
    return items, files, queries


def check_paraphrases(items: dict[str, list[MemoryItem]], queries: list[Query]) -> None:
    """A paraphrase must share no word (after stemming) with any of its answers."""
    shared = paraphrases_sharing_words(items, queries)
    offenders = [f"{query.text!r} / {answer!r}" for query, answer in shared]
    if offenders:
        sys.exit("paraphrases sharing words with their answers:\n" + "\n".join(offenders))


def paraphrases_sharing_words(
    items: dict[str, list[MemoryItem]], queries: list[Query]
) -> list[tuple[Query, str]]:
    """(paraphrase, answer text) pairs that share a word stem, as BM25 would match them.

    The index's stemmer knows English only; Russian words are compared by their first
    four letters (function words aside) and Chinese text by its two-character runs, so
    that a paraphrase in those languages also says the answer in other words.
    """
    stemmer = Stemmer(sqlite3.connect(":memory:", isolation_level=None))

    def terms(text: str) -> set[str]:
        latin = [word for word in query_words(text) if not _NOT_LATIN.search(word)]
        found = {term for each in stemmer.terms(latin) for term in each}
        return found | russian_stems(text) | han_bigrams(text)

    by_id = {item.id: item for pool in items.values() for item in pool}
    return [
        (query, by_id[answer].text)
        for query in queries
        if query.kind == "paraphrase"
        for answer in query.answers
        if terms(query.text) & terms(by_id[answer].text.replace("{{user}}", ""))
    ]


_NOT_LATIN = re.compile(r"[\u0400-\u04ff\u4e00-\u9fff]")
_CYRILLIC_WORD = re.compile(r"[а-яё]{4,}")
_HAN_RUN = re.compile(r"[\u4e00-\u9fff]+")
# Russian function words of four letters or more: sharing them says nothing.
_RUSSIAN_FUNCTION_WORDS = frozenset(
    {
        "этот",
        "того",
        "тому",
        "этого",
        "этой",
        "этом",
        "когда",
        "чтобы",
        "потому",
        "после",
        "перед",
        "через",
        "только",
        "тоже",
        "также",
        "куда",
        "откуда",
        "который",
        "которая",
        "которое",
        "которые",
        "всех",
        "всего",
        "была",
        "было",
        "были",
        "будет",
        "есть",
        "него",
        "нему",
        "ними",
        "свой",
        "своя",
        "своё",
        "свои",
        "себя",
        "тебя",
        "тебе",
        "меня",
        "мной",
        "нами",
        "вами",
        "ваша",
        "наша",
        "очень",
        "более",
        "между",
        "почему",
        "зачем",
        "какой",
        "какая",
        "какое",
        "какие",
        "разве",
        "даже",
    }
)


def russian_stems(text: str) -> set[str]:
    return {
        word[:4]
        for word in _CYRILLIC_WORD.findall(text.lower())
        if word not in _RUSSIAN_FUNCTION_WORDS
    }


def han_bigrams(text: str) -> set[str]:
    return {run[i : i + 2] for run in _HAN_RUN.findall(text) for i in range(len(run) - 1)}
