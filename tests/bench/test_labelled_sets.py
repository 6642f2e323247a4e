"""The labelled retrieval sets in bench/data are valid test data.

Every answer fragment names exactly one bullet of its character's file, no bullet is the
answer of two queries of one kind, paraphrases and long chats do not copy their answers,
questions about time are asked after what they ask about, and each kind (English) or
language has at least 50 queries.
"""

import json
import re
from collections import Counter
from datetime import date

import pytest
from bench.labelled import (
    LANGUAGES,
    Query,
    load_labelled,
    paraphrases_sharing_words,
    queries_file,
)

from charmemory.core.retrieval import MemoryItem

ENGLISH_KINDS = ("direct", "paraphrase", "multi", "chat", "long chat", "time")
OTHER_KINDS = ("direct", "paraphrase", "multi", "chat", "long chat")
_WORD = re.compile(r"[^\W_]+")
_HAN = re.compile(r"[\u4e00-\u9fff]")
Labelled = tuple[str, dict[str, list[MemoryItem]], list[Query]]


@pytest.fixture(scope="module", params=LANGUAGES)
def labelled(request: pytest.FixtureRequest) -> Labelled:
    items, _, queries = load_labelled(request.param)  # exits on a fragment not in one bullet
    return request.param, items, queries


def test_english_has_fifty_queries_of_each_kind() -> None:
    _, _, queries = load_labelled("en")
    counts = Counter(query.kind for query in queries)
    assert set(counts) == set(ENGLISH_KINDS)
    assert min(counts.values()) >= 50, counts


@pytest.mark.parametrize("language", [lang for lang in LANGUAGES if lang != "en"])
def test_other_languages_have_fifty_queries_of_each_kind(language: str) -> None:
    items, _, queries = load_labelled(language)
    raw = json.loads(queries_file(language).read_text(encoding="utf-8"))
    assert {entry["language"] for entry in raw} == {language}
    counts = Counter(query.kind for query in queries)
    assert set(counts) == set(OTHER_KINDS)
    assert min(counts.values()) >= 50, counts
    assert sum(len(pool) for pool in items.values()) >= 200


def test_a_query_names_distinct_bullets(labelled: Labelled) -> None:
    _, _, queries = labelled
    assert [q for q in queries if len(set(q.answers)) != len(q.answers)] == []


def test_no_bullet_answers_two_queries_of_one_kind(labelled: Labelled) -> None:
    _, items, queries = labelled
    by_id = {item.id: item.text for pool in items.values() for item in pool}
    uses = Counter((query.kind, answer) for query in queries for answer in query.answers)
    assert [(kind, by_id[answer]) for (kind, answer), n in uses.items() if n > 1] == []


def test_multi_questions_need_two_memories(labelled: Labelled) -> None:
    _, _, queries = labelled
    assert all(len(query.answers) >= 2 for query in queries if query.kind == "multi")


def test_paraphrases_share_no_word_with_their_answers(labelled: Labelled) -> None:
    _, items, queries = labelled
    assert [(q.text, answer) for q, answer in paraphrases_sharing_words(items, queries)] == []


def copied_run(query: str, answer: str) -> int:
    """The longest run of the answer's words (Chinese: characters) found in the query."""

    def tokens(text: str) -> list[str]:
        text = text.replace("{{user}}", " ").lower()
        return _HAN.findall(text) if _HAN.search(text) else _WORD.findall(text)

    said, heard = tokens(answer), tokens(query)
    best, previous = 0, [0] * (len(heard) + 1)
    for word in said:
        current = [0] * (len(heard) + 1)
        for j, other in enumerate(heard, start=1):
            if word == other:
                current[j] = previous[j - 1] + 1
                best = max(best, current[j])
        previous = current
    return best


def test_copied_run_counts_words_and_chinese_characters() -> None:
    assert copied_run("she keeps a jar of moths", "She keeps a jar of glowing moths.") == 5
    assert copied_run("她把信藏在茶叶罐里", "苏晚把信藏在旧茶叶罐里。") == 4


def test_paraphrases_and_long_chats_copy_no_four_words_of_an_answer(labelled: Labelled) -> None:
    language, items, queries = labelled
    longest = 4 if language == "zh" else 3  # characters in Chinese, words otherwise
    by_id = {item.id: item.text for pool in items.values() for item in pool}
    copies = [
        (query.text[:60], by_id[answer])
        for query in queries
        if query.kind in ("paraphrase", "long chat")
        for answer in query.answers
        if copied_run(query.text, by_id[answer]) > longest
    ]
    assert copies == []


def test_questions_about_time_are_asked_after_their_answers(labelled: Labelled) -> None:
    _, items, queries = labelled
    dated = {
        item.id: date.fromisoformat(item.provenance.block_date[:10])
        for pool in items.values()
        for item in pool
    }
    late = [
        query.text
        for query in queries
        if query.now is not None
        for answer in query.answers
        if dated[answer] >= query.now
    ]
    assert late == []
    for query in queries:
        if query.now is not None:
            last = max(dated[item.id] for item in items[query.character])
            assert query.now > last, f"{query.text!r}: memories after the day it is asked"
