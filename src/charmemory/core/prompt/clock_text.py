"""Dates, times and durations written as SillyTavern's macros write them (moment.js, English).

`{{time}}` is moment's `LT` ("7:05 PM"), `{{date}}` its `LL` ("November 28,
2026"), `{{weekday}}` `dddd`, `{{isotime}}` `HH:mm`, `{{isodate}}` `YYYY-MM-DD`,
and `{{idle_duration}}` a duration humanized with moment's thresholds
("a few seconds", "a minute", "5 minutes", "an hour", "2 days", ...).
"""

from __future__ import annotations

import math
from datetime import datetime, timedelta

_MONTHS = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)
_WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


def time_text(moment: datetime) -> str:
    hour = moment.hour % 12 or 12
    return f"{hour}:{moment.minute:02d} {'AM' if moment.hour < 12 else 'PM'}"


def date_text(moment: datetime) -> str:
    return f"{_MONTHS[moment.month - 1]} {moment.day}, {moment.year}"


def weekday_text(moment: datetime) -> str:
    return _WEEKDAYS[moment.weekday()]


def iso_time_text(moment: datetime) -> str:
    return f"{moment.hour:02d}:{moment.minute:02d}"


def iso_date_text(moment: datetime) -> str:
    return f"{moment.year:04d}-{moment.month:02d}-{moment.day:02d}"


def humanized(duration: timedelta) -> str:
    """moment.duration(...).humanize(): the coarsest unit that fits, rounded."""
    seconds = abs(duration.total_seconds())
    rounded = {
        "s": _round(seconds),
        "m": _round(seconds / 60),
        "h": _round(seconds / 3600),
        "d": _round(seconds / 86400),
        "M": _round(seconds / 86400 * 4800 / 146097),
        "y": _round(seconds / 86400 * 400 / 146097),
    }
    if rounded["s"] <= 44:
        return "a few seconds"
    if rounded["m"] <= 1:
        return "a minute"
    if rounded["m"] < 45:
        return f"{rounded['m']} minutes"
    if rounded["h"] <= 1:
        return "an hour"
    if rounded["h"] < 22:
        return f"{rounded['h']} hours"
    if rounded["d"] <= 1:
        return "a day"
    if rounded["d"] < 26:
        return f"{rounded['d']} days"
    if rounded["M"] <= 1:
        return "a month"
    if rounded["M"] < 11:
        return f"{rounded['M']} months"
    if rounded["y"] <= 1:
        return "a year"
    return f"{rounded['y']} years"


def _round(value: float) -> int:
    return math.floor(value + 0.5)
