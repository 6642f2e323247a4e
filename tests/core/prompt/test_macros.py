"""SillyTavern's macros, replaced in one pass in its order, with seeded dice and a fixed clock."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import pytest

from charmemory.core.prompt.clock_text import humanized
from charmemory.core.prompt.macros import MacroContext

NOW = datetime(2026, 11, 28, 19, 5, tzinfo=UTC)  # a Saturday


def context(**values) -> MacroContext:
    defaults = {
        "user": "Wren",
        "char": "Seraphina",
        "rng": random.Random(5),
        "now": NOW,
        "description": "{{char}} guards {{user}}.",
        "personality": "kind",
        "scenario": "A glade.",
        "persona": "A traveller.",
        "mes_examples": "<START>",
        "char_prompt": "Card prompt",
        "char_jailbreak": "Card post-history",
        "char_version": "1.2",
    }
    return MacroContext(**{**defaults, **values})


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("{{char}} and {{user}}", "Seraphina and Wren"),
        ("{{CHAR}} and {{User}}", "Seraphina and Wren"),
        ("<USER> meets <BOT> and <char>", "Wren meets Seraphina and Seraphina"),
        ("{{charIfNotGroup}} / {{group}}", "Seraphina / Seraphina"),
        ("{{description}}", "Seraphina guards Wren."),
        (
            "{{personality}}|{{scenario}}|{{persona}}|{{mesExamples}}",
            "kind|A glade.|A traveller.|<START>",
        ),
        (
            "{{charPrompt}}|{{charJailbreak}}|{{charVersion}}|{{char_version}}",
            "Card prompt|Card post-history|1.2|1.2",
        ),
        ("a{{newline}}b", "a\nb"),
        ("a\n\n{{trim}}\nb", "ab"),
        ("a{{noop}}b", "ab"),
        ("keep {{// a comment\nover lines}}this", "keep this"),
        ("{{time}} on {{date}}, a {{weekday}}", "7:05 PM on November 28, 2026, a Saturday"),
        ("{{isotime}} {{isodate}}", "19:05 2026-11-28"),
        ("{{original}}", "{{original}}"),  # only where a card field overrides a prompt
        ("{{unknown}} stays", "{{unknown}} stays"),
        ("{{outlet::Weather}}|{{outlet:: Weather }}|{{outlet::weather}}", "Rain.|Rain.|"),
        ("no macros at all", "no macros at all"),
        ("", ""),
    ],
)
def test_macros(text: str, expected: str):
    assert context(outlets={"Weather": "Rain."}).substitute(text) == expected


def test_original_is_replaced_once():
    assert context().substitute("[{{original}}] [{{original}}]", original="Main") == "[Main] []"


@pytest.mark.parametrize(
    ("since", "expected"),
    [
        (None, "just now"),
        (timedelta(seconds=30), "a few seconds"),
        (timedelta(minutes=5), "5 minutes"),
        (timedelta(hours=3), "3 hours"),
        (timedelta(days=2), "2 days"),
    ],
)
def test_idle_duration(since: timedelta | None, expected: str):
    idle_since = None if since is None else NOW - since

    assert context(idle_since=idle_since).substitute("{{idle_duration}}") == expected


def test_a_naive_message_time_is_read_as_utc():
    assert (
        context(idle_since=datetime(2026, 11, 28, 18, 5)).substitute("{{idle_duration}}")
        == "an hour"
    )


@pytest.mark.parametrize(
    ("seconds", "expected"),
    [
        (44, "a few seconds"),
        (45, "a minute"),
        (89, "a minute"),
        (90, "2 minutes"),
        (44 * 60, "44 minutes"),
        (45 * 60, "an hour"),
        (90 * 60, "2 hours"),
        (21 * 3600, "21 hours"),
        (22 * 3600, "a day"),
        (36 * 3600, "2 days"),
        (25 * 86400, "25 days"),
        (26 * 86400, "a month"),
        (45 * 86400, "a month"),
        (46 * 86400, "2 months"),
        (319 * 86400, "10 months"),
        (320 * 86400, "a year"),
        (547 * 86400, "a year"),
        (548 * 86400, "2 years"),
    ],
)
def test_durations_are_humanized_with_moments_thresholds(seconds: int, expected: str):
    assert humanized(timedelta(seconds=seconds)) == expected


class TestRandomness:
    def test_random_picks_from_either_list_form(self):
        picks = {
            context(rng=random.Random(seed)).substitute("{{random::a::b::c}}") for seed in range(60)
        }
        commas = {
            context(rng=random.Random(seed)).substitute("{{random: x, y\\,z }}")
            for seed in range(60)
        }

        assert picks == {"a", "b", "c"}
        assert commas == {"x", "y,z"}

    @pytest.mark.parametrize(
        ("formula", "low", "high"),
        [
            ("{{roll:1d6}}", 1, 6),
            ("{{roll 20}}", 1, 20),
            ("{{roll:3d4+2}}", 5, 14),
            ("{{roll:d8-1}}", 0, 7),
        ],
    )
    def test_rolls_stay_in_range(self, formula: str, low: int, high: int):
        rolls = {int(context(rng=random.Random(seed)).substitute(formula)) for seed in range(200)}

        assert min(rolls) == low and max(rolls) == high

    @pytest.mark.parametrize("formula", ["{{roll:abc}}", "{{roll:0d6}}", "{{roll:2d0}}"])
    def test_an_invalid_roll_is_empty(self, formula: str):
        assert context().substitute(f"[{formula}]") == "[]"

    def test_the_same_seed_gives_the_same_text(self):
        text = "{{roll:2d20}} {{random::a::b::c::d}} {{roll:1d100}}"

        assert context(rng=random.Random(9)).substitute(text) == context(
            rng=random.Random(9)
        ).substitute(text)
