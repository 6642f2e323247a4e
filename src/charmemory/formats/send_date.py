"""The timestamps SillyTavern has written into chats over the years.

A message's `send_date` (and a chat header's `create_date`) has taken these forms:

- ISO-8601 in UTC, `2026-02-15T10:00:00.123Z`: `getMessageTimeStamp()` since it
  switched to `toISOString()`.
- `June 19, 2023 2:20pm`: the older `getMessageTimeStamp()`, browser local time.
- "Humanized" stamps, browser local time, also used in chat file names:
  `2023-6-19 @14h 20m 05s 123ms` (imports and the oldest chat names),
  `2023-6-19@14h20m05s` (2023-10 to 2024-07), `2024-07-05@14h20m05s` (zero padded)
  and `2026-02-15@10h00m00s123ms` (with milliseconds, current).
- Epoch milliseconds, as a JSON number or a digit string (TavernAI-era chats).

Forms that carry a zone (ISO with `Z` or an offset, epoch numbers) parse to an
aware datetime in UTC. Forms written from the browser's local clock carry no zone
and parse to a naive datetime holding that wall-clock time; the zone they were
written in is unknowable from the file. (SillyTavern's own display code reads
humanized stamps as UTC, which is wrong for every zone but UTC.)
"""

from __future__ import annotations

import math
import re
from datetime import UTC, datetime, timedelta

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)

_MONTHS = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
]
_MONTH_NUMBERS = {name: i + 1 for i, name in enumerate(_MONTHS)} | {
    name[:3]: i + 1 for i, name in enumerate(_MONTHS)
}

_DIGITS = re.compile(r"\d+")
_MERIDIEM = re.compile(
    r"(?P<month>[a-z]+) (?P<day>\d{1,2}), (?P<year>\d{4}) "
    r"(?P<hour>\d{1,2}):(?P<minute>\d{1,2})(?P<meridiem>am|pm)",
    re.IGNORECASE,
)
# One pattern for every humanized variant: `sep` is either empty or a single space
# and recurs between the time fields, which tells the two families apart.
HUMANIZED_STAMP = re.compile(
    r"(?P<year>\d{4})-(?P<month>\d{1,2})-(?P<day>\d{1,2})(?P<sep> ?)@"
    r"(?P<hour>\d{1,2})h(?P=sep)(?P<minute>\d{1,2})m(?P=sep)(?P<second>\d{1,2})s"
    r"(?:(?P=sep)(?P<millisecond>\d{1,3})ms)?"
)
_ISO_PREFIX = re.compile(r"\d{4}-\d{2}-\d{2}(?:[T ]|$)")


def parse_send_date(value: object) -> datetime | None:
    """The instant a `send_date` value stands for, or None when it is not one we know.

    Never raises: chats carry whatever older versions and other tools wrote.
    """
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return epoch_ms_to_datetime(value)
    if not isinstance(value, str):
        return None
    text = value.strip()
    if _DIGITS.fullmatch(text):
        return epoch_ms_to_datetime(int(text))
    if match := HUMANIZED_STAMP.fullmatch(text):
        return humanized_match_to_datetime(match)
    if match := _MERIDIEM.fullmatch(text):
        return _meridiem_to_datetime(match)
    if _ISO_PREFIX.match(text):
        return _iso_to_datetime(text)
    return None


def format_send_date(when: datetime) -> str:
    """The current `send_date` form, as JavaScript's `Date.toISOString()` writes it."""
    if when.tzinfo is None:
        raise ValueError("send_date needs an aware datetime; the stored form is UTC")
    utc = when.astimezone(UTC)
    return utc.strftime("%Y-%m-%dT%H:%M:%S.") + f"{utc.microsecond // 1000:03d}Z"


def format_humanized(when: datetime) -> str:
    """The current humanized stamp, `2026-02-15@10h00m00s123ms`, of `when`'s wall clock."""
    return (
        f"{when.year:02d}-{when.month:02d}-{when.day:02d}@"
        f"{when.hour:02d}h{when.minute:02d}m{when.second:02d}s{when.microsecond // 1000:03d}ms"
    )


def humanized_match_to_datetime(match: re.Match[str]) -> datetime | None:
    """The naive wall-clock time of a `HUMANIZED_STAMP` match; None if it names no real time.

    The milliseconds field counts milliseconds: older versions padded it to two
    digits only, so `05` is 5 ms and `45` is 45 ms, never 450.
    """
    fields = match.groupdict()
    try:
        return datetime(
            int(fields["year"]),
            int(fields["month"]),
            int(fields["day"]),
            int(fields["hour"]),
            int(fields["minute"]),
            int(fields["second"]),
            int(fields["millisecond"] or 0) * 1000,
        )
    except ValueError:
        return None


def epoch_ms_to_datetime(ms: float) -> datetime | None:
    """UTC datetime of epoch milliseconds; None for negative, non-finite or out-of-range."""
    if not math.isfinite(ms) or ms < 0:
        return None
    try:
        # JavaScript's Date drops fractional milliseconds toward zero.
        return _EPOCH + timedelta(milliseconds=math.trunc(ms))
    except OverflowError:
        return None


def _meridiem_to_datetime(match: re.Match[str]) -> datetime | None:
    month = _MONTH_NUMBERS.get(match["month"].lower())
    hour = int(match["hour"])
    if month is None or hour > 12:
        return None
    hour %= 12
    if match["meridiem"].lower() == "pm":
        hour += 12
    try:
        return datetime(int(match["year"]), month, int(match["day"]), hour, int(match["minute"]))
    except ValueError:
        return None


def _iso_to_datetime(text: str) -> datetime | None:
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        return None
    return parsed if parsed.tzinfo is None else parsed.astimezone(UTC)
