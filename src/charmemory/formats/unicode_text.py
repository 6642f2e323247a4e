"""Text as JSON allows it and UTF-8 does not: lone surrogates.

`"\\ud800"` is valid JSON, so a chat, a card or a model's answer can hold a
UTF-16 surrogate with no partner. Python reads it into a `str` that no file,
database, tokenizer or terminal will take. Readers of those formats clean
their text here, at the edge, so nothing past them ever meets one.
"""

from __future__ import annotations

import re

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
REPLACEMENT = "\ufffd"


def without_lone_surrogates(text: str) -> str:
    """`text` with every lone surrogate replaced by U+FFFD, as a UTF-8 decoder would."""
    # Nearly all text has none: say so fast (`isascii` reads only the string's header).
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return _LONE_SURROGATE.sub(REPLACEMENT, text)
    return text
