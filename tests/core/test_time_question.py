from dataclasses import dataclass
from datetime import date

import pytest

from charmemory.core.fusion import WeightedScores, select
from charmemory.core.time_question import (
    Days,
    TimeFocus,
    TimeQuestion,
    block_day,
    chat_day,
    read_time_question,
)
from charmemory.formats.chat import parse_chat

THURSDAY = date(2026, 5, 28)


def days_of(text: str, now: date | None = THURSDAY) -> tuple[date, date] | None:
    question = read_time_question(text, now)
    if question is None or question.days is None:
        return None
    return question.days.first, question.days.last


@pytest.mark.parametrize(
    ("text", "first", "last"),
    [
        ("What happened yesterday?", date(2026, 5, 27), date(2026, 5, 27)),
        ("What did we do on Monday morning?", date(2026, 5, 25), date(2026, 5, 25)),
        ("Where were we last Friday night?", date(2026, 5, 22), date(2026, 5, 22)),
        # Asked on a Thursday, "Thursday" is the one a week before.
        ("Who came by on Thursday?", date(2026, 5, 21), date(2026, 5, 21)),
        ("What happened three days ago?", date(2026, 5, 25), date(2026, 5, 25)),
        ("Where were we a week ago today?", date(2026, 5, 21), date(2026, 5, 21)),
        ("What did we do last week?", date(2026, 5, 18), date(2026, 5, 24)),
        ("Who attacked us early last week?", date(2026, 5, 18), date(2026, 5, 20)),
        ("What happened at the end of last week?", date(2026, 5, 22), date(2026, 5, 24)),
        ("Who did we catch the weekend before last?", date(2026, 5, 16), date(2026, 5, 17)),
        ("What happened last weekend?", date(2026, 5, 23), date(2026, 5, 24)),
        ("Tell me what we did on the ninth of January.", date(2026, 1, 9), date(2026, 1, 9)),
        ("What happened on the twenty-first of February?", date(2026, 2, 21), date(2026, 2, 21)),
        ("What did we do on March 3rd?", date(2026, 3, 3), date(2026, 3, 3)),
        ("What did she give me on Valentine’s Day?", date(2026, 2, 14), date(2026, 2, 14)),
        ("What happened on the last day of April?", date(2026, 4, 30), date(2026, 4, 30)),
        # A day still to come this year is last year's.
        ("What did we do on Christmas Eve?", date(2025, 12, 24), date(2025, 12, 24)),
    ],
)
def test_days_counted_from_the_day_asked(text: str, first: date, last: date) -> None:
    assert days_of(text) == (first, last)


def test_a_calendar_day_without_the_day_asked_matches_any_year() -> None:
    question = read_time_question("What did we do on the ninth of January?", None)

    assert question is not None and question.days is not None
    assert question.days.holds(date(2019, 1, 9)) and question.days.holds(date(2026, 1, 9))
    assert not question.days.holds(date(2026, 1, 10))


def test_relative_days_need_the_day_asked() -> None:
    assert read_time_question("What happened yesterday?", None) is None


@pytest.mark.parametrize(
    ("text", "anchor", "offset"),
    [
        ("What happened three days after we set out on the north road?",
         "we set out on the north road", (3, 3)),
        ("What happened the morning after I hired Kael at the tavern?",
         "I hired Kael at the tavern", (1, 1)),
        ("What did we do the day before we boarded the Black Gull?",
         "we boarded the Black Gull", (-1, -1)),
        ("What did we get up to the week before Lina left the glade?",
         "Lina left the glade", (-7, -1)),
        ("What news arrived a few days after the storm broke the mill wheel?",
         "the storm broke the mill wheel", (2, 5)),
        ("Where did we sleep on the night of the day we met Orrin?", "we met Orrin", (0, 0)),
        ("On the night of the ambush, what did Kael tell me about his past?",
         "the ambush", (0, 0)),
        ("What was the first cargo we carried after I became first mate?",
         "I became first mate", (0, None)),
    ],
)  # fmt: skip
def test_days_counted_from_an_event(text: str, anchor: str, offset: tuple) -> None:
    question = read_time_question(text, THURSDAY)

    assert question is not None
    assert (question.anchor, question.offset) == (anchor, offset)


def test_days_from_the_event_s_day() -> None:
    question = TimeQuestion(anchor="the storm", offset=(2, 5))

    assert question.days_from(date(2026, 3, 1)) == Days(date(2026, 3, 3), date(2026, 3, 6))
    assert (
        TimeQuestion(anchor="x", offset=(0, None))
        .days_from(date(2026, 3, 1))
        .holds(date(2030, 1, 1))
    )


@pytest.mark.parametrize(
    ("text", "order"),
    [
        ("When did Seraphina first find me?", "earliest"),
        ("What is the most recent news of the Cinder Abbess?", "latest"),
        ("Which came first: the break-in or the trial?", None),
        ("When did the mayor get poisoned?", None),
    ],
)
def test_earliest_or_latest(text: str, order: str | None) -> None:
    question = read_time_question(text, THURSDAY)

    assert (question.order if question else None) == order


@pytest.mark.parametrize(
    "text",
    [
        "*She smiles.* Yesterday the first snow fell on the ridge, and the owls were quiet.",
        "How long ago did Lina leave us?",
        "How many days after Lady Agnes was arrested did the mayor offer to sponsor her?",
        "What is Elara afraid of?",
    ],
)
def test_no_time_asked(text: str) -> None:
    assert read_time_question(text, THURSDAY) is None


@dataclass(frozen=True)
class Hit:
    key: str
    cosine: float
    vector_rank: int
    bm25: float | None
    bm25_rank: int | None
    day: date | None


def test_memories_of_the_days_asked_come_first_whatever_their_cosine() -> None:
    hits = [
        Hit("storm", 0.6, 1, 3.0, 1, date(2026, 5, 2)),
        Hit("market", 0.5, 2, None, None, date(2026, 5, 3)),
        Hit("the day asked", 0.05, 3, None, None, date(2026, 5, 4)),
    ]
    focus = TimeFocus(Days(date(2026, 5, 4), date(2026, 5, 4)), None, lambda hit: hit.day)

    chosen = select(hits, WeightedScores(), top_k=2, min_cosine=0.2, time=focus)
    plain = select(hits, WeightedScores(), top_k=2, min_cosine=0.2)

    assert [hit.key for hit, _ in chosen] == ["the day asked", "storm"]
    assert "the day asked" not in [hit.key for hit, _ in plain]


def test_the_earliest_close_match_is_preferred() -> None:
    hits = [
        Hit("later", 0.8, 1, None, None, date(2026, 3, 9)),
        Hit("first", 0.75, 2, None, None, date(2026, 1, 4)),
        Hit("unrelated and early", 0.1, 3, None, None, date(2025, 1, 1)),
    ]
    focus = TimeFocus(None, "earliest", lambda hit: hit.day)

    chosen = select(hits, WeightedScores(0, 1), top_k=3, time=focus)

    assert [hit.key for hit, _ in chosen] == ["first", "later", "unrelated and early"]


def test_block_and_chat_days() -> None:
    chat = parse_chat(
        '{"user_name": "You", "character_name": "Mira"}\n'
        '{"name": "You", "is_user": true, "mes": "hi", "send_date": "2026-05-27T21:00:00.000Z"}\n'
        '{"name": "Mira", "is_user": false, "mes": "hey", "send_date": "garbled"}\n'
    )

    assert block_day("2026-03-04 18:30") == date(2026, 3, 4)
    assert block_day("") is None and block_day("last spring") is None
    assert chat_day(chat) == date(2026, 5, 27)
