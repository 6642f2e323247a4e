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
Other keys have an anchor when they can: the first four characters of the key,
or of the text a regular expression always matches, which must then be among
the text's 4-grams. The candidates index entries by these anchors, so a scan
checks only the keys that may match.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from charmemory.core.world_info.haystack import GRAM, WORD_RUN, Haystack

MatchKind = Literal["word", "substring", "bounded", "regex"]

_NON_WORD = "[^A-Za-z0-9_]"
_REGEX_KEY = re.compile(r"/([\s\S]+?)/([gimsuy]*)\Z")
_UNESCAPED_SLASH = re.compile(r"(?:^|[^\\])/")
_JS_FLAGS = {"i": re.IGNORECASE, "m": re.MULTILINE, "s": re.DOTALL}


@dataclass(frozen=True)
class KeyMatcher:
    """One key compiled for an entry's case sensitivity and whole-word setting."""

    key: str  # the key as written (macros substituted, trimmed)
    kind: MatchKind
    # Plain keys: the key, lower-cased unless case-sensitive. Regular expressions:
    # text every match contains, lower-cased if the pattern ignores case.
    needle: str = ""
    pattern: re.Pattern[str] | None = None  # for bounded and regex kinds
    case_sensitive: bool = False  # for a regular expression: unless it has the `i` flag
    anchored: bool = False  # a JavaScript sticky (`y`) regex: it only matches at the start

    @property
    def anchor(self) -> str | None:
        """What the text must hold for this key to match: a word, a 4-gram, or nothing known."""
        if self.kind == "word":
            return self.needle
        if len(self.needle) >= GRAM and "\x01" not in self.needle:
            return rarest_gram(self.needle)
        return None

    def matches(self, text: Haystack) -> bool:
        if self.kind == "word":
            return self.needle in text.words(self.case_sensitive)
        if self.kind == "substring":
            return self.needle in (text.text if self.case_sensitive else text.lower)
        assert self.pattern is not None
        if self.kind == "regex":
            if self.needle and self.needle not in (
                text.text if self.case_sensitive else text.lower
            ):
                return False  # cheaper than the search, and most regexes hold text
            search = self.pattern.match if self.anchored else self.pattern.search
            return search(text.text) is not None
        return self.pattern.search(text.text if self.case_sensitive else text.lower) is not None


# Characters from the most to the least frequent in English text; others count as rare.
_FREQUENT = " etaoinsrhldcumfpgwybvkxjqz"


def rarest_gram(needle: str) -> str:
    """The 4-gram of `needle` made of the least frequent characters, the first if tied.

    Indexing a key by it makes the scan text hold it by chance less often.
    """
    grams = [needle[start : start + GRAM] for start in range(len(needle) - GRAM + 1)]
    return max(grams, key=lambda gram: sum(_FREQUENT.find(c.lower()) % 40 for c in gram))


def compile_key(key: str, *, case_sensitive: bool, whole_words: bool) -> KeyMatcher | None:
    """The matcher for `key`, or None for a key that is empty once trimmed."""
    key = key.strip()
    if not key:
        return None
    regex = parse_regex_key(key)
    if regex is not None:
        pattern, anchored = regex
        sensitive = not pattern.flags & re.IGNORECASE
        literal = required_literal(key[1 : key.rindex("/")]) or ""
        needle = literal if sensitive else literal.lower()
        return KeyMatcher(key, "regex", needle, pattern, sensitive, anchored)
    needle = key if case_sensitive else key.lower()
    if not whole_words or len(needle.split()) > 1:
        return KeyMatcher(key, "substring", needle, case_sensitive=case_sensitive)
    if WORD_RUN.fullmatch(needle):
        return KeyMatcher(key, "word", needle, case_sensitive=case_sensitive)
    bounded = re.compile(f"(?:^|{_NON_WORD}){re.escape(needle)}(?:\\Z|{_NON_WORD})")
    return KeyMatcher(key, "bounded", needle, bounded, case_sensitive=case_sensitive)


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
    ascii_only = pattern.isascii()
    options = re.ASCII if ascii_only else 0
    for flag in flags:
        options |= _JS_FLAGS.get(flag, 0)
    source = _python_syntax(pattern, multiline="m" in flags, ascii_only=ascii_only)
    try:
        return re.compile(source, options), "y" in flags
    except (re.error, OverflowError, RecursionError):
        return None


_WORD = "A-Za-z0-9_"
_SPACE = "\\t\\n\\v\\f\\r \\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff"
# In ASCII mode Python's \w, \d and \b are JavaScript's; only \s must widen.
_ASCII_ESCAPES = {"s": f"[{_SPACE}]", "S": f"[^{_SPACE}]"}
_ASCII_CLASS_ESCAPES = {"s": _SPACE}
# In Unicode mode (a pattern with non-ASCII text) \s is JavaScript's; the rest narrows.
_UNICODE_ESCAPES = {
    "w": f"[{_WORD}]",
    "W": f"[^{_WORD}]",
    "d": "[0-9]",
    "D": "[^0-9]",
    "b": f"(?:(?<=[{_WORD}])(?![{_WORD}])|(?<![{_WORD}])(?=[{_WORD}]))",
    "B": f"(?:(?<=[{_WORD}])(?=[{_WORD}])|(?<![{_WORD}])(?![{_WORD}]))",
}
_UNICODE_CLASS_ESCAPES = {"w": _WORD, "d": "0-9"}
_NAMED_REFERENCE = re.compile(r"k<(\w+)>")


def _python_syntax(pattern: str, *, multiline: bool, ascii_only: bool) -> str:
    """A JavaScript pattern in Python's syntax, with JavaScript's meaning.

    JavaScript's `\\w`, `\\d` and `\\b` know only ASCII while its `\\s` knows
    Unicode spaces; `$` without the `m` flag is the very end; `(?<name>` and
    `\\k<name>` name groups; `[^]` is any character. An ASCII pattern is
    compiled in Python's ASCII mode, which keeps its fast `\\b`; a pattern with
    other text spells the ASCII classes out. (Negated classes inside brackets,
    such as `[\\W]`, keep Python's meaning.)
    """
    escapes = _ASCII_ESCAPES if ascii_only else _UNICODE_ESCAPES
    class_escapes = _ASCII_CLASS_ESCAPES if ascii_only else _UNICODE_CLASS_ESCAPES
    out: list[str] = []
    index = 0
    in_class = False
    while index < len(pattern):
        char = pattern[index]
        if char == "\\" and index + 1 < len(pattern):
            escaped = pattern[index + 1]
            named = _NAMED_REFERENCE.match(pattern, index + 1)
            if in_class and escaped in class_escapes:
                out.append(class_escapes[escaped])
            elif not in_class and escaped in escapes:
                out.append(escapes[escaped])
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


_QUANTIFIER = re.compile(r"[*?+]|\{\d+(?:,\d*)?\}")
_LITERAL = re.compile(r"[A-Za-z0-9 ,:;'\"!#%&=<>@_~-]")
# An escape made of a letter or digit and what belongs to it (\x41, \u{1F600}, \k<name>, \12).
_ESCAPE = re.compile(
    r"\\(?:x[0-9A-Fa-f]{0,2}|u\{[0-9A-Fa-f]*\}|u[0-9A-Fa-f]{0,4}|c[A-Za-z]?|k<\w*>?"
    r"|[pP]\{[^}]*\}?|\d+|.)",
    re.DOTALL,
)


def required_literal(pattern: str) -> str | None:
    """The longest run of plain ASCII text every match of a JavaScript pattern contains.

    Read conservatively: a pattern with a top-level alternative has none; groups,
    character classes, escapes of classes and assertions end a run; a character
    that a `?`, `*` or `{0,...}` quantifier may drop leaves it. Escaped
    punctuation is plain text.
    """
    runs: list[str] = []
    run: list[str] = []

    def cut() -> None:
        runs.append("".join(run))
        run.clear()

    index = 0
    while index < len(pattern):
        char = pattern[index]
        quantifier = _QUANTIFIER.match(pattern, index)
        if char == "|":
            return None
        if quantifier is not None:
            optional = char in "*?" or quantifier.group().startswith("{0")
            if optional and run:
                run.pop()
            cut()
            index = quantifier.end()
        elif char == "\\" and index + 1 < len(pattern):
            escaped = pattern[index + 1]
            if escaped.isascii() and not escaped.isalnum():
                run.append(escaped)
                index += 2
            else:
                cut()
                found = _ESCAPE.match(pattern, index)
                index = found.end() if found else index + 2
        elif char in "([":
            end = _closing(pattern, index)
            if end is None:
                return None
            cut()
            index = end + 1
        else:
            if _LITERAL.fullmatch(char):
                run.append(char)
            else:
                cut()
            index += 1
    cut()
    return max(runs, key=len) or None


def _closing(pattern: str, start: int) -> int | None:
    """The index of the bracket closing the group or class opened at `start`."""
    depth = 0
    index = start
    in_class = False
    while index < len(pattern):
        char = pattern[index]
        if char == "\\":
            index += 2
            continue
        if in_class:
            if char == "]":
                in_class = False
                if pattern[start] == "[":
                    return index
        elif char == "[":
            in_class = True
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth == 0:
                return index
        index += 1
    return None
