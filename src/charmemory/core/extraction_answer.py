"""Reading the model's answer into bullets, whatever shape the model chose.

We ask for one `<memory>` block of `- ` bullets or the word NO_NEW_MEMORIES. Models
answer with chatty introductions, code fences, numbered or starred lists, lists with
no block at all, leftover reasoning, the sentinel in bold or quotes, refusals, and
answers cut off at the token limit, and bullets of whole pages. All of these are read
here; what is not usable becomes a warning rather than a memory. Block attributes
written by the model are ignored: the chat and date of a block are ours to set.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from charmemory.core.bullet_length import SETTING, cut_to_length
from charmemory.core.message_cleaning import neutralise_tags
from charmemory.formats.unprintable import without_unprintable

SENTINEL = "NO_NEW_MEMORIES"

REFUSAL = "refusal"
NO_BULLETS = "no bullets"
TRUNCATED = "truncated"
OVER_CAP = "over cap"
TOO_LONG = "too long"
MIXED = "mixed"
SPEECH = "speech"


@dataclass(frozen=True)
class LeftOut:
    """A bullet the model wrote that is not saved, and why (TRUNCATED, SPEECH, OVER_CAP)."""

    reason: str
    text: str


@dataclass(frozen=True)
class ParsedAnswer:
    """Bullets by block, in answer order. Each warning reads `<code>: <detail>`."""

    blocks: list[list[str]]
    warnings: list[str] = field(default_factory=list)
    nothing_new: bool = False
    left_out: list[LeftOut] = field(default_factory=list)

    @property
    def bullets(self) -> list[str]:
        return _flat(self.blocks)

    def has_warning(self, code: str) -> bool:
        return any(warning.split(":", 1)[0] == code for warning in self.warnings)


_REASONING = re.compile(r"<(think|thinking|reasoning)>.*?</\1\s*>", re.I | re.S)
_REASONING_CLOSE = re.compile(r"</(?:think|thinking|reasoning)\s*>", re.I)
_REASONING_OPEN = re.compile(r"<(?:think|thinking|reasoning)>", re.I)
_FENCE_LINE = re.compile(r"^[ \t]*(?:`{3,}|~{3,})[\w+-]*[ \t]*$", re.M)
_BLOCK_TAG = re.compile(r"<\s*(/?)\s*memor(?:y|ies)\b[^>]*>", re.I)
_MARKER = re.compile(r"[ \t]*(?:[-*+•–—]|\d{1,3}[.)]|\(\d{1,3}\))[ \t]+")
# Letters-only boundaries: `__NO_NEW_MEMORIES__` (markdown bold) must still count.
_SENTINEL_ANYWHERE = re.compile(r"(?<![a-z])no[\s_-]*new[\s_-]*memories(?![a-z])", re.I)
_SENTENCE_END = tuple(".!?…\"'”’»)]*_~")
# A bullet that says "you" outside quotes speaks to someone: a line of the chat copied
# into the answer, not a fact (the prompt asks for names, never "you"). Small local
# models do this; in the demo chat one kept "How would you feel about keeping the
# charts, Navigator Carrow?" as a memory.
# Hyphens are part of the word: "a thank-you note" is a fact.
_SECOND_PERSON = re.compile(r"(?<![\w-])(?:you|your|yours|yourself|yourselves)(?![\w-])", re.I)
# A whole block closing the text: its tags on their own lines, only `- ` bullets inside.
_FINAL_BLOCK = re.compile(
    r"(?:\A|\n)[ \t]*(<memory\b[^>\n]*>[ \t]*\n(?:[ \t]*\n)*"
    r"(?:[ \t]*-[ \t]+\S[^\n]*\n(?:[ \t]*\n)*)+[ \t]*</memory\s*>)\Z",
    re.I,
)
_QUOTED = re.compile(r'"[^"]*"|“[^”]*”|«[^»]*»')
_REFUSAL = re.compile(
    r"\b(?:i'?m sorry|i am sorry|i apologi[sz]e|i can'?t|i cannot|i won'?t|i will not|"
    r"i'?m (?:not able|unable)|i am (?:not able|unable)|as an ai\b|content polic|"
    r"against (?:my|the|our) (?:guidelines|polic)|not comfortable)",
    re.I,
)


def parse_answer(
    text: str,
    *,
    max_bullets: int,
    finish_reason: str | None = None,
    max_bullet_chars: int | None = None,
) -> ParsedAnswer:
    """The memories in one answer, at most `max_bullets` of them (the first ones), each
    cut to `max_bullet_chars` (see `core.bullet_length`)."""
    if max_bullets < 1:
        raise ValueError(f"max_bullets must be at least 1, not {max_bullets}")
    warnings: list[str] = []
    text, unfinished_reasoning = _without_reasoning(text.replace("\r\n", "\n"))
    text = _FENCE_LINE.sub("", text)

    pieces = _blocks(text)
    if pieces:
        blocks = [_bullets(content, plain_lines=True) for content, _ in pieces]
        cut_block = not pieces[-1][1]
    else:
        blocks = [_bullets(text, plain_lines=False)]
        cut_block = False

    left_out: list[LeftOut] = []
    if unfinished_reasoning:
        warnings.append(f"{TRUNCATED}: the answer ended inside the model's reasoning")
    elif finish_reason == "length" or cut_block:
        why = "hit the length limit" if finish_reason == "length" else "never closed its last block"
        warnings.append(f"{TRUNCATED}: the answer {why}; only complete bullets were kept")
        last_closed = bool(pieces) and not cut_block
        if not last_closed and blocks[-1] and not blocks[-1][-1].endswith(_SENTENCE_END):
            left_out.append(LeftOut(TRUNCATED, blocks[-1].pop()))

    spoken = [bullet for block in blocks for bullet in block if is_speech(bullet)]
    if spoken:
        blocks = [[bullet for bullet in block if not is_speech(bullet)] for block in blocks]
        left_out += [LeftOut(SPEECH, bullet) for bullet in spoken]
        warnings.append(
            f"{SPEECH}: left out {len(spoken)} bullet(s) that speak to someone instead of "
            f"stating a fact, e.g. {spoken[0]!r}"
        )
    blocks = [block for block in blocks if block]
    if max_bullet_chars is not None:
        long = [
            len(bullet) for block in blocks for bullet in block if len(bullet) > max_bullet_chars
        ]
        if long:
            blocks = [[cut_to_length(b, max_bullet_chars) for b in block] for block in blocks]
            warnings.append(
                f"{TOO_LONG}: cut {len(long)} bullet(s) of up to {max(long)} characters to "
                f"{max_bullet_chars} ({SETTING}), marked with […]"
            )
    total = sum(len(block) for block in blocks)
    if total > max_bullets:
        kept = _first(blocks, max_bullets)
        left_out += [LeftOut(OVER_CAP, bullet) for bullet in _flat(blocks)[max_bullets:]]
        blocks = kept
        warnings.append(
            f"{OVER_CAP}: the model wrote {total} bullets; kept the first {max_bullets}"
        )

    said_nothing_new = _SENTINEL_ANYWHERE.search(text) is not None
    if blocks and said_nothing_new:
        warnings.append(
            f"{MIXED}: the answer had bullets and also said {SENTINEL}; kept the bullets"
        )
    if not blocks and not said_nothing_new and not unfinished_reasoning and not spoken:
        warnings.append(_empty_reason(text))
    # Only copied dialogue: the model read the chat and found no fact in it.
    nothing_new = not blocks and (said_nothing_new or bool(spoken))
    return ParsedAnswer(blocks, warnings, nothing_new=nothing_new, left_out=left_out)


def answer_in_reasoning(reasoning: str) -> str | None:
    """The answer a model left at the very end of its reasoning, or None.

    Some models (and some provider settings) return an empty content field with the
    whole answer inside the reasoning. Reasoning is full of drafts, so only what it
    ends with counts: one complete `<memory>` block of `- ` bullets, or a last line
    saying NO_NEW_MEMORIES. Anything after it, an unclosed block or a line that is
    not a bullet means it was still drafting: None.
    """
    text = reasoning.replace("\r\n", "\n").rstrip()
    block = _FINAL_BLOCK.search(text)
    if block is not None:
        return block.group(1)
    last_line = text.rpartition("\n")[2]
    return SENTINEL if _is_sentinel(last_line) else None


def is_speech(bullet: str) -> bool:
    """Whether a bullet addresses someone ("you" outside quotes) rather than stating a fact."""
    return _SECOND_PERSON.search(_QUOTED.sub(" ", bullet)) is not None


def merge_blocks(answers: Iterable[ParsedAnswer]) -> list[str]:
    """The bullets of several answers (or of one answer's blocks) as one block, in order."""
    return [bullet for answer in answers for bullet in answer.bullets]


def _without_reasoning(text: str) -> tuple[str, bool]:
    """The answer without the model's thinking; True when thinking never ended."""
    text = _REASONING.sub("", text)
    closings = list(_REASONING_CLOSE.finditer(text))
    if closings:
        # The opening tag was part of the prompt template; all before the close is thought.
        text = text[closings[-1].end() :]
    opening = _REASONING_OPEN.search(text)
    if opening:
        return text[: opening.start()], True
    return text, False


def _blocks(text: str) -> list[tuple[str, bool]]:
    """(content, closed) of each `<memory>` block; a new opening closes the one before."""
    found: list[tuple[str, bool]] = []
    start: int | None = None
    for tag in filter(lambda tag: _is_structural(text, tag), _BLOCK_TAG.finditer(text)):
        if start is not None:
            found.append((text[start : tag.start()], True))
        start = None if tag.group(1) else tag.end()
    if start is not None:
        found.append((_without_partial_tag(text[start:]), False))
    return found


def _is_structural(text: str, tag: re.Match[str]) -> bool:
    """A tag opens or closes a block when it begins or ends its line; one with words on
    both sides is part of a sentence (and is made inert with the rest of the bullet)."""
    line_start = text.rfind("\n", 0, tag.start()) + 1
    line_end = text.find("\n", tag.end())
    before = text[line_start : tag.start()]
    after = text[tag.end() : len(text) if line_end < 0 else line_end]
    return not before.strip() or not after.strip()


def _without_partial_tag(text: str) -> str:
    """Drop a closing tag cut off at the very end (`</mem`)."""
    head, bracket, tail = text.rpartition("<")
    squeezed = "".join(tail.split()).lower()
    if bracket and squeezed and "</memory>".startswith("<" + squeezed):
        return head
    return text


def _bullets(content: str, *, plain_lines: bool) -> list[str]:
    """Bullets of one block (or of a whole answer without blocks).

    Inside a block with no list markers at all, each line is a bullet. An indented line
    right after a bullet continues it. Other lines are introductions and are skipped.
    """
    lines = content.split("\n")
    marked = any(_MARKER.match(line) for line in lines)
    items: list[str] = []
    continues = False
    for line in lines:
        marker = _MARKER.match(line)
        if marker:
            items.append(line[marker.end() :])
            continues = True
        elif continues and line[:1].isspace() and line.strip():
            items[-1] += " " + line.strip()
        else:
            continues = False
            if plain_lines and not marked and _could_be_memory(line):
                items.append(line)
    cleaned = (_clean_bullet(item) for item in items)
    return [item for item in cleaned if item and not _is_sentinel(item)]


def _could_be_memory(line: str) -> bool:
    stripped = line.strip()
    return bool(stripped) and not stripped.startswith("#") and not stripped.endswith(":")


def _clean_bullet(text: str) -> str:
    text = neutralise_tags(" ".join(without_unprintable(text).split()))
    return text if any(char.isalnum() for char in text) else ""


def _is_sentinel(text: str) -> bool:
    return re.sub(r"[^a-z]", "", text.lower()) == "nonewmemories"


def _flat(blocks: list[list[str]]) -> list[str]:
    return [bullet for block in blocks for bullet in block]


def _first(blocks: list[list[str]], limit: int) -> list[list[str]]:
    kept: list[list[str]] = []
    for block in blocks:
        if limit <= 0:
            break
        kept.append(block[:limit])
        limit -= len(kept[-1])
    return kept


def _empty_reason(text: str) -> str:
    stripped = " ".join(text.split())
    if not stripped:
        return f"{NO_BULLETS}: the answer was empty"
    excerpt = stripped if len(stripped) <= 80 else stripped[:77] + "..."
    if _REFUSAL.search(stripped.replace("\u2019", "'")):
        return f"{REFUSAL}: the model declined: {excerpt!r}"
    return f"{NO_BULLETS}: no memory bullets found in {excerpt!r}"
