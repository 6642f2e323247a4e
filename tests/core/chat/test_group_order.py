"""Each reply order strategy, with a seeded random source (or a scripted one)."""

from __future__ import annotations

import random
from collections.abc import Iterable

import pytest

from charmemory.core.chat.group_order import (
    Member,
    Spoken,
    reply_order,
    speaker_to_redo,
    strategy_code,
    strategy_named,
    talkativeness,
    words,
)

VERA, LUND, ABEL = (
    Member("Vera.png", "Vera"),
    Member("Lund.png", "Lund"),
    Member("Abel.png", "Abel"),
)
CREW = [VERA, LUND, ABEL]


class Draws(random.Random):
    """A random source that returns the given numbers, in order."""

    def __init__(self, values: Iterable[float]) -> None:
        super().__init__(0)
        self._values = list(values)

    def random(self) -> float:
        return self._values.pop(0)


def said(name: str, *, member: str | None = None, text: str = "", **flags: bool) -> Spoken:
    return Spoken(name, member=member, text=text, **flags)


def shy(*members: Member) -> list[Member]:
    return [Member(m.id, m.name, 0.0) for m in members]


# -- natural ------------------------------------------------------------------------------


def test_natural_drafts_the_mentioned_first_in_the_order_of_the_words() -> None:
    order = reply_order(
        "natural", shy(*CREW), [], user_input="Abel, and you, Vera?", rng=random.Random(1)
    )
    assert order == ["Abel.png", "Vera.png"]


def test_natural_mentions_are_whole_words_of_the_name() -> None:
    crew = shy(Member("M.png", "Misaka Mikoto"), LUND)
    assert reply_order("natural", crew, [], user_input="Hey mikoto!", rng=random.Random(1)) == [
        "M.png"
    ]
    # "Misa" is no word of the name: no one is mentioned, all are shy, one is picked anyway.
    picked = reply_order(
        "natural", crew, [], user_input="Hey Misa", rng=Draws([0.0, 0.0, 0.5, 0.5, 0.9])
    )
    assert picked == ["Lund.png"]


def test_natural_talkativeness_is_a_probability_rolled_per_member() -> None:
    crew = [Member("Vera.png", "Vera", 1.0), Member("Lund.png", "Lund", 0.0), ABEL]
    # Shuffle draws (3), then one roll per member in shuffled order.
    rng = Draws([0.99, 0.99, 0.99, 0.4, 0.7, 0.7])
    # Shuffle with 0.99s: i=2<->2, 1<->1, 0<->0: order stays Vera, Lund, Abel.
    assert reply_order("natural", crew, [], user_input="hello", rng=rng) == ["Vera.png"]
    rng = Draws([0.99, 0.99, 0.99, 0.4, 0.7, 0.5])
    assert reply_order("natural", crew, [], user_input="hello", rng=rng) == ["Vera.png", "Abel.png"]


def test_natural_never_drafts_the_last_speaker_again_without_a_user_message() -> None:
    chat = [said("Vera", member="Vera.png", text="Lund, Vera here.")]
    chatty = [Member(m.id, m.name, 1.0) for m in CREW]
    for seed in range(20):
        order = reply_order("natural", chatty, chat, rng=random.Random(seed))
        assert "Vera.png" not in order and order[0] == "Lund.png"  # mentioned first
    assert "Vera.png" in reply_order(
        "natural", chatty, chat, allow_self_responses=True, rng=random.Random(0)
    )
    # The user's own message lifts the ban.
    assert "Vera.png" in reply_order("natural", chatty, chat, user_input="hi", rng=random.Random(0))


def test_natural_with_no_one_drafted_picks_among_the_talkative() -> None:
    crew = [Member("Vera.png", "Vera", 0.0), Member("Lund.png", "Lund", 0.3), ABEL]
    seen = set()
    for seed in range(50):
        rng = Draws([0.99, 0.99, 0.99, 0.9, 0.9, 0.9, random.Random(seed).random()])
        seen.update(reply_order("natural", crew, [], user_input="hm", rng=rng))
    assert seen == {"Lund.png", "Abel.png"}  # never the shy one


def test_natural_is_the_same_for_the_same_seed() -> None:
    runs = {
        tuple(reply_order("natural", CREW, [], user_input="hello", rng=random.Random(7)))
        for _ in range(3)
    }
    assert len(runs) == 1


# -- list ---------------------------------------------------------------------------------


def test_list_drafts_everyone_in_list_order() -> None:
    assert reply_order("list", CREW, [], user_input="Abel?", rng=Draws([])) == [
        "Vera.png",
        "Lund.png",
        "Abel.png",
    ]


# -- pooled -------------------------------------------------------------------------------


def test_pooled_after_a_user_message_anyone_may_speak() -> None:
    chat = [said("Vera", member="Vera.png"), said("Lund", member="Lund.png")]
    assert reply_order("pooled", CREW, chat, user_input="hi", rng=Draws([0.5])) == ["Lund.png"]


def test_pooled_picks_among_those_who_have_not_spoken_since_the_user() -> None:
    chat = [
        said("Abel", member="Abel.png"),
        said("Wren", is_user=True),
        said("Vera", member="Vera.png"),
        said("Narrator", is_narrator=True),
    ]
    for value in (0.0, 0.99):
        assert reply_order("pooled", CREW, chat, rng=Draws([value])) in (["Lund.png"], ["Abel.png"])
    assert reply_order("pooled", CREW, chat, rng=Draws([0.0])) == ["Lund.png"]
    assert reply_order("pooled", CREW, chat, rng=Draws([0.99])) == ["Abel.png"]


def test_pooled_when_all_have_spoken_anyone_but_the_last_speaker() -> None:
    chat = [said("Wren", is_user=True)] + [said(m.name, member=m.id) for m in CREW]
    picks = {reply_order("pooled", CREW, chat, rng=random.Random(s))[0] for s in range(40)}
    assert picks == {"Vera.png", "Lund.png"}


# -- manual -------------------------------------------------------------------------------


def test_manual_a_user_message_drafts_no_one() -> None:
    assert reply_order("manual", CREW, [], user_input="Vera?", rng=Draws([])) == []


def test_manual_without_a_user_message_one_at_random() -> None:
    picks = {reply_order("manual", CREW, [], rng=random.Random(s))[0] for s in range(40)}
    assert picks == {"Vera.png", "Lund.png", "Abel.png"}
    assert len(reply_order("manual", CREW, [], rng=random.Random(3))) == 1


# -- the rest -----------------------------------------------------------------------------


def test_no_members_no_one_speaks() -> None:
    for strategy in ("natural", "list", "pooled", "manual"):
        assert reply_order(strategy, [], [], user_input="hi", rng=random.Random(0)) == []


def test_the_last_writer_swipes_and_continues() -> None:
    chat = [
        said("Vera", member="Vera.png"),
        said("Lund", member="Lund.png"),
        said("W", is_user=True),
    ]
    assert speaker_to_redo(CREW, chat, random.Random(0)) == "Lund.png"
    assert speaker_to_redo(CREW, [said("Abel")], random.Random(0)) == "Abel.png"  # by name
    assert speaker_to_redo(CREW[:2], [said("Abel", member="Abel.png")], random.Random(0)) is None
    assert speaker_to_redo(CREW, [said("W", is_user=True)], random.Random(0)) in {
        m.id for m in CREW
    }


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, 0.5),
        ("0.8", 0.8),
        (0.1, 0.1),
        ("", 0.0),
        ("chatty", 0.5),
        (True, 1.0),
        (float("nan"), 0.5),
    ],
)
def test_talkativeness_reads_as_javascripts_number(value: object, expected: float) -> None:
    assert talkativeness(value) == expected


def test_words_are_javascripts_ascii_words() -> None:
    assert words("Søren, hi_there 42!") == ["s", "ren", "hi_there", "42"]


def test_strategies_round_trip_their_sillytavern_numbers() -> None:
    for name in ("natural", "list", "manual", "pooled"):
        assert strategy_named(strategy_code(name)) == name
    assert [strategy_code(n) for n in ("natural", "list", "manual", "pooled")] == [0, 1, 2, 3]
    assert strategy_named(9) == "natural"
