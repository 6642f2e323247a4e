"""Characters that never belong in saved text: controls and bidirectional overrides.

A NUL makes tools call a markdown file binary; other C0 and C1 controls print as
nothing or as garbage; the bidirectional embeddings, overrides and isolates
(U+202A-U+202E, U+2066-U+2069) make text display in another order than it is
stored, so a line can read as something it does not say. Text from a chat or a
model answer loses them before it is shown to a model or saved. Tabs and line
breaks are ordinary whitespace and stay; the other whitespace controls (vertical
tab, form feed, the information separators, NEL) become a space, so removing them
never glues two words together.
"""

from __future__ import annotations

import re

_WHITESPACE_CONTROLS = re.compile("[\x0b\x0c\x1c-\x1f\x85]")
_UNPRINTABLE = re.compile("[\x00-\x08\x0e-\x1b\x7f-\x84\x86-\x9f\u202a-\u202e\u2066-\u2069]")


def without_unprintable(text: str) -> str:
    """``text`` without control and bidi-override characters (whitespace controls: a space)."""
    if text.isprintable():  # none of them is printable; most texts hold none (and this is fast)
        return text
    return _UNPRINTABLE.sub("", _WHITESPACE_CONTROLS.sub(" ", text))
