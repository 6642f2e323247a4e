"""Placement of activated entries by position, ordered by `order`."""

from __future__ import annotations

from typing import Any

from charmemory.core.world_info.entries import lore_entry
from charmemory.core.world_info.placement import DepthInjection, place_entries
from tests.support.lore import entry, scan


def placed(*specs: tuple[int, str, dict[str, Any]]):
    """Place entries given as (uid, content, fields), in that activation order."""
    return place_entries(
        (lore_entry("Lore", entry(uid, ["k"], text, **fields)), text) for uid, text, fields in specs
    )


def test_before_and_after_run_from_low_to_high_order():
    result = placed(
        (0, "high", {"order": 300}),
        (1, "low", {"order": 100}),
        (2, "middle", {"order": 200}),
        (3, "after", {"position": 1}),
    )

    assert result.before == "low\nmiddle\nhigh"
    assert result.after == "after"


def test_equal_orders_put_the_later_activated_entry_first():
    assert placed((0, "first", {}), (1, "second", {})).before == "second\nfirst"


def test_depth_entries_are_grouped_by_depth_and_role():
    result = placed(
        (0, "a", {"position": 4, "depth": 2, "order": 5}),
        (1, "b", {"position": 4, "depth": 2, "order": 1}),
        (2, "c", {"position": 4, "depth": 2, "role": 1}),
        (3, "d", {"position": 4, "depth": 0}),
    )

    assert set(result.at_depth) == {
        DepthInjection(2, "system", "b\na"),
        DepthInjection(2, "user", "c"),
        DepthInjection(0, "system", "d"),
    }


def test_authors_note_and_example_positions():
    result = placed(
        (0, "top", {"position": 2}),
        (1, "bottom", {"position": 3}),
        (2, "ex-low", {"position": 5, "order": 1}),
        (3, "ex-high", {"position": 5, "order": 9}),
        (4, "tail-low", {"position": 6, "order": 1}),
        (5, "tail-high", {"position": 6, "order": 9}),
    )

    assert (result.authors_note_top, result.authors_note_bottom) == (("top",), ("bottom",))
    # Each "before the examples" entry is put at the very top, so the highest order comes first.
    assert result.examples_before == ("ex-high", "ex-low")
    assert result.examples_after == ("tail-low", "tail-high")


def test_outlets_list_their_entries_from_the_highest_order():
    result = placed(
        (0, "low", {"position": 7, "outletName": "Weather", "order": 1}),
        (1, "high", {"position": 7, "outletName": "Weather", "order": 9}),
        (2, "other", {"position": 7, "outletName": "Mood"}),
        (3, "nameless", {"position": 7}),
    )

    assert result.outlets == {"Weather": "high\nlow", "Mood": "other"}
    assert result.unplaced == (("Lore", 3),)


def test_empty_content_and_unknown_positions_are_left_out():
    result = placed((0, "", {}), (1, "odd", {"position": 42}))

    assert result.before == ""
    assert result.unplaced == (("Lore", 1),)


def test_the_engine_places_content_with_its_macros_replaced():
    lore = [entry(0, ["oak"], "{{char}} knows the oak.", position=1)]

    result = scan(lore, ["The oak."], substitute=lambda text: text.replace("{{char}}", "Seraphina"))

    assert result.placement.after == "Seraphina knows the oak."
