"""Memory titles: a format with tokens and a zero-padded number, read back as STMB reads them.

A format such as `[000] - {{title}}` (the default) holds one kind of number
token, filled with the memory's number padded to the token's width: `[000]`
becomes `007` (the brackets only mark the token), `[[000]]` becomes `[007]`,
`([000])` `(007)`, `{[000]}` `{007}`, `#[000]` `#007`, and `(000)`, `{000}`,
`#000` keep their marks: `(007)`, `{007}`, `#007`. Then `{{title}}`,
`{{scene}}`, `{{char}}`, `{{user}}`, `{{messages}}`, `{{profile}}`,
`{{date}}` and `{{time}}` are replaced, and control characters are removed.

A book's next number is the highest number among its memory titles, plus one;
each title is read with the format as a guide (so a date in a title is not
taken for its number), else by STMB's general rules.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import partial

DEFAULT_TITLE_FORMAT = "[000] - {{title}}"
FALLBACK_TITLE = "Auto Memory"
TOKENS = ("title", "scene", "char", "user", "messages", "profile", "date", "time")

# The number tokens, in the order STMB tries them: the first kind found is the one filled.
_NUMBER_TOKENS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\[\[(0+)\]\]"), "[{}]"),
    (re.compile(r"\(\[(0+)\]\)"), "({})"),
    (re.compile(r"\{\[(0+)\]\}"), "{{{}}}"),
    (re.compile(r"#\[(0+)\]"), "#{}"),
    (re.compile(r"\[(0+)\]"), "{}"),
    (re.compile(r"\((0+)\)"), "({})"),
    (re.compile(r"\{(0+)\}"), "{{{}}}"),
    (re.compile(r"#(0+)"), "#{}"),
)
# How a format's number is found again in a title: the first of these kinds in the format.
_READ_TOKENS = (
    re.compile(r"\[0+\]"),
    re.compile(r"\(0+\)"),
    re.compile(r"\{0+\}"),
    re.compile(r"#0+"),
)
_PLACEHOLDER = re.compile(r"\{\{[^}]+\}\}")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_DATE_AROUND = re.compile(r"\d{4}-\d{2}-\d{2}")


@dataclass(frozen=True)
class TitleValues:
    """What the tokens of a title format stand for."""

    title: str = ""
    scene: str = ""  # the message range, `10-25`
    char: str = ""
    user: str = ""
    messages: int = 0
    profile: str = ""
    date: str = ""  # YYYY-MM-DD
    time: str = ""  # HH:MM:SS


def has_number_token(title_format: str) -> bool:
    return any(pattern.search(title_format) for pattern, _ in _NUMBER_TOKENS)


def apply_number(title_format: str, number: int) -> str:
    """The format with its number tokens filled (only the first kind found)."""
    number = max(0, number)
    for pattern, shape in _NUMBER_TOKENS:
        if pattern.search(title_format):
            return pattern.sub(partial(_filled, shape, number), title_format)
    return title_format


def _filled(shape: str, number: int, token: re.Match[str]) -> str:
    return shape.format(str(number).zfill(len(token.group(1))))


def render_title(title_format: str, values: TitleValues, number: int) -> str:
    """The title of memory ``number``: tokens filled, control characters removed."""
    replacements = {
        "title": values.title.strip() or "Memory",
        "scene": f"Scene {values.scene or 'Unknown'}",
        "char": values.char or "Unknown",
        "user": values.user or "User",
        "messages": str(values.messages),
        "profile": values.profile or "Unknown",
        "date": values.date,
        "time": values.time,
    }
    title = apply_number(title_format, number)
    for token, value in replacements.items():
        title = title.replace("{{" + token + "}}", value)
    return sanitize_title(title)


def sanitize_title(title: str) -> str:
    cleaned = _CONTROL.sub("", title).strip()
    return cleaned or FALLBACK_TITLE


def unknown_tokens(title_format: str) -> list[str]:
    """Placeholders in the format that no memory fills (shown as a warning)."""
    return [
        token for token in _PLACEHOLDER.findall(title_format) if token.strip("{}") not in TOKENS
    ]


def number_in_title(title: str) -> int | None:
    """A title's number by STMB's general rules: bracketed, then `#N`, then leading, then any."""
    for pattern in (r"\[(\d+)\]", r"\((\d+)\)", r"\{(\d+)\}"):
        found = re.search(pattern, title)
        if found:
            return int(found.group(1))
    hashed = re.search(r"#(\d+)(?:-(\d+))?", title)
    if hashed:
        return int(hashed.group(2) or hashed.group(1))
    leading = re.match(r"(\d+)(?:\s*[-\s])", title)
    if leading:
        return int(leading.group(1))
    for found in re.finditer(r"\d+", title):
        if not _in_a_date(title, found):
            return int(found.group(0))
    return None


def number_by_format(title: str, title_format: str) -> int | None:
    """A title's number, found where the format puts it (else by the general rules)."""
    kind = next((pattern for pattern in _READ_TOKENS if pattern.search(title_format)), None)
    if kind is None:
        return number_in_title(title)
    parts: list[str] = []
    position = 0
    for token in re.finditer(f"{_PLACEHOLDER.pattern}|{kind.pattern}", title_format):
        parts.append(re.escape(title_format[position : token.start()]))
        parts.append(".*?" if token.group(0).startswith("{{") else r"(\d+)")
        position = token.end()
    parts.append(re.escape(title_format[position:]))
    found = re.search("".join(parts), title)
    if found and found.group(1) is not None:
        return int(found.group(1))
    return number_in_title(title)


def next_number(titles: Iterable[str], title_format: str) -> int:
    """One more than the highest number among ``titles`` (the book's memory titles), else 1."""
    numbers = [n for n in (number_by_format(t, title_format) for t in titles if t) if n is not None]
    return max(numbers, default=0) + 1


def _in_a_date(title: str, found: re.Match[str]) -> bool:
    before = title[max(0, found.start() - 10) : found.start()]
    after = title[found.end() : found.end() + 10]
    digits = found.group(0)
    return bool(
        _DATE_AROUND.search(before + digits + after)
        or re.search(r"\d{4}-\d{1,2}", before + digits)
        or re.search(r"-\d{1,2}-\d{1,2}", digits + after)
    )
