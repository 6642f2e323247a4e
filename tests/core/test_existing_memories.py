from hypothesis import given, settings
from hypothesis import strategies as st

from charmemory.core.existing_memories import (
    Candidate,
    StoredBlock,
    approx_tokens,
    drop_duplicates,
    normalise_bullet,
    recent_first,
    select_existing,
)


def test_tokens_are_approximated_as_four_characters_rounded_up() -> None:
    assert approx_tokens("") == 0
    assert approx_tokens("abc") == 1
    assert approx_tokens("abcd") == 1
    assert approx_tokens("abcde") == 2


BLOCKS = [
    StoredBlock(0, "2026-01-10 09:00", ("Alex was born in Porto.", "Alex feared deep water.")),
    StoredBlock(1, "2026-03-02 18:30", ("Alex adopted a cat named Pip.",)),
    StoredBlock(2, "imported", ("Alex disliked olives.",)),
    StoredBlock(3, "2026-02-20 12:00", ("Alex and Seraphina swore an oath of friendship.",)),
]


def test_recent_first_orders_blocks_by_date_with_undated_ones_last() -> None:
    assert [c.text for c in recent_first(BLOCKS)] == [
        "Alex adopted a cat named Pip.",
        "Alex and Seraphina swore an oath of friendship.",
        "Alex was born in Porto.",
        "Alex feared deep water.",
        "Alex disliked olives.",
    ]


def test_recent_first_breaks_date_ties_by_place_in_the_file() -> None:
    same_day = [StoredBlock(0, "2026-01-01", ("first",)), StoredBlock(1, "2026-01-01", ("second",))]
    assert [c.text for c in recent_first(same_day)] == ["second", "first"]


def test_recent_first_compares_dates_with_and_without_offsets() -> None:
    mixed = [
        StoredBlock(0, "2026-01-02T10:00:00+02:00", ("offset",)),
        StoredBlock(1, "2026-01-01 10:00", ("naive",)),
    ]
    assert [c.text for c in recent_first(mixed)] == ["offset", "naive"]


def test_everything_that_fits_is_shown_grouped_under_its_block_in_file_order() -> None:
    selected = select_existing(recent_first(BLOCKS), 1500)
    assert selected.included == 5
    assert selected.left_out == 0
    assert selected.text == (
        "From 2026-01-10 09:00:\n- Alex was born in Porto.\n- Alex feared deep water.\n\n"
        "From 2026-03-02 18:30:\n- Alex adopted a cat named Pip.\n\n"
        "From imported:\n- Alex disliked olives.\n\n"
        "From 2026-02-20 12:00:\n- Alex and Seraphina swore an oath of friendship."
    )


def test_the_budget_keeps_the_first_candidates_in_priority_order() -> None:
    candidates = recent_first(BLOCKS)
    # Heading "\nFrom 2026-03-02 18:30:\n" (7) + bullet (8), then the oath block (8 + 13).
    selected = select_existing(candidates, 36)
    assert selected.included == 2
    assert "Alex adopted a cat named Pip." in selected.text
    assert "swore an oath" in selected.text
    assert "Porto" not in selected.text
    assert selected.tokens <= 36


def test_a_bullet_too_big_for_what_is_left_lets_a_smaller_later_one_in() -> None:
    candidates = [
        Candidate("A" * 400, 0, "d"),
        Candidate("Short fact.", 1, "d"),
    ]
    selected = select_existing(candidates, 20)
    assert selected.text == "From d:\n- Short fact."
    assert (selected.included, selected.left_out) == (1, 1)


def test_a_zero_budget_shows_nothing() -> None:
    selected = select_existing(recent_first(BLOCKS), 0)
    assert (selected.text, selected.included, selected.left_out) == ("", 0, 5)


def test_repeated_candidates_are_shown_once() -> None:
    candidates = [Candidate("Alex feared water.", 0), Candidate("alex feared water", 1)]
    selected = select_existing(candidates, 100)
    assert selected.included == 1
    assert selected.text == "Undated:\n- Alex feared water."


def test_shown_bullets_keep_the_file_order_whatever_their_priority() -> None:
    by_relevance = [
        Candidate("Mira owes Venn.", 1, "2026-01-02", 2),
        Candidate("Mira met Alex.", 0, "2026-01-01", 0),
        Candidate("Mira named the ship.", 1, "2026-01-02", 0),
    ]
    in_file_order = [by_relevance[1], by_relevance[2], by_relevance[0]]

    shown = select_existing(by_relevance, 200).text

    assert shown == select_existing(in_file_order, 200).text
    assert shown.index("named the ship") < shown.index("owes Venn")


def test_a_tokenizer_can_be_passed_in() -> None:
    def words(text: str) -> int:
        return len(text.split())

    candidates = [Candidate("one two three", 0, "d"), Candidate("four five six", 0, "d")]
    # Heading "From d:" = 2 words, each bullet 4 words ("-" counts).
    assert select_existing(candidates, 6, count_tokens=words).included == 1
    assert select_existing(candidates, 10, count_tokens=words).included == 2


@settings(max_examples=150)
@given(
    bullets=st.lists(st.tuples(st.text(min_size=1, max_size=80), st.integers(0, 5)), max_size=30),
    budget=st.integers(0, 400),
)
def test_the_rendered_memories_never_exceed_the_budget(
    bullets: list[tuple[str, int]], budget: int
) -> None:
    candidates = [Candidate(text, block, f"2026-01-0{block + 1}") for text, block in bullets]
    selected = select_existing(candidates, budget)
    assert approx_tokens(selected.text) <= selected.tokens <= budget


def test_normalised_bullets_ignore_case_quotes_punctuation_spacing_and_articles() -> None:
    variants = [
        "The cat was named “Pip”.",
        "the cat was named 'Pip'",
        '  THE  cat, was named "Pip"!!',
        "cat was named Pip",
    ]
    assert {normalise_bullet(v) for v in variants} == {"cat was named pip"}
    assert normalise_bullet("Alex didn’t swim.") == normalise_bullet("Alex didn't swim")
    assert normalise_bullet("An oath was sworn") == "oath was sworn"
    assert normalise_bullet("Theo left") == "theo left"


def test_new_bullets_that_repeat_saved_or_earlier_new_ones_are_dropped() -> None:
    result = drop_duplicates(
        [
            ["Alex adopted a cat named Pip.", "Seraphina lost her bow."],
            ["seraphina lost her bow", "Alex adopted a cat named “Pip”"],
            ["Alex moved to Lyon."],
        ],
        existing=["The cat was named Pip.", "Alex adopted a cat named Pip"],
    )
    assert result.blocks == [["Seraphina lost her bow."], ["Alex moved to Lyon."]]
    assert result.dropped == [
        "Alex adopted a cat named Pip.",
        "seraphina lost her bow",
        "Alex adopted a cat named “Pip”",
    ]


def test_a_similarity_check_drops_near_duplicates() -> None:
    asked: list[tuple[str, str]] = []

    def similar(a: str, b: str) -> bool:
        asked.append((a, b))
        return "Lyon" in a and "Lyon" in b

    result = drop_duplicates(
        [["Alex relocated to Lyon.", "Alex bought a bike."]],
        existing=["Alex moved to Lyon."],
        similar=similar,
    )
    assert result.blocks == [["Alex bought a bike."]]
    assert result.dropped == ["Alex relocated to Lyon."]
    assert ("Alex bought a bike.", "Alex moved to Lyon.") in asked


def test_nothing_new_leaves_no_blocks() -> None:
    assert drop_duplicates([["Alex moved to Lyon."]], ["alex moved to lyon"]).blocks == []
