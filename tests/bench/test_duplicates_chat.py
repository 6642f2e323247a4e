"""The labelled facts of the long chat in bench/data/duplicates_chat.json, and how a
whole chat's bullets are counted as duplicates."""

import asyncio
import hashlib
import json
from pathlib import Path

import numpy as np
from bench.duplicates import (
    DATA,
    Fact,
    count_duplicates,
    extract,
    kept_by_filter,
    load_facts,
    saved_bullets,
)

from charmemory.adapters.workspace import Workspace
from charmemory.composition import App
from charmemory.ports import Completion
from tests.support.fake_chat_model import ChatRequest, FakeChatModel

ROOT = Path(__file__).resolve().parents[2]
LABELS = json.loads(DATA.read_text(encoding="utf-8"))
FACTS = {fact.id: fact for fact in load_facts()}


def messages() -> list[dict]:
    lines = (ROOT / LABELS["chat"]).read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines[1:]]  # the first line is the header


def test_the_chat_is_the_labelled_one_and_long() -> None:
    digest = hashlib.sha256((ROOT / LABELS["chat"]).read_bytes()).hexdigest()
    assert digest == LABELS["sha256"], "the chat changed: check the labels, then the digest"
    assert len(messages()) >= 200


def test_facts_are_said_where_labelled() -> None:
    chat = messages()
    assert len(FACTS) == len(LABELS["facts"])
    for label in LABELS["facts"]:
        said = [chat[i] for i in label["said_in"]]
        assert not any(message.get("is_system") for message in said), label["id"]
        assert FACTS[label["id"]].stated_in(" ".join(m["mes"] for m in said)), label["id"]


def test_restatements_state_their_fact_and_near_misses_do_not() -> None:
    for label in LABELS["facts"]:
        fact = FACTS[label["id"]]
        assert all(fact.stated_in(text) for text in label["same"]), label["id"]
        assert not any(fact.stated_in(text) for text in label.get("different", [])), label["id"]


def test_a_bullet_is_a_duplicate_when_all_it_states_was_stated_before() -> None:
    ankle = FACTS["hale-sprained-ankle"]
    tablet = FACTS["eighth-tablet"]
    bullets = [
        "Hale sprained his right ankle at the Moss.",
        "Hale's ankle still hurts on stairs.",  # the same fact again
        "Sam found an eighth tablet the day Hale hurt his ankle.",  # one new fact: kept
        "The eighth tablet was found in trench D.",  # nothing new
        "Hale wore his good jumper.",  # no labelled fact
    ]
    counted = count_duplicates(bullets, [ankle, tablet])
    assert (counted.duplicates, counted.unlabelled, counted.facts_found) == (2, 1, 2)
    assert counted.per_100 == 40.0


def test_each_restatement_after_the_first_is_a_duplicate() -> None:
    bullets = [text for label in LABELS["facts"] for text in label["same"]]
    counted = count_duplicates(bullets, list(FACTS.values()))
    assert counted.facts_found == len(FACTS)
    assert counted.unlabelled == 0
    # A bullet that is not a duplicate states a fact for the first time: one per fact at most.
    assert counted.duplicates >= len(bullets) - len(FACTS)


def test_fact_matching_ignores_case_and_curly_apostrophes() -> None:
    fact = Fact("x", (("hale's tea",),))
    assert fact.stated_in("HALE\u2019S TEA is strong")


def test_extract_saves_each_chunks_bullets_in_order(tmp_path: Path) -> None:
    calls: list[int] = []

    def answer(request: ChatRequest) -> Completion:
        calls.append(len(calls))
        return Completion(f"<memory>\n- Hale catalogued tablet number {len(calls)}.\n</memory>")

    def open_app(root: Path) -> App:
        return App(Workspace.create(root), env={}, chat_model=lambda: FakeChatModel(answer))

    chunks_file = tmp_path / "chunks.json"
    bullets = asyncio.run(extract(chunks_file, messages=45, open_app=open_app))
    chunks = json.loads(chunks_file.read_text(encoding="utf-8"))
    assert len(chunks) == len(calls) >= 2
    assert chunks[-1]["last"] < 45
    assert bullets == [f"Hale catalogued tablet number {n}." for n in range(1, len(calls) + 1)]
    assert saved_bullets(chunks_file) == bullets


def test_the_filter_checks_each_bullet_against_the_bullets_kept_before_it() -> None:
    bullets = ["Sam is from Leeds.", "Sam grew up in Leeds.", "Sam has a Welsh nan."]
    vectors = np.array([[1.0, 0.0], [0.96, 0.28], [0.0, 1.0]], dtype=np.float32)

    def close(new: str, saved: str, cosine: float) -> bool:
        return cosine >= 0.95

    assert kept_by_filter(bullets, vectors, close) == [0, 2]
    # A dropped bullet is no one's match: the third, close to the second only, is kept.
    vectors[2] = [0.866, 0.5]
    assert kept_by_filter(bullets, vectors, close) == [0, 2]
