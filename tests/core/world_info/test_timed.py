"""Timed effects across generations, kept in chat_metadata.timedWorldInfo as SillyTavern does."""

from __future__ import annotations

from typing import Any

from charmemory.core.world_info.entries import entry_hash, lore_entry
from tests.support.lore import activated, entry, reason_of, scan


def chat_of(length: int, *, key_in_last: bool) -> list[str]:
    """A chat of `length` messages; the key "storm" is in the last one or in none."""
    texts = [f"message {index}" for index in range(length)]
    if key_in_last and texts:
        texts[-1] = "A storm rolls in."
    return texts


def generate(lore, length: int, state: dict[str, Any] | None, *, key: bool = True):
    return scan(lore, chat_of(length, key_in_last=key), timed_state=state)


def test_sticky_cooldown_and_delay_follow_each_other():
    lore = [entry(0, ["storm"], "It storms.", sticky=3, cooldown=2, delay=2)]
    state: dict[str, Any] | None = None
    seen = []
    for length, key in [
        (1, True),
        (2, True),
        (3, False),
        (4, False),
        (5, True),
        (6, True),
        (7, True),
    ]:
        result = generate(lore, length, state, key=key)
        seen.append((length, reason_of(result, 0)[0]))
        state = result.timed_state

    assert seen == [
        (1, "delay"),  # the chat holds 1 message, the delay is 2
        (2, "key"),  # activated: sticky until 5, cooldown until 4
        (3, "sticky"),
        (4, "sticky"),  # the cooldown ran out while sticky
        (5, "cooldown"),  # sticky ended: the cooldown starts again, protected
        (6, "cooldown"),
        (7, "key"),
    ]


def test_the_state_has_sillytaverns_shape():
    lore = [entry(0, ["storm"], "It storms.", sticky=3, cooldown=2)]

    state = generate(lore, 4, None).timed_state

    expected_hash = entry_hash(lore_entry("Lore", lore[0]))
    assert state == {
        "sticky": {"Lore.0": {"hash": expected_hash, "start": 4, "end": 7, "protected": False}},
        "cooldown": {"Lore.0": {"hash": expected_hash, "start": 4, "end": 6, "protected": False}},
    }


def test_an_effect_is_dropped_when_the_chat_did_not_advance():
    lore = [entry(0, ["storm"], "It storms.", sticky=3)]
    state = generate(lore, 4, None).timed_state

    again = generate(lore, 4, state, key=False)  # a swipe: same length, the key gone

    assert activated(again) == []
    assert again.timed_state["sticky"] == {}


def test_a_running_effect_is_not_restarted():
    lore = [entry(0, ["storm"], "It storms.", sticky=3)]
    state = generate(lore, 4, None).timed_state

    later = generate(lore, 5, state).timed_state

    assert later["sticky"]["Lore.0"]["start"] == 4


def test_an_edited_entry_loses_its_effect():
    state = generate([entry(0, ["storm"], "It storms.", sticky=5)], 4, None).timed_state
    edited = [entry(0, ["storm"], "It storms hard.", sticky=5)]

    result = generate(edited, 5, state, key=False)

    assert activated(result) == []
    assert "Lore.0" in result.timed_state["sticky"]  # kept until its time is over
    assert generate(edited, 9, result.timed_state, key=False).timed_state["sticky"] == {}


def test_an_entry_no_longer_sticky_drops_the_effect():
    state = generate([entry(0, ["storm"], "It storms.", sticky=5)], 4, None).timed_state
    raw_state = {"sticky": {"Lore.0": dict(state["sticky"]["Lore.0"])}, "cooldown": {}}
    not_sticky = entry(0, ["storm"], "It storms.")
    raw_state["sticky"]["Lore.0"]["hash"] = entry_hash(lore_entry("Lore", not_sticky))

    assert generate([not_sticky], 5, raw_state, key=False).timed_state["sticky"] == {}


def test_sticky_entries_skip_the_probability_roll():
    lore = [entry(0, ["storm"], "It storms.", sticky=3)]
    state = generate(lore, 4, None).timed_state
    unlikely = [entry(0, ["storm"], "It storms.", sticky=3, probability=0)]
    state["sticky"]["Lore.0"]["hash"] = entry_hash(lore_entry("Lore", unlikely[0]))

    assert reason_of(generate(unlikely, 5, state), 0)[0] == "sticky"


def test_foreign_and_malformed_state_is_tolerated():
    state = {
        "sticky": {"Other.3": {"hash": 1, "start": 1, "end": 99, "protected": False}, "bad": 7},
        "cooldown": "nonsense",
        "extension": {"kept": True},
    }

    result = generate([entry(0, ["storm"])], 4, state)

    assert result.timed_state == {
        "sticky": {"Other.3": {"hash": 1, "start": 1, "end": 99, "protected": False}},
        "cooldown": {},
        "extension": {"kept": True},
    }


def test_the_input_state_is_not_modified():
    lore = [entry(0, ["storm"], "It storms.", sticky=3)]
    state = generate(lore, 4, None).timed_state
    snapshot = {kind: dict(effects) for kind, effects in state.items()}

    generate(lore, 4, state, key=False)

    assert state == snapshot
