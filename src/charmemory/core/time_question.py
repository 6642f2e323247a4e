"""Questions about time, read from a query: which days they ask about, and in what order.

Memory blocks carry the date they were written (``date="2026-03-04 18:30"``),
which is when the remembered scene happened. A question such as "what happened
yesterday?" or "what did we do two days after the blockade run?" names no
memory by its words; it names days. `read_time_question` finds those days:

- days relative to the day the question is asked (``now``: the chat's last
  message): yesterday, N days or weeks ago, a weekday ("on Saturday",
  "last Friday night"), last week and its start or end (the calendar week,
  Monday to Sunday, before the week of ``now``), the weekend before last;
- days of the calendar: "the ninth of January", "February 21", "Valentine's
  Day", "the last day of April" (any year when ``now`` is not known);
- days relative to an event the memories tell: "three days after we set out on
  the north road", "the morning after I hired Kael", "the week before Lina
  left", "the night of the day we met Orrin". Its date is found by searching
  the memories for the event (``anchor``), then ``offset`` applies.

It also tells when the question wants the earliest or the latest of what
matches ("when did she first...", "the most recent news"). English only: a
question in another language is read as having no time in it.
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any, Literal, TypeVar

from charmemory.formats.chat import Chat

Order = Literal["earliest", "latest"]
C = TypeVar("C")

_NUMBERS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "a couple of": 2,
    "couple of": 2,
}
_ORDINAL_WORDS = [
    "first",
    "second",
    "third",
    "fourth",
    "fifth",
    "sixth",
    "seventh",
    "eighth",
    "ninth",
    "tenth",
    "eleventh",
    "twelfth",
    "thirteenth",
    "fourteenth",
    "fifteenth",
    "sixteenth",
    "seventeenth",
    "eighteenth",
    "nineteenth",
    "twentieth",
]
_ORDINALS = {name: number for number, name in enumerate(_ORDINAL_WORDS, start=1)}
for _n, _name in enumerate(_ORDINAL_WORDS[:9], start=21):
    _ORDINALS[f"twenty-{_name}"] = _ORDINALS[f"twenty {_name}"] = _n
_ORDINALS.update({"thirtieth": 30, "thirty-first": 31, "thirty first": 31})
_MONTHS = {name.lower(): i for i, name in enumerate(calendar.month_name) if name}
_MONTHS.update({name.lower(): i for i, name in enumerate(calendar.month_abbr) if name})
_WEEKDAYS = {name.lower(): i for i, name in enumerate(calendar.day_name)}
_HOLIDAYS = {
    "new year's day": (1, 1),
    "valentine's day": (2, 14),
    "halloween": (10, 31),
    "christmas eve": (12, 24),
    "christmas day": (12, 25),
    "christmas": (12, 25),
    "new year's eve": (12, 31),
}

_NUMBER = r"(?P<n>\d+|an?|one|two|three|four|five|six|seven|eight|nine|ten|(?:a )?couple of)"
_DAY_NUMBER = r"(?P<day>\d{1,2})(?:st|nd|rd|th)?"
_ORDINAL = r"(?P<ordinal>" + "|".join(sorted(_ORDINALS, key=len, reverse=True)) + ")"
_MONTH = r"(?P<month>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_WEEKDAY = r"(?P<weekday>" + "|".join(_WEEKDAYS) + ")"
_PART = r"(?:morning|afternoon|evening|night|day)"
_EVENT = r"(?P<event>[^?.!]+)"
_FEW = r"(?P<few>a few|few|several)"

_RELATIVE_TO_EVENT = (
    # "three days after X", "a few days before X", "a week after X"
    re.compile(
        rf"\b(?:{_NUMBER}|{_FEW})\s+(?P<unit>days?|weeks?|nights?)\s+(?P<way>after|before)\s+{_EVENT}",
        re.I,
    ),
    # "the day after X", "the morning after X", "the week before X"
    re.compile(rf"\bthe\s+(?P<unit>{_PART}|week|weekend)\s+(?P<way>after|before)\s+{_EVENT}", re.I),
    # "on the evening of the day X", "the night of the ambush", "on the day we met"
    re.compile(
        rf"\b(?:the\s+{_PART}\s+of\s+)?the\s+day\s+(?P<event>(?:we|i|you|he|she|they)\b[^?.!]+)",
        re.I,
    ),
    re.compile(rf"\bthe\s+{_PART}\s+of\s+{_EVENT}", re.I),
)
_AFTER_EVENT = re.compile(rf"\b(?P<way>after|before|since)\s+{_EVENT}", re.I)
_EARLIEST = re.compile(r"\b(first|earliest|to begin with|at the start)\b", re.I)
_QUESTION = re.compile(r"[^.!?\n]*\?|\b(?:tell|remind) me\b[^.!?\n]*", re.I)
_COMPARISON = re.compile(r"\bwhich\s+(?:\w+\s+)?(came|happened|was)\s+first\b", re.I)
_LATEST = re.compile(r"\b(most recent|latest|last time|last thing|recently|lately)\b", re.I)


@dataclass(frozen=True)
class Days:
    """A span of days, both ends included; ``any_year`` when only month and day are known."""

    first: date
    last: date
    any_year: bool = False

    def holds(self, day: date) -> bool:
        if not self.any_year:
            return self.first <= day <= self.last
        key = (day.month, day.day)
        low, high = (self.first.month, self.first.day), (self.last.month, self.last.day)
        return low <= key <= high if low <= high else key >= low or key <= high


@dataclass(frozen=True)
class TimeQuestion:
    """What a question asks about time.

    ``days``: the days it asks about, when the question itself says them.
    ``anchor``: an event whose date the days are counted from; then ``offset``
    gives the first and last day relative to it (``(2, 2)``: two days after;
    ``(1, None)``: any time after).
    ``order``: whether the earliest or the latest matching memory is wanted.
    """

    days: Days | None = None
    anchor: str | None = None
    offset: tuple[int, int | None] = (0, 0)
    order: Order | None = None

    def days_from(self, anchor_day: date) -> Days:
        """The days asked about, counted from the day the anchor happened."""
        first, last = self.offset
        end = anchor_day + timedelta(days=last) if last is not None else date.max
        return Days(anchor_day + timedelta(days=first), end)


def read_time_question(text: str, now: date | None = None) -> TimeQuestion | None:
    """The time a question asks about, or None when it asks about none.

    Only questions are read (sentences ending in "?", or asking "tell me" or
    "remind me"): a scene's narration says "yesterday" or "the first night" without
    asking about them.
    """
    text = " ".join(_QUESTION.findall(text.replace("\u2019", "'")))
    if not text:
        return None
    order: Order | None = None
    if _COMPARISON.search(text):
        order = None  # "which came first, X or Y" names both: no order to prefer
    elif _EARLIEST.search(text):
        order = "earliest"
    elif _LATEST.search(text):
        order = "latest"
    days = _days_from_now(text, now) if now is not None else None
    days = days or _calendar_days(text, now)
    if days is not None:
        return TimeQuestion(days=days, order=order)
    anchored = _relative_to_event(text)
    if anchored is not None:
        return TimeQuestion(anchor=anchored[0], offset=anchored[1], order=order)
    after = _AFTER_EVENT.search(text)
    if after is not None and order is not None:
        # "the first cargo we carried after I became first mate"
        way = after.group("way").lower()
        offset: tuple[int, int | None] = (0, None) if way != "before" else (-3650, 0)
        return TimeQuestion(anchor=_event(after.group("event")), offset=offset, order=order)
    return TimeQuestion(order=order) if order is not None else None


def chat_day(chat: Chat) -> date | None:
    """The day of the chat's last dated message: "yesterday" in a question counts from it."""
    for message in reversed(chat.messages):
        if (sent := message.sent_at) is not None:
            return sent.date()
    return None


def block_day(block_date: str) -> date | None:
    """The day of a memory block's ``date`` attribute ("2026-03-04 18:30"), if it has one."""
    try:
        return date.fromisoformat(block_date.strip()[:10])
    except ValueError:
        return None


def _relative_to_event(text: str) -> tuple[str, tuple[int, int | None]] | None:
    for pattern in _RELATIVE_TO_EVENT:
        match = pattern.search(text)
        if match is None:
            continue
        groups = match.groupdict()
        event = _event(groups["event"])
        if not event:
            continue
        way = (groups.get("way") or "").lower()
        sign = -1 if way == "before" else 1
        unit = (groups.get("unit") or "day").lower()
        if not way:
            return event, (0, 0)
        if groups.get("few"):
            return event, (2, 5) if sign > 0 else (-5, -2)
        count = _count(groups.get("n")) if groups.get("n") else 1
        if unit.startswith("week"):
            if groups.get("n"):
                return event, (sign * 7 * count - 1, sign * 7 * count + 1)
            return event, (1, 7) if sign > 0 else (-7, -1)
        return event, (sign * count, sign * count)
    return None


def _days_from_now(text: str, now: date) -> Days | None:
    lowered = text.lower()
    if re.search(r"\byesterday\b", lowered):
        return _day(now - timedelta(days=1))
    if re.search(r"\btoday\b", lowered) and not re.search(r"\bago today\b", lowered):
        return _day(now)
    ago = re.search(rf"\b{_NUMBER}\s+(?P<unit>days?|weeks?)\s+ago\b", lowered)
    if ago:
        count = _count(ago.group("n")) * (7 if ago.group("unit").startswith("week") else 1)
        return _day(now - timedelta(days=count))
    monday = now - timedelta(days=now.weekday())
    last_monday = monday - timedelta(days=7)
    if re.search(r"\bweekend before last\b", lowered):
        return Days(last_monday - timedelta(days=2), last_monday - timedelta(days=1))
    if re.search(r"\blast weekend\b", lowered):
        return Days(monday - timedelta(days=2), monday - timedelta(days=1))
    if re.search(r"\b(early|start of|beginning of) last week\b", lowered):
        return Days(last_monday, last_monday + timedelta(days=2))
    if re.search(r"\b(late|end of) last week\b", lowered):
        return Days(last_monday + timedelta(days=4), last_monday + timedelta(days=6))
    if re.search(r"\bweek before last\b", lowered):
        return Days(last_monday - timedelta(days=7), last_monday - timedelta(days=1))
    if re.search(r"\blast week\b", lowered):
        return Days(last_monday, last_monday + timedelta(days=6))
    if re.search(r"\bthis week\b", lowered):
        return Days(monday, now)
    weekday = re.search(rf"\b{_WEEKDAY}\b", lowered)
    if weekday:
        back = (now.weekday() - _WEEKDAYS[weekday.group("weekday")]) % 7 or 7
        return _day(now - timedelta(days=back))
    return None


def _calendar_days(text: str, now: date | None) -> Days | None:
    lowered = text.lower()
    for name, (month, day) in _HOLIDAYS.items():
        if name in lowered:
            return _month_day(month, day, now)
    edge = re.search(rf"\b(?P<edge>first|last) day of {_MONTH}", lowered)
    if edge:
        month = _MONTHS[edge.group("month")]
        day = 1 if edge.group("edge") == "first" else calendar.monthrange(2024, month)[1]
        return _month_day(month, day, now)
    for pattern in (
        rf"\bthe\s+(?:{_ORDINAL}|{_DAY_NUMBER})\s+of\s+{_MONTH}",
        rf"\b{_MONTH}\s+(?:the\s+)?(?:{_ORDINAL}|{_DAY_NUMBER})\b",
        rf"\b(?:{_ORDINAL}|{_DAY_NUMBER})\s+{_MONTH}",
    ):
        match = re.search(pattern, lowered)
        if match is None:
            continue
        groups = match.groupdict()
        day = _ORDINALS[groups["ordinal"]] if groups.get("ordinal") else int(groups["day"])
        month = _MONTHS[groups["month"]]
        if 1 <= day <= calendar.monthrange(2024, month)[1]:
            return _month_day(month, day, now)
    return None


def _month_day(month: int, day: int, now: date | None) -> Days:
    if now is None:
        when = date(2024, month, day)  # a leap year holds every month and day
        return Days(when, when, any_year=True)
    year = now.year if (month, day) <= (now.month, now.day) else now.year - 1
    if month == 2 and day == 29 and not calendar.isleap(year):
        day = 28
    return _day(date(year, month, day))


def _day(day: date) -> Days:
    return Days(day, day)


def _count(word: str) -> int:
    word = word.lower().strip()
    return int(word) if word.isdigit() else _NUMBERS.get(word, 1)


def _event(text: str) -> str:
    """The event's words, without a trailing clause that asks something else."""
    event = re.split(r",|\bdid\b|\bwhat\b|\bwho\b|\bwhere\b", text, maxsplit=1, flags=re.I)[0]
    return event.strip()


# The earliest or latest of the closely matching memories gains up to this share of the
# best score (0.1-1.0 gave the same recall on the labelled time questions).
ORDER_BONUS = 0.3
_ORDER_POOL = 8  # how many of the best are reordered by date
_ORDER_NEAR = 0.6  # ... those within this share of the best score


@dataclass(frozen=True)
class TimeFocus:
    """How a question about time reorders fused candidates: ``day_of`` reads a candidate's day.

    A memory of a day the question asks about ranks above every other memory:
    the question's words ("what happened?") say nothing about which memory it wants.
    """

    days: Days | None
    order: Order | None
    day_of: Callable[[Any], date | None]

    def in_days(self, candidate: Any) -> bool:
        day = self.day_of(candidate)
        return self.days is not None and day is not None and self.days.holds(day)

    def reranked(self, fused: Sequence[tuple[C, float]]) -> list[tuple[C, float]]:
        """``fused`` (best first) with the memories of the asked days first, then by date."""
        scored = list(fused)
        if self.order is not None and scored:
            best = max(score for _, score in scored[:_ORDER_POOL])
            pool = [i for i, (_, s) in enumerate(scored[:_ORDER_POOL]) if s >= _ORDER_NEAR * best]
            by_date = sorted(
                pool,
                key=lambda i: self.day_of(scored[i][0]) or date.min,
                reverse=self.order == "latest",
            )
            for place, i in enumerate(by_date):
                candidate, score = scored[i]
                scored[i] = (candidate, score + ORDER_BONUS * best * (1 - place / len(by_date)))
        # Stable: equal scores keep the fused order.
        return sorted(scored, key=lambda pair: (not self.in_days(pair[0]), -pair[1]))
