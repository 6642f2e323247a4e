from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from charmemory.formats.chat_name import (
    character_of_chat_name,
    chat_file_id,
    chat_file_name,
    chat_label,
    is_group_chat_name,
    parse_chat_file_name,
    sanitize_file_name,
)


def test_new_chat_name_uses_the_current_form() -> None:
    when = datetime(2026, 2, 15, 10, 0, 0, 123456)

    assert chat_file_name("Seraphina", when) == "Seraphina - 2026-02-15@10h00m00s123ms.jsonl"


def test_new_chat_name_is_sanitized_like_sillytavern() -> None:
    when = datetime(2024, 7, 5, 4, 3, 2, 7000)

    name = chat_file_name('Dr. "Who"/What?: <Tom|Jerry>*\\\x00\x1f\x85 東', when)

    assert name == "Dr. WhoWhat TomJerry 東 - 2024-07-05@04h03m02s007ms.jsonl"


@pytest.mark.parametrize(
    ("file_name", "character", "when"),
    [
        (
            "Seraphina - 2026-02-15@10h00m00s123ms.jsonl",
            "Seraphina",
            datetime(2026, 2, 15, 10, 0, 0, 123000),
        ),
        ("Seraphina - 2024-07-05@14h20m05s.jsonl", "Seraphina", datetime(2024, 7, 5, 14, 20, 5)),
        ("Seraphina - 2023-6-19@14h20m05s", "Seraphina", datetime(2023, 6, 19, 14, 20, 5)),
        (
            "Seraphina - 2023-6-19 @14h 20m 05s 45ms.jsonl",
            "Seraphina",
            datetime(2023, 6, 19, 14, 20, 5, 45000),
        ),
        (
            "Seraphina - 2023-6-19 @14h 20m 05s 123ms imported.jsonl",
            "Seraphina",
            datetime(2023, 6, 19, 14, 20, 5, 123000),
        ),
        ("A - B - 2024-07-05@14h20m05s.jsonl", "A - B", datetime(2024, 7, 5, 14, 20, 5)),
        ("Branch #12 - 2024-07-05@14h20m05s.jsonl", "Branch #12", datetime(2024, 7, 5, 14, 20, 5)),
        ("2024-07-05@14h20m05s.jsonl", "", datetime(2024, 7, 5, 14, 20, 5)),
        ("1684445521323.jsonl", "", datetime(2023, 5, 18, 21, 32, 1, 323000, tzinfo=UTC)),
        ("My favourite chat.jsonl", "My favourite chat", None),
        ("Seraphina - 2024-07-05@14h20m05sXYZ.jsonl", "Seraphina - 2024-07-05@14h20m05sXYZ", None),
        ("Seraphina - 2023-13-40@10h00m00s.jsonl", "Seraphina", None),
    ],
)
def test_historical_names_parse(file_name: str, character: str, when: datetime | None) -> None:
    parsed = parse_chat_file_name(file_name)

    assert parsed == (character, when)
    assert parsed.character == character


# Characters sanitize-filename keeps, so the label survives unchanged.
safe_names = st.text(
    st.characters(codec="utf-8", exclude_characters='/?<>\\:*|"', exclude_categories=["Cc"]),
    min_size=1,
    max_size=40,
)


@settings(max_examples=150)
@given(name=safe_names, when=st.datetimes(min_value=datetime(1000, 1, 1)))
def test_built_names_parse_back(name: str, when: datetime) -> None:
    parsed = parse_chat_file_name(chat_file_name(name, when))

    assert parsed.character == name
    assert parsed.when == when.replace(microsecond=when.microsecond // 1000 * 1000)


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ('a/b\\c:d*e?f"g<h>i|j', "abcdefghij"),
        ("tab\there\nnew\x7fdel", "tabherenew\x7fdel"),
        ("..", ""),
        ("CON", ""),
        ("lpt1.jsonl", ""),
        ("console.jsonl", "console.jsonl"),
        ("trailing. . ", "trailing"),
    ],
)
def test_sanitize_matches_sanitize_filename(raw: str, clean: str) -> None:
    assert sanitize_file_name(raw) == clean


def test_sanitize_truncates_to_255_utf8_bytes_without_splitting_characters() -> None:
    result = sanitize_file_name("é" * 200)  # 400 bytes

    assert result == "é" * 127
    assert len(result.encode("utf-8")) == 254


@pytest.mark.parametrize(
    ("file_name", "character"),
    [
        ("Seraphina - 2026-11-28@19h02m11s482ms.jsonl", "Seraphina"),
        ("Seraphina - 2024-07-05@14h20m05s.jsonl", "Seraphina"),
        ("Seraphina - 2023-6-19 @14h 20m 05s 123ms imported.jsonl", "Seraphina"),
        ("Captain Mira Vance - 2024-07-05@14h20m05s", "Captain Mira Vance"),
        ("A - B - 2024-07-05@14h20m05s.jsonl", "A - B"),
        ("The thornwall crossing.jsonl", "The thornwall crossing"),
        ("My save - 2024-07-05@14h20m05s.jsonl", "My save"),
        ("Branch #12 - 2024-07-05@14h20m05s.jsonl", None),
        ("Checkpoint #3 - 2024-07-05@14h20m05s.jsonl", None),
        ("2026-11-30@20h15m03s221ms.jsonl", None),
        ("2023-6-19 @14h 20m 05s 123ms.jsonl", None),
        ("1684445521323.jsonl", None),
        (" - 2024-07-05@14h20m05s.jsonl", None),
    ],
)
def test_the_character_a_chat_name_names(file_name: str, character: str | None) -> None:
    assert character_of_chat_name(file_name) == character


@pytest.mark.parametrize(
    ("file_name", "group"),
    [
        ("2026-11-30@20h15m03s221ms.jsonl", True),
        ("2024-07-05@14h20m05s", True),
        ("2023-6-19 @14h 20m 05s 123ms.jsonl", True),
        ("1684445521323.jsonl", False),
        ("Seraphina - 2026-11-30@20h15m03s221ms.jsonl", False),
        ("Branch #2 - 2026-11-30@20h15m03s221ms.jsonl", False),
        ("2026-11-30@20h15m03s221ms imported.jsonl", False),
        ("The thornwall crossing.jsonl", False),
    ],
)
def test_group_chats_are_named_by_a_bare_stamp(file_name: str, group: bool) -> None:
    assert is_group_chat_name(file_name) is group


@pytest.mark.parametrize(
    ("name", "label"),
    [
        ("Seraphina", "Seraphina"),
        ('Dr. "Who"', "Dr. Who"),
        ("AC/DC", "ACDC"),
        ("Mr. X.", "Mr. X."),
    ],
)
def test_chat_label_is_the_name_as_chat_file_names_spell_it(name: str, label: str) -> None:
    assert chat_label(name) == label


def test_chat_file_id_is_the_name_sillytavern_saves_a_chat_under() -> None:
    assert chat_file_id("Seraphina - 2023-5-12 @21h 32m 29s 224ms") == (
        "Seraphina - 2023-5-12 @21h 32m 29s 224ms"
    )
    assert chat_file_id('What? "Now" - 2024-07-05@14h20m05s') == "What Now - 2024-07-05@14h20m05s"
