"""Memory titles: numbers filled and read back as STMB fills and reads them."""

import pytest

from charmemory.core.books.titles import (
    TitleValues,
    apply_number,
    has_number_token,
    next_number,
    number_by_format,
    number_in_title,
    render_title,
    sanitize_title,
    unknown_tokens,
)


@pytest.mark.parametrize(
    ("title_format", "expected"),
    [
        ("[[000]] - {{title}}", "[007] - {{title}}"),
        ("[000] - {{title}}", "007 - {{title}}"),
        ("([000]) - {{title}}", "(007) - {{title}}"),
        ("{[000]} - {{title}}", "{007} - {{title}}"),
        ("#[000] - {{title}}", "#007 - {{title}}"),
        ("(000) - {{title}}", "(007) - {{title}}"),
        ("{000} - {{title}}", "{007} - {{title}}"),
        ("#000 - {{title}}", "#007 - {{title}}"),
        ("[0] {{title}}", "7 {{title}}"),
        ("[[000]] / [[000]] - {{title}}", "[007] / [007] - {{title}}"),
        ("{{title}}", "{{title}}"),
    ],
)
def test_every_number_token_is_filled_as_stmb_fills_it(title_format: str, expected: str) -> None:
    assert apply_number(title_format, 7) == expected
    assert has_number_token(title_format) == (expected != title_format)


def test_a_number_wider_than_its_token_is_written_whole() -> None:
    assert apply_number("[00] - {{title}}", 123) == "123 - {{title}}"


def test_every_title_token_is_replaced() -> None:
    values = TitleValues(
        title="Dawn at the Docks",
        scene="10-25",
        char="Mira",
        user="Alex",
        messages=16,
        profile="Default",
        date="2026-03-01",
        time="12:00:05",
    )
    title_format = (
        "[000] {{title}} {{scene}} {{char}} {{user}} {{messages}} {{profile}} {{date}} {{time}}"
    )
    assert render_title(title_format, values, 3) == (
        "003 Dawn at the Docks Scene 10-25 Mira Alex 16 Default 2026-03-01 12:00:05"
    )
    assert render_title("[000] - {{title}}", TitleValues(title="  "), 1) == "001 - Memory"


def test_titles_lose_control_characters_only() -> None:
    assert sanitize_title(" Dawn\x00 at\u0085 the 🌅 docks ") == "Dawn at the 🌅 docks"
    assert sanitize_title("\x01\x02") == "Auto Memory"


def test_unknown_tokens_are_named() -> None:
    assert unknown_tokens("[000] {{title}} {{mood}}") == ["{{mood}}"]


@pytest.mark.parametrize(
    ("title", "number"),
    [
        ("[012] - Dawn", 12),
        ("(3) Dawn", 3),
        ("{44} Dawn", 44),
        ("Memory #7-8", 8),
        ("Memory #5", 5),
        ("015 - Dawn", 15),
        ("Memory of 2026-03-01, no. 9", 9),
        ("2026-03-01 memory 9", 2026),  # a leading number wins, as in STMB
        ("No number", None),
    ],
)
def test_numbers_are_read_by_stmbs_general_rules(title: str, number: int | None) -> None:
    assert number_in_title(title) == number


def test_the_format_guides_reading_a_number_past_a_date() -> None:
    title_format = "{{date}} [[000]] {{title}}"
    assert number_by_format("2026-03-01 [012] Dawn", title_format) == 12
    assert number_by_format("012 - 2026 Dawn", "[000] - {{title}}") == 12
    assert number_by_format("Untitled 4", "[000] - {{title}}") == 4  # the general rules


def test_the_next_number_is_the_highest_plus_one() -> None:
    titles = ["001 - A", "007 - B", "003 - C", "no number at all"]
    assert next_number(titles, "[000] - {{title}}") == 8
    assert next_number([], "[000] - {{title}}") == 1
