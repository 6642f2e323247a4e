"""JavaScript's dialect of JSON: what `JSON.parse` accepts and `JSON.stringify` writes.

SillyTavern writes every file with `JSON.stringify`, so matching it byte for
byte is what lets an unchanged file survive a round trip unchanged. It differs
from `json.dumps` in object key order (integer-like keys first, ascending),
number formatting, and escaping of lone surrogates.
"""

from __future__ import annotations

import json
import math
import re
from decimal import Decimal
from typing import Any

from charmemory.errors import FormatError

_ARRAY_INDEX = re.compile(r"0|[1-9][0-9]*")
_COMPACT = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def loads_json(text: str, *, source: str | None = None) -> Any:
    """Parse JSON as JavaScript's JSON.parse does: no NaN or Infinity, and
    integers past 2**53 become the nearest double."""

    def reject_constant(name: str) -> Any:
        raise FormatError(f"invalid JSON: {name} is not a JSON value", source=source)

    def js_int(digits: str) -> int | float:
        number = float(digits)
        return int(digits) if abs(number) <= 2**53 else number

    try:
        return json.loads(
            text.removeprefix("\ufeff"), parse_constant=reject_constant, parse_int=js_int
        )
    except json.JSONDecodeError as error:
        raise FormatError(f"invalid JSON: {error.msg}", source=source, line=error.lineno) from None
    except RecursionError:
        raise FormatError("invalid JSON: nested too deeply", source=source) from None


def js_stringify(value: Any, *, indent: int | None = None) -> str:
    """`JSON.stringify(value, null, indent)`, byte for byte.

    Differs from `json.dumps` in JavaScript's object key order (integer-like
    keys first, ascending), number formatting, and escaping of lone surrogates.
    Where the value holds none of those (nearly always), `json.dumps` already
    writes the same bytes and is used, many times faster.
    """
    try:
        if indent:
            quick = json.dumps(
                value, ensure_ascii=False, indent=indent, separators=(",", ": "), allow_nan=False
            )
        else:
            quick = _COMPACT.encode(value)  # one encoder for every chat line
    except (TypeError, ValueError):
        quick = None  # not plain JSON to Python: let the emitter say what is wrong
    if quick is not None and _ALIKE.written_alike(quick):
        return quick
    parts: list[str] = []
    _emit(value, parts, " " * (indent or 0), "")
    return "".join(parts)


# A string literal, written as runs of plain characters between escapes (many times
# faster than one alternation per character).
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"')
# An array-index key: its opening quote follows `{`, `,` or whitespace, never a backslash.
_INDEX_KEY = re.compile(r'(?<=[{,\s])"(?:0|[1-9][0-9]*)"\s*:')
# Outside strings: a fraction or exponent, or an integer a double may not hold exactly.
_FLOAT_OR_HUGE = re.compile(r"\d[.eE]|\d{16,}")


class _AlikeTexts:
    """Texts `JSON.stringify` writes as `json.dumps` does, each checked once.

    A chat is written again after each message, nearly all of it the lines written
    last time. Bounded by the characters held; when full it starts again.
    """

    def __init__(self, max_chars: int) -> None:
        self._texts: set[str] = set()
        self._chars = 0
        self._max_chars = max_chars

    def written_alike(self, text: str) -> bool:
        if text in self._texts:
            return True
        if _differs_in_javascript(text):
            return False
        if self._chars + len(text) > self._max_chars:
            self._texts.clear()
            self._chars = 0
        self._texts.add(text)
        self._chars += len(text)
        return True


_ALIKE = _AlikeTexts(max_chars=8_000_000)


def _differs_in_javascript(text: str) -> bool:
    """Whether `JSON.stringify` would write this `json.dumps` output otherwise."""
    return bool(
        _SURROGATE.search(text)
        or _INDEX_KEY.search(text)
        or _FLOAT_OR_HUGE.search(_STRING.sub("", text))
    )


def _emit(value: Any, parts: list[str], gap: str, current: str) -> None:
    if isinstance(value, dict):
        items = [(_js_string(k), value[k]) for k in _js_key_order(value)]
        _emit_container("{}", items, parts, gap, current)
    elif isinstance(value, list | tuple):
        _emit_container("[]", [(None, item) for item in value], parts, gap, current)
    elif isinstance(value, str):
        parts.append(_js_string(value))
    elif value is None or isinstance(value, bool):
        parts.append("null" if value is None else str(value).lower())
    elif isinstance(value, int):
        # JavaScript has no integers past 2**53, only the nearest double.
        parts.append(str(value) if abs(value) <= 2**53 else js_number_text(float(value)))
    elif isinstance(value, float):
        parts.append(js_number_text(value))
    else:
        raise TypeError(f"not JSON-serializable: {type(value).__name__}")


def _emit_container(
    brackets: str, items: list[tuple[str | None, Any]], parts: list[str], gap: str, current: str
) -> None:
    if not items:
        parts.append(brackets)
        return
    inner = current + gap
    separator = ",\n" + inner if gap else ","
    parts.append(brackets[0] + ("\n" + inner if gap else ""))
    for i, (quoted_key, item) in enumerate(items):
        if i:
            parts.append(separator)
        if quoted_key is not None:
            parts.append(quoted_key + (": " if gap else ":"))
        _emit(item, parts, gap, inner)
    parts.append(("\n" + current if gap else "") + brackets[1])


def _js_key_order(obj: dict[str, Any]) -> list[str]:
    # JavaScript objects list array-index keys first, in ascending numeric order.
    def is_index(key: str) -> bool:
        return bool(_ARRAY_INDEX.fullmatch(key)) and int(key) < 2**32 - 1

    indexes = sorted((k for k in obj if is_index(k)), key=int)
    return indexes + [k for k in obj if not is_index(k)]


_SURROGATE = re.compile(r"[\ud800-\udfff]")
_SURROGATE_OR_PAIR = re.compile(r"[\ud800-\udbff][\udc00-\udfff]|[\ud800-\udfff]")


def _js_string(text: str) -> str:
    quoted = json.dumps(text, ensure_ascii=False)
    if _SURROGATE.search(quoted) is None:
        return quoted
    return _SURROGATE_OR_PAIR.sub(_surrogate_escape, quoted)


def _surrogate_escape(match: re.Match[str]) -> str:
    # A high+low pair is one character to JavaScript (written as is); a lone half
    # is escaped, as JSON.stringify has done since ES2019.
    found = match.group()
    if len(found) == 2:
        high, low = map(ord, found)
        return chr(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))
    return f"\\u{ord(found):04x}"


def js_number_text(number: float) -> str:
    """JavaScript's Number-to-String of a double; `null` for non-finite, as JSON.stringify."""
    if not math.isfinite(number):
        return "null"
    if number == 0:
        return "0"
    # repr gives the shortest digits that read back to the same double, which is
    # what JavaScript prints too; only the layout around them differs.
    _, digit_tuple, exponent = Decimal(repr(abs(number))).as_tuple()
    all_digits = "".join(map(str, digit_tuple))
    digits = all_digits.rstrip("0")
    count = len(digits)
    point = int(exponent) + len(all_digits)  # the value is 0.<digits> * 10**point
    if count <= point <= 21:
        text = digits + "0" * (point - count)
    elif 0 < point <= 21:
        text = f"{digits[:point]}.{digits[point:]}"
    elif -6 < point <= 0:
        text = "0." + "0" * -point + digits
    else:
        mantissa = digits if count == 1 else f"{digits[0]}.{digits[1:]}"
        text = f"{mantissa}e{point - 1:+d}"
    return "-" + text if number < 0 else text
