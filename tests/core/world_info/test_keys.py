"""Key matching, checked case by case against SillyTavern's matchKeys.

The expected values of the table were produced by running SillyTavern's
matchKeys and parseRegexFromString (public/scripts/world-info.js, utils.js) in
Node.js on the same text; they pin plain keys, whole words with JavaScript's
ASCII-only `\\W`, case sensitivity, and JavaScript regular expressions.
"""

from __future__ import annotations

import pytest

from charmemory.core.world_info.haystack import Haystack
from charmemory.core.world_info.keys import compile_key, parse_regex_key, required_literal

TEXT = (
    "\x01Wren: Long live the King!\n"
    "\x01Seraphina: It's not to my liking, café owner. C++ rocks; e-mail me at x.y. "
    "Dr. Who? 42 apples\n"
)

# key -> matches with (case-insensitive, substring), (case-insensitive, whole words),
# (case-sensitive, substring), (case-sensitive, whole words)
CASES = [
    ("king", (True, True, True, False)),
    ("King", (True, True, True, True)),
    ("liking", (True, True, True, True)),
    ("lik", (True, False, True, False)),
    ("caf", (True, True, True, True)),  # "é" is not a word character to JavaScript
    ("café", (True, True, True, True)),
    ("c++", (True, True, False, False)),
    ("e-mail", (True, True, True, True)),
    ("mail", (True, True, True, True)),
    ("dr.", (True, True, False, False)),
    ("who", (True, True, False, False)),
    ("live the", (True, True, True, True)),  # several words: a substring even for whole words
    ("LIVE THE", (True, True, False, False)),
    ("my liking,", (True, True, True, True)),
    ("x.y", (True, True, True, True)),
    ("y", (True, True, True, True)),
    ("rocks;", (True, True, True, True)),
    ("  king  ", (True, True, True, False)),  # trimmed first
    ("/king/", (True, True, True, True)),  # a regex ignores the entry's case setting
    ("/King/", (True, True, True, True)),
    ("/king/i", (True, True, True, True)),
    ("/\\x01Wren:[^\\x01]*king/i", (True, True, True, True)),
    ("/\\x01Seraphina:[^\\x01]*king/i", (True, True, True, True)),
    ("/a/b/", (False, False, False, False)),  # unescaped slash: plain text, not found
    ("/(?<w>ki)ng/i", (True, True, True, True)),
    ("/^Wren/", (False, False, False, False)),
    ("/^\\x01Wren/", (True, True, True, True)),
    ("/Wren/y", (False, False, False, False)),  # sticky: only at the start
    ("/\\x01Wren/y", (True, True, True, True)),
    ("/[^]ng/", (True, True, True, True)),
    ("/\\bcaf\\b/", (True, True, True, True)),
    ("/\\bcafé\\b/", (False, False, False, False)),
    ("/\\w+é/", (True, True, True, True)),
    ("/[/", (False, False, False, False)),  # does not compile: plain text, not found
    ("/apples$/", (False, False, False, False)),  # `$` is the very end, after the newline
    ("/apples\\n$/", (True, True, True, True)),
    ("/apples$/m", (True, True, True, True)),
    ("/\\d+ apples/", (True, True, True, True)),
    ("/[\\d]{2}/", (True, True, True, True)),
    ("/\\Bive\\b/", (True, True, True, True)),
    ("/(l)ive\\s\\1?/", (True, True, True, True)),
    ("/(?<x>o)wn\\k<x>/", (False, False, False, False)),
    ("/(?<x>i)k\\k<x>/", (True, True, True, True)),
    ("/é\\b/", (False, False, False, False)),
    ("/\\Wowner/", (True, True, True, True)),
    ("/[\\w]+\\+\\+/", (True, True, True, True)),
    ("/CAFÉ/i", (True, True, True, True)),
    ("/\\//", (False, False, False, False)),
    ("/a\\/b/", (False, False, False, False)),
    ("/x\\.y/", (True, True, True, True)),
    ("/ki(?=ng)/i", (True, True, True, True)),
    ("/(?<!l)iv/", (False, False, False, False)),
    ("/\\u00e9/", (True, True, True, True)),
]
MODES = [(False, False), (False, True), (True, False), (True, True)]


@pytest.mark.parametrize(("key", "expected"), CASES)
def test_key_matches_as_sillytavern(key: str, expected: tuple[bool, ...]):
    found = []
    for case_sensitive, whole_words in MODES:
        matcher = compile_key(key, case_sensitive=case_sensitive, whole_words=whole_words)
        assert matcher is not None
        found.append(matcher.matches(Haystack(TEXT)))

    assert tuple(found) == expected


@pytest.mark.parametrize(
    ("key", "kind"),
    [
        ("forest", "word"),
        ("magical forest", "substring"),
        ("c++", "bounded"),
        ("/fo+/i", "regex"),
        ("/a/b/", "bounded"),  # an unescaped slash makes it plain text
    ],
)
def test_a_plain_word_key_is_looked_up_in_the_word_set(key: str, kind: str):
    matcher = compile_key(key, case_sensitive=False, whole_words=True)

    assert matcher is not None and matcher.kind == kind


def test_substring_mode_never_uses_words():
    matcher = compile_key("forest", case_sensitive=False, whole_words=False)

    assert matcher is not None and matcher.kind == "substring"
    assert matcher.matches(Haystack("the forestry"))


@pytest.mark.parametrize("key", ["", "   ", "\n"])
def test_an_empty_key_matches_nothing(key: str):
    assert compile_key(key, case_sensitive=False, whole_words=True) is None


@pytest.mark.parametrize(
    ("key", "whole_words", "anchor"),
    [
        ("Forest", True, "forest"),  # a word: looked up in the word set
        ("magical forest", True, "magi"),  # a substring: a 4-gram of it
        ("e-mail", True, "-mai"),  # its 4-gram of the rarest characters
        ("c++", True, None),  # too short for a 4-gram
        ("elf", False, None),
        ("shelf", False, "helf"),
        ("/elf/", True, None),  # regular expressions are always checked
    ],
)
def test_plain_keys_have_an_anchor_the_text_must_hold(
    key: str, whole_words: bool, anchor: str | None
):
    matcher = compile_key(key, case_sensitive=False, whole_words=whole_words)

    assert matcher is not None and matcher.anchor == anchor


@pytest.mark.parametrize(
    ("key", "regex"),
    [
        ("/x/", True),
        ("/x/gimsuy", True),
        ("/x/z", False),
        ("x", False),
        ("//", False),
        ("/x", False),
    ],
)
def test_regex_keys_are_slash_delimited_with_javascript_flags(key: str, regex: bool):
    assert (parse_regex_key(key) is not None) is regex


@pytest.mark.parametrize(
    ("pattern", "literal"),
    [
        (r"\bkalorven\w*", "kalorven"),
        (r"ab?cdef", "cdef"),  # "b" may be absent
        (r"(?:x|y)hello", "hello"),
        (r"hel|lo", None),  # a top-level alternative: nothing is certain
        (r"\x01Wren:[^\x01]*king", "Wren:"),
        (r"colou?r pattern", "r pattern"),
        (r"x\.ycom", "x.ycom"),
        (r"abc{2}defg", "defg"),
        (r"a{0,2}bcdef", "bcdef"),
        (r"(foo)?barbaz", "barbaz"),
        (r"[/]", None),
        (r"\\path", "\\path"),
        (r"\u00e9abcd", "abcd"),
        (r"\k<x>yes", "yes"),
        (r"\12abcd", "abcd"),
        (r"é\bword", "word"),
    ],
)
def test_the_text_a_regular_expression_always_contains(pattern: str, literal: str | None):
    assert required_literal(pattern) == literal


def test_a_case_insensitive_regex_is_anchored_on_lower_case_text():
    insensitive = compile_key(r"/\bKalor\w+/i", case_sensitive=True, whole_words=True)
    sensitive = compile_key(r"/\bKalor\w+/", case_sensitive=False, whole_words=True)

    assert (insensitive.anchor, insensitive.case_sensitive) == ("kalo", False)
    assert (sensitive.anchor, sensitive.case_sensitive) == ("Kalo", True)
