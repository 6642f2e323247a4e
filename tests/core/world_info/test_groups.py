"""Inclusion groups: one entry per group, chosen by priority, score, stickiness or weight."""

from __future__ import annotations

import random
from collections import Counter

from charmemory.core.world_info.entries import entry_hash, lore_entry
from charmemory.core.world_info.groups import filter_inclusion_groups
from tests.support.lore import activated, candidates_of, entry, reason_of, scan

CHAT = ["Sing me a song about ghosts."]


def test_one_entry_of_a_group_goes_in():
    lore = [entry(uid, ["song"], group="songs") for uid in range(3)]

    result = scan(lore, CHAT)

    assert len(activated(result)) == 1
    losers = [e for e in result.explanations() if not e.activated]
    assert all(e.reason.value == "inclusion_group" for e in losers)
    assert all(e.text.startswith("lost inclusion group 'songs' to Lore#") for e in losers)


def test_entries_without_a_group_are_not_affected():
    lore = [
        entry(0, ["song"], group="songs"),
        entry(1, ["song"], group="songs"),
        entry(2, ["song"]),
    ]

    assert 2 in activated(scan(lore, CHAT))


def test_the_weighted_roll_follows_the_weights():
    lore = [
        entry(0, ["song"], group="songs", groupWeight=90),
        entry(1, ["song"], group="songs", groupWeight=10),
    ]

    winners = Counter(activated(scan(lore, CHAT, seed=seed))[0] for seed in range(300))

    assert winners[0] > 230 and winners[1] > 10


def test_the_same_seed_gives_the_same_winner():
    lore = [entry(uid, ["song"], group="songs") for uid in range(5)]

    assert {tuple(activated(scan(lore, CHAT, seed=42))) for _ in range(5)} == {
        tuple(activated(scan(lore, CHAT, seed=42)))
    }


def test_prioritized_entries_win_by_order():
    lore = [
        entry(0, ["song"], group="songs", order=500),
        entry(1, ["song"], group="songs", groupOverride=True, order=100),
        entry(2, ["song"], group="songs", groupOverride=True, order=200),
    ]

    result = scan(lore, CHAT)

    assert activated(result) == [2]
    assert reason_of(result, 0)[1] == "lost inclusion group 'songs' to Lore#2 (prioritized)"


def test_group_scoring_keeps_the_entries_with_most_keys_found():
    # The documentation's example: "sing me a song about Ghosts" activates entry 2 only.
    black_cat = entry(1, ["song", "sing", "Black Cat"], group="songs", useGroupScoring=True)
    ghosts = entry(2, ["song", "sing", "Ghosts"], group="songs", useGroupScoring=True)

    for seed in range(20):
        assert activated(scan([black_cat, ghosts], CHAT, seed=seed)) == [2]
    assert (
        reason_of(scan([black_cat, ghosts], CHAT), 1)[1]
        == "lost inclusion group 'songs': key score 2 < 3"
    )


def test_group_scoring_can_be_the_default():
    lore = [
        entry(1, ["song", "Black Cat"], group="songs"),
        entry(2, ["song", "Ghosts"], group="songs"),
    ]

    assert activated(scan(lore, CHAT, use_group_scoring=True)) == [2]


def test_secondary_keys_count_towards_the_score_under_and_any():
    lore = [
        entry(1, ["song"], group="songs", keysecondary=["ghosts"], useGroupScoring=True),
        entry(2, ["song"], group="songs", useGroupScoring=True),
    ]

    assert activated(scan(lore, CHAT)) == [1]


def test_a_sticky_member_keeps_its_group():
    lore = [
        entry(0, ["song"], group="songs", sticky=5),
        entry(1, ["song"], group="songs", groupOverride=True),
    ]
    state = {
        "sticky": {
            "Lore.0": {"hash": entry_hash(lore_entry("Lore", lore[0])), "start": 1, "end": 9}
        },
        "cooldown": {},
    }

    result = scan(lore, ["x", *CHAT], timed_state=state)

    assert activated(result) == [0]
    assert reason_of(result, 1)[1] == "lost inclusion group 'songs' to the sticky entry Lore#0"


def test_a_group_filled_in_an_earlier_pass_takes_no_more_entries():
    lore = [
        entry(0, ["song"], "A song of the sea.", group="music"),
        entry(1, ["sea"], "The sea is wide.", group="music"),
    ]

    result = scan(lore, CHAT)

    assert activated(result) == [0]
    assert reason_of(result, 1)[1] == "inclusion group 'music' already has an active entry"


def test_an_entry_in_several_groups_blocks_all_of_them():
    lore = [
        entry(0, ["song"], group="a, b", groupOverride=True),
        entry(1, ["song"], group="a"),
        entry(2, ["song"], group="b"),
    ]

    assert activated(scan(lore, CHAT)) == [0]


def test_the_filter_keeps_the_order_it_was_given():
    found = candidates_of(
        entry(0, ["x"]),
        entry(1, ["x"], group="g", groupOverride=True),
        entry(2, ["x"], group="g"),
        entry(3, ["x"]),
    )

    kept, lost = filter_inclusion_groups(
        [3, 2, 1, 0],
        found.entries,
        taken=(),
        sticky=(),
        score=lambda _: 0,
        use_group_scoring=False,
        rng=random.Random(0),
    )

    assert kept == [3, 1, 0]
    assert set(lost) == {2}
