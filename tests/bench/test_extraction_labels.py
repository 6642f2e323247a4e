"""The labelled extraction excerpts in bench/data are valid test data, and the bench scores
inverted readings and trivia as labelled."""

import json

from bench.extraction_quality import DATA, Run, answered_by_all, chosen_excerpts, load_excerpts
from bench.extraction_scoring import Score, holds, is_invented, score_answer, wilson

from charmemory.core.extraction_answer import ParsedAnswer

RAW = json.loads(DATA.read_text(encoding="utf-8"))["excerpts"]


def source(excerpt: dict) -> str:
    texts = [excerpt["card"], excerpt["character"], excerpt["user"]]
    return "\n".join(texts + [m["text"] for m in excerpt["messages"]]).lower()


def test_there_are_thirty_excerpts_and_a_hundred_and_twenty_facts() -> None:
    assert len(RAW) >= 30
    assert sum(len(excerpt["facts"]) for excerpt in RAW) >= 120
    assert len({excerpt["id"] for excerpt in RAW}) == len(RAW)


def test_keywords_come_from_the_excerpt() -> None:
    """A keyword's first phrasing is the excerpt's; others (after `|`) are other words for it."""
    missing = [
        (excerpt["id"], keyword)
        for excerpt in RAW
        for keywords in [f["keywords"] for f in excerpt["facts"]] + excerpt.get("trivia", [])
        for keyword in keywords
        if keyword.split("|")[0].lower() not in source(excerpt)
    ]
    assert missing == []


def test_a_fact_and_its_inverted_reading_are_told_apart() -> None:
    for excerpt in RAW:
        for fact in excerpt["facts"]:
            readings = fact.get("wrong_keywords", [])
            assert bool(readings) == ("inverted" in fact), fact["fact"]
            if readings:
                assert holds(fact["fact"], fact["keywords"]), fact["fact"]
                assert not any(holds(fact["fact"], reading) for reading in readings), fact
                assert any(holds(fact["inverted"], reading) for reading in readings), fact


def test_trivia_keywords_name_no_fact() -> None:
    clashes = [
        (excerpt["id"], keywords, fact["fact"])
        for excerpt in RAW
        for keywords in excerpt.get("trivia", [])
        for fact in excerpt["facts"]
        if holds(fact["fact"], keywords)
    ]
    assert clashes == []


def test_the_facts_are_recalled_and_their_inverted_readings_counted() -> None:
    right, wrong = Score(), Score()
    for excerpt, raw in zip(load_excerpts(), RAW, strict=True):
        labelled = [fact for fact in raw["facts"] if "inverted" in fact]
        score_answer(right, excerpt, ParsedAnswer([[fact["fact"] for fact in labelled]]), [])
        score_answer(wrong, excerpt, ParsedAnswer([[fact["inverted"] for fact in labelled]]), [])
    count = sum("inverted" in fact for excerpt in RAW for fact in excerpt["facts"])
    assert (right.recalled, right.inverted, right.trivia) == (count, 0, 0)
    assert (wrong.recalled, wrong.inverted) == (0, count)


def test_trivia_is_counted() -> None:
    score = Score()
    excerpt = next(e for e in load_excerpts() if e.id == "slice-of-life-bus-stop-chatter")
    bullets = ["It was freezing at the bus stop.", "Dev is taking welding classes on Mondays."]
    score_answer(score, excerpt, ParsedAnswer([bullets]), [])
    assert (score.trivia, score.recalled) == (1, 1)


def test_a_keyword_may_name_other_phrasings_of_the_same_thing() -> None:
    assert holds("Kael swore to return the map by midwinter.", ["map", "solstice|midwinter"])
    assert not holds("Kael swore to return the map.", ["map", "solstice|midwinter"])
    assert holds("KAEL\u2019S map", ["kael's map"])


def test_no_phrasing_is_empty() -> None:
    """An empty phrasing would be in every bullet."""
    empty = [
        (excerpt["id"], keyword)
        for excerpt in RAW
        for fact in excerpt["facts"]
        for keywords in [fact["keywords"], *fact.get("wrong_keywords", [])]
        for keyword in keywords
        if not all(phrasing.strip() for phrasing in keyword.split("|"))
    ]
    assert empty == []


def test_recall_is_given_with_its_wilson_interval() -> None:
    low, high = wilson(20, 52)
    assert (round(low, 3), round(high, 3)) == (0.265, 0.520)
    assert wilson(0, 10)[0] == 0.0 and wilson(10, 10)[1] == 1.0


def test_a_stopped_run_is_scored_on_the_excerpts_every_candidate_answered() -> None:
    run = Run("2026-12-01T15:00+00:00", 1, ["b", "a", "c"], ["today", "new"])
    run.answers = {"today": {"a": {}, "b": {}, "c": {}}, "new": {"b": {}, "a": {}}}
    assert answered_by_all(run) == ["b", "a"]


def test_the_shuffled_order_is_every_excerpt_in_the_same_order_each_time() -> None:
    first = [excerpt.id for excerpt in chosen_excerpts(["shuffled"])]
    assert first == [excerpt.id for excerpt in chosen_excerpts(["shuffled"])]
    assert sorted(first) == sorted(excerpt["id"] for excerpt in RAW)
    assert first != [excerpt["id"] for excerpt in RAW]


def test_a_name_the_excerpt_only_has_in_the_possessive_is_not_invented() -> None:
    source = 'Roderick: "The man who gave the order to burn Hollin\'s Ford."'
    assert not is_invented("Maelis's father gave the order to burn Hollin's Ford.", source)
    assert not is_invented("Hollin was burned.", source)
    assert is_invented("Hollin's Ford burned in 1991.", source)
