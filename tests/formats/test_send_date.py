from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from charmemory.formats.send_date import format_humanized, format_send_date, parse_send_date

MONTHS = "January February March April May June July August September October November December"


# How each SillyTavern version wrote a timestamp from the browser's local clock.
def old_message_timestamp(when: datetime) -> str:
    hours = when.hour % 12 or 12
    meridiem = "pm" if when.hour >= 12 else "am"
    month = MONTHS.split()[when.month - 1]
    return f"{month} {when.day}, {when.year} {hours}:{when.minute:02d}{meridiem}"


def humanized_iso8601(when: datetime) -> str:
    ms = when.microsecond // 1000
    ms_text = f"0{ms}" if ms < 10 else str(ms)
    return (
        f"{when.year}-{when.month}-{when.day} @{when.hour:02d}h {when.minute:02d}m "
        f"{when.second:02d}s {ms_text}ms"
    )


def humanized_2023(when: datetime) -> str:
    return (
        f"{when.year}-{when.month}-{when.day}@{when.hour:02d}h{when.minute:02d}m{when.second:02d}s"
    )


def humanized_2024(when: datetime) -> str:
    return when.strftime("%Y-%m-%d@%Hh%Mm%Ss")


def to_iso_string(when: datetime) -> str:
    return when.strftime("%Y-%m-%dT%H:%M:%S.") + f"{when.microsecond // 1000:03d}Z"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2026-02-15T10:00:00.123Z", datetime(2026, 2, 15, 10, 0, 0, 123000, tzinfo=UTC)),
        ("2026-02-15T12:00:00+02:00", datetime(2026, 2, 15, 10, 0, tzinfo=UTC)),
        ("2026-02-15T10:00:00", datetime(2026, 2, 15, 10, 0)),
        ("June 19, 2023 2:20pm", datetime(2023, 6, 19, 14, 20)),
        ("June 9, 2023 12:05am", datetime(2023, 6, 9, 0, 5)),
        ("June 9, 2023 12:05PM", datetime(2023, 6, 9, 12, 5)),
        ("Jun 9, 2023 1:05am", datetime(2023, 6, 9, 1, 5)),
        ("2023-6-19 @14h 20m 05s 123ms", datetime(2023, 6, 19, 14, 20, 5, 123000)),
        ("2023-6-19 @14h 20m 05s 05ms", datetime(2023, 6, 19, 14, 20, 5, 5000)),
        ("2023-6-19 @14h 20m 5s 45ms", datetime(2023, 6, 19, 14, 20, 5, 45000)),
        ("2023-6-19@14h20m05s", datetime(2023, 6, 19, 14, 20, 5)),
        ("2023-06-19@14h20m05s", datetime(2023, 6, 19, 14, 20, 5)),
        ("2026-02-15@10h00m00s123ms", datetime(2026, 2, 15, 10, 0, 0, 123000)),
        (1687184405123, datetime(2023, 6, 19, 14, 20, 5, 123000, tzinfo=UTC)),
        (1687184405123.9, datetime(2023, 6, 19, 14, 20, 5, 123000, tzinfo=UTC)),
        ("1687184405123", datetime(2023, 6, 19, 14, 20, 5, 123000, tzinfo=UTC)),
        (0, datetime(1970, 1, 1, tzinfo=UTC)),
    ],
)
def test_every_historical_form_parses_to_its_instant(value: object, expected: datetime) -> None:
    parsed = parse_send_date(value)

    assert parsed == expected
    assert parsed is not None and parsed.tzinfo == expected.tzinfo


@pytest.mark.parametrize(
    "value",
    [
        None,
        True,
        "",
        "   ",
        "yesterday",
        "June 19, 2023",
        "Juney 19, 2023 2:20pm",
        "June 31, 2023 2:20pm",
        "June 19, 2023 13:20pm",
        "2023-13-19@14h20m05s",
        "2023-6-19@25h20m05s",
        "2023-6-19 @14h20m05s",
        "2026-02-30T10:00:00Z",
        "2026-02-15Tnonsense",
        -1,
        float("nan"),
        float("inf"),
        10**20,
        "9" * 30,
        [1687184405123],
        {"date": "2026-02-15"},
    ],
)
def test_unknown_or_impossible_values_give_none(value: object) -> None:
    assert parse_send_date(value) is None


local_times = st.datetimes(min_value=datetime(1990, 1, 1), max_value=datetime(2099, 12, 31))


def to_ms(when: datetime) -> datetime:
    return when.replace(microsecond=when.microsecond // 1000 * 1000)


@settings(max_examples=100)
@given(when=local_times)
def test_local_clock_forms_parse_to_their_wall_clock_time(when: datetime) -> None:
    assert parse_send_date(old_message_timestamp(when)) == when.replace(second=0, microsecond=0)
    assert parse_send_date(humanized_iso8601(when)) == to_ms(when)
    assert parse_send_date(humanized_2023(when)) == when.replace(microsecond=0)
    assert parse_send_date(humanized_2024(when)) == when.replace(microsecond=0)
    assert parse_send_date(format_humanized(when)) == to_ms(when)


@settings(max_examples=100)
@given(when=local_times.map(lambda w: w.replace(tzinfo=UTC)))
def test_utc_forms_parse_to_the_same_instant(when: datetime) -> None:
    epoch_ms = (when - datetime(1970, 1, 1, tzinfo=UTC)) // timedelta(milliseconds=1)

    assert parse_send_date(to_iso_string(when)) == to_ms(when)
    assert parse_send_date(epoch_ms) == to_ms(when)
    assert parse_send_date(str(epoch_ms)) == to_ms(when)
    assert format_send_date(when) == to_iso_string(when)


def test_format_send_date_writes_utc_like_to_iso_string() -> None:
    when = datetime(2026, 2, 15, 11, 0, 0, 7999, tzinfo=timezone(timedelta(hours=1)))

    assert format_send_date(when) == "2026-02-15T10:00:00.007Z"


def test_format_send_date_refuses_naive_time() -> None:
    with pytest.raises(ValueError, match="aware"):
        format_send_date(datetime(2026, 2, 15, 10, 0))


def test_format_humanized_pads_every_field() -> None:
    assert format_humanized(datetime(2024, 7, 5, 4, 3, 2, 7000)) == "2024-07-05@04h03m02s007ms"
