"""Chat text made fit for the extraction prompt: the story kept, the machinery removed.

Role-play messages carry things no memory should come from: code blocks with image
prompts, `<details>` status panels, markdown tables of stats, HTML and CSS styling.
Those are removed; prose survives, including text that merely looks like markup
("a < b", "<3", "x<y and y>z", "<-- look"), because a tag is only recognised when it
has the shape of one: `<name>`, `</name>`, `<name/>`, or a name followed by
`attr="value"` pairs (bare attributes only when HTML defines them as switches).

Nothing in a message may open or close a `<memory>` block or a prompt section:
the `<` of such a tag becomes a look-alike character that no parser takes for one.
Control characters (NUL among them) and bidi overrides are unprintable input: they
are removed (`formats.unprintable`), so a model never reads them and never copies
them into a memory.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from charmemory.core.watermark import SourceMessage
from charmemory.formats.unprintable import without_unprintable

# U+FF1C FULLWIDTH LESS-THAN SIGN: reads as "<", parses as text (as in memory files).
TAG_LOOKALIKE = "\uff1c"

_FENCE_OPEN = re.compile(r" {0,3}(`{3,}|~{3,})")
_INLINE_FENCE = re.compile(r"```[^\n]*?```")
_DETAILS = re.compile(r"<details\b[^>]*>(?:(?!<details\b).)*?</details\s*>", re.I | re.S)
_HIDDEN_CONTENT = re.compile(r"<(style|script)\b[^>]*>.*?</\1\s*>|<!--.*?-->", re.I | re.S)
_BOOLEAN_ATTRIBUTES = (
    "open|hidden|disabled|checked|selected|controls|autoplay|loop|muted|"
    "readonly|required|multiple|reversed|async|defer|novalidate"
)
_TAG = re.compile(
    r"""<(/?)([A-Za-z][\w:-]*)
    (?:\s+(?:[A-Za-z_:][\w:.-]*\s*=\s*(?:"[^"]*"|'[^']*'|[^\s"'<>=`]+)
            |(?:"""
    + _BOOLEAN_ATTRIBUTES
    + r""")\b))*
    \s*/?>""",
    re.X | re.I,
)
# Tags that separate lines: removing them must not glue two lines together.
_LINE_BREAKING = frozenset(
    {"br", "p", "div", "li", "tr", "ul", "ol", "table", "thead", "tbody", "blockquote", "hr"}
    | {"pre", "section", "article", "header", "footer", "h1", "h2", "h3", "h4", "h5", "h6"}
)
_DELIMITER_ROW = re.compile(r"\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*")
_BLANK_RUN = re.compile(r"\n{3,}")


def neutralise_tags(text: str, names: Iterable[str] = ("memory",)) -> str:
    """Make every `<name`/`</name` (any case, spaces allowed) inert, for each name."""
    alternatives = "|".join(re.escape(name) for name in names)
    pattern = re.compile(rf"<(?=\s*/?\s*(?:{alternatives}))", re.IGNORECASE)
    return pattern.sub(TAG_LOOKALIKE, text)


def clean_message_text(text: str) -> str:
    """The prose of one message: markup, code, tables and panels removed, blank runs collapsed."""
    text = without_unprintable(text.replace("\r\n", "\n").replace("\r", "\n"))
    text = _drop_fenced_blocks(text)
    text = _INLINE_FENCE.sub("", text)
    text = _drop_details(text)
    text = _HIDDEN_CONTENT.sub("", text)
    text = _drop_tables(text)
    text = _TAG.sub(_replace_tag, text)
    text = neutralise_tags(text)
    text = "\n".join(line.rstrip() for line in text.split("\n"))
    return _BLANK_RUN.sub("\n\n", text).strip()


@dataclass(frozen=True)
class RenderedMessage:
    """One message as the prompt shows it: its chat index, speaker and cleaned text."""

    index: int
    name: str
    text: str


def cleaned_messages(
    messages: Iterable[SourceMessage], *, user_name: str, char_name: str
) -> list[RenderedMessage]:
    """The messages to send, cleaned; hidden and empty-after-cleaning ones left out."""
    rendered = []
    for message in messages:
        if message.is_hidden:
            continue
        text = clean_message_text(message.text)
        if not text:
            continue
        name = message.name or (user_name if message.is_user else char_name)
        name = " ".join(without_unprintable(name).split())
        rendered.append(RenderedMessage(message.index, neutralise_tags(name), text))
    return rendered


def join_messages(messages: Iterable[RenderedMessage]) -> str:
    """`Name: text` paragraphs for the prompt.

    An empty result means the chunk holds nothing to send (its watermark still advances).
    """
    return "\n\n".join(f"{message.name}: {message.text}" for message in messages)


def render_messages(messages: Iterable[SourceMessage], *, user_name: str, char_name: str) -> str:
    """`Name: text` paragraphs of the messages to send (see `cleaned_messages`)."""
    return join_messages(cleaned_messages(messages, user_name=user_name, char_name=char_name))


def _drop_fenced_blocks(text: str) -> str:
    """Remove closed ``` and ~~~ fences; an unclosed fence marker stays as plain text."""
    lines = text.split("\n")
    kept: list[str] = []
    position = 0
    while position < len(lines):
        opening = _FENCE_OPEN.match(lines[position])
        end = _closing_fence(lines, position, opening.group(1)) if opening else None
        if end is None:
            kept.append(lines[position])
            position += 1
        else:
            position = end + 1
    return "\n".join(kept)


def _closing_fence(lines: list[str], start: int, marker: str) -> int | None:
    closing = re.compile(rf" {{0,3}}{re.escape(marker[0])}{{{len(marker)},}}\s*")
    for position in range(start + 1, len(lines)):
        if closing.fullmatch(lines[position]):
            return position
    return None


def _drop_details(text: str) -> str:
    # Innermost first, so a nested panel does not leave its outer half behind.
    while True:
        reduced = _DETAILS.sub("", text)
        if reduced == text:
            return text
        text = reduced


def _drop_tables(text: str) -> str:
    lines = text.split("\n")
    drop = [False] * len(lines)
    for position, line in enumerate(lines):
        if _is_framed_row(line):
            drop[position] = True
        is_header = (
            "|" in line
            and position + 1 < len(lines)
            and "|" in lines[position + 1]
            and _DELIMITER_ROW.fullmatch(lines[position + 1])
        )
        if is_header:
            end = position + 2
            while end < len(lines) and "|" in lines[end] and lines[end].strip():
                end += 1
            drop[position:end] = [True] * (end - position)
    return "\n".join(line for line, dropped in zip(lines, drop, strict=True) if not dropped)


def _is_framed_row(line: str) -> bool:
    """A `| a | b |` row: framed by pipes with at least one inside, so `|aside|` stays."""
    stripped = line.strip()
    return stripped.startswith("|") and stripped.endswith("|") and stripped.count("|") >= 3


def _replace_tag(match: re.Match[str]) -> str:
    return "\n" if match.group(2).lower() in _LINE_BREAKING else ""
