"""Matching one key against the scan text, as SillyTavern's WorldInfoBuffer.matchKeys.

A key written `/pattern/flags` is a JavaScript regular expression, tested on
the scan text as it is. Any other key is plain text: lower-cased with the text
unless the entry is case-sensitive, then found as a substring, or, with
whole-word matching, between non-word characters (`(?:^|\\W)key(?:$|\\W)`,
where JavaScript's `\\W` is anything but ASCII letters, digits and `_`). A
whole-word key of several words is matched as a substring, as in SillyTavern.

Matching is the engine's hot loop, so a plain key made of word characters only
is matched by looking it up in the set of the text's words: `(?:^|\\W)key(?:$|\\W)`
holds exactly when `key` is one of the maximal runs of `[A-Za-z0-9_]` in the text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

MatchKind = Literal["word", "substring", "bounded", "regex"]

WORD_RUN = re.compile(r"[A-Za-z0-9_]+")
_NON_WORD = "[^A-Za-z0-9_]"
_REGEX_KEY = re.compile(r"/([\s\S]+?)/([gimsuy]*)\Z")
_UNESCAPED_SLASH = re.compile(r"(?:^|[^\\])/")
_JS_FLAGS = {"i": re.IGNORECASE, "m": re.MULTILINE, "s": re.DOTALL}


@dataclass(frozen=True)
class KeyMatcher:
    """One key compiled for an entry's case sensitivity and whole-word setting."""

    key: str  # the key as written (macros substituted, trimmed)
    kind: MatchKind
    needle: str = ""  # for word and substring kinds, lower-cased unless case-sensitive
    pattern: re.Pattern[str] | None = None  # for bounded and regex kinds
    case_sensitive: bool = False
    anchored: bool = False  # a JavaScript sticky (`y`) regex: it only matches at the start

    def matches(self, text: Haystack) -> bool:
        if self.kind == "word":
            return self.needle in (text.words if self.case_sensitive else text.lower_words)
        if self.kind == "substring":
            return self.needle in (text.text if self.case_sensitive else text.lower)
        assert self.pattern is not None
        if self.kind == "regex":
            found = (
                self.pattern.match(text.text) if self.anchored else self.pattern.search(text.text)
            )
            return found is not None
        return self.pattern.search(text.text if self.case_sensitive else text.lower) is not None


class Haystack:
    """A scan text with its lower-cased copy and word sets, each made once when first needed.

    The word sets may be given: the scan text joins its parts with non-word
    characters, so its words are the union of its parts' words.
    """

    __slots__ = ("_lower", "_lower_words", "_words", "text")

    def __init__(
        self,
        text: str,
        words: frozenset[str] | None = None,
        lower_words: frozenset[str] | None = None,
    ) -> None:
        self.text = text
        self._lower: str | None = None
        self._words = words
        self._lower_words = lower_words

    @property
    def lower(self) -> str:
        if self._lower is None:
            self._lower = self.text.lower()
        return self._lower

    @property
    def words(self) -> frozenset[str]:
        if self._words is None:
            self._words = frozenset(WORD_RUN.findall(self.text))
        return self._words

    @property
    def lower_words(self) -> frozenset[str]:
        if self._lower_words is None:
            self._lower_words = frozenset(WORD_RUN.findall(self.lower))
        return self._lower_words


def compile_key(key: str, *, case_sensitive: bool, whole_words: bool) -> KeyMatcher | None:
    """The matcher for `key`, or None for a key that is empty once trimmed."""
    key = key.strip()
    if not key:
        return None
    regex = parse_regex_key(key)
    if regex is not None:
        pattern, anchored = regex
        return KeyMatcher(key, "regex", pattern=pattern, anchored=anchored)
    needle = key if case_sensitive else key.lower()
    if not whole_words or len(needle.split()) > 1:
        return KeyMatcher(key, "substring", needle=needle, case_sensitive=case_sensitive)
    if WORD_RUN.fullmatch(needle):
        return KeyMatcher(key, "word", needle=needle, case_sensitive=case_sensitive)
    bounded = re.compile(f"(?:^|{_NON_WORD}){re.escape(needle)}(?:\\Z|{_NON_WORD})")
    return KeyMatcher(key, "bounded", pattern=bounded, case_sensitive=case_sensitive)


def parse_regex_key(key: str) -> tuple[re.Pattern[str], bool] | None:
    """A `/pattern/flags` key as (compiled pattern, sticky), or None when it is plain text.

    As in SillyTavern, a slash inside the pattern must be escaped, and a key that
    does not compile is plain text. The pattern is rewritten to mean in Python
    what it means in JavaScript (see `_python_syntax`).
    """
    found = _REGEX_KEY.match(key)
    if found is None:
        return None
    pattern, flags = found.groups()
    if _UNESCAPED_SLASH.search(pattern):
        return None
    options = 0
    for flag in flags:
        options |= _JS_FLAGS.get(flag, 0)
    try:
        return re.compile(_python_syntax(pattern, multiline="m" in flags), options), "y" in flags
    except (re.error, OverflowError, RecursionError):
        return None


_WORD = "A-Za-z0-9_"
_BOUNDARY = f"(?:(?<=[{_WORD}])(?![{_WORD}])|(?<![{_WORD}])(?=[{_WORD}]))"
_NOT_BOUNDARY = f"(?:(?<=[{_WORD}])(?=[{_WORD}])|(?<![{_WORD}])(?![{_WORD}]))"
_ESCAPES = {
    "w": f"[{_WORD}]",
    "W": f"[^{_WORD}]",
    "d": "[0-9]",
    "D": "[^0-9]",
    "b": _BOUNDARY,
    "B": _NOT_BOUNDARY,
}
_CLASS_ESCAPES = {"w": _WORD, "d": "0-9"}
_NAMED_REFERENCE = re.compile(r"k<(\w+)>")


def _python_syntax(pattern: str, *, multiline: bool) -> str:
    """A JavaScript pattern in Python's syntax, with JavaScript's meaning.

    JavaScript's `\\w`, `\\d` and `\\b` know only ASCII, `$` without the `m` flag
    is the very end, `(?<name>` and `\\k<name>` name groups, and `[^]` is any
    character. (`\\W` and `\\D` inside a character class stay Python's.)
    """
    out: list[str] = []
    index = 0
    in_class = False
    while index < len(pattern):
        char = pattern[index]
        if char == "\\" and index + 1 < len(pattern):
            escaped = pattern[index + 1]
            named = _NAMED_REFERENCE.match(pattern, index + 1)
            if in_class and escaped in _CLASS_ESCAPES:
                out.append(_CLASS_ESCAPES[escaped])
            elif not in_class and escaped in _ESCAPES:
                out.append(_ESCAPES[escaped])
            elif not in_class and named:
                out.append(f"(?P={named.group(1)})")
                index = named.end()
                continue
            else:
                out.append(pattern[index : index + 2])
            index += 2
        elif in_class:
            in_class = char != "]"
            out.append(char)
            index += 1
        elif pattern.startswith("[^]", index):
            out.append("[\\s\\S]")
            index += 3
        elif char == "[":
            in_class = True
            out.append(char)
            index += 1
        elif pattern.startswith("(?<", index) and pattern[index + 3 : index + 4] not in ("=", "!"):
            out.append("(?P<")
            index += 3
        else:
            out.append("\\Z" if char == "$" and not multiline else char)
            index += 1
    return "".join(out)
