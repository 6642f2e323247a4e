"""How much of the model's context each part of an extraction prompt may take.

A prompt is the template's own words, the character card, the existing memories
and the chat messages, and the answer needs room after it. Nothing in a chat or a
card limits its size (a 2 MB message, a 20 MB card description), so every part
is held to a share of the model's context (`model.context_size`) once the
response (`extraction.max_response_tokens`) and the template are paid for:

- the card: at most a quarter of what is left, cut with a marker past that;
- the existing memories: at most a quarter (and at most their own setting);
- the chat messages: the rest. When they do not fit, the longest ones are cut to
  one common length (the shorter ones stay whole), each with a marker saying how
  much was left out, so no message is ever sent whole past the budget.

Tokens are estimated as characters / 4 (`approx_tokens`) and a tenth of the
context is kept back for the estimate's error.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from charmemory.core.existing_memories import approx_tokens
from charmemory.core.message_cleaning import RenderedMessage
from charmemory.errors import ConfigError

CHARS_PER_TOKEN = 4
USABLE_SHARE = 0.9  # of the context; the rest absorbs the token estimate's error
# Below this a cut message says too little to be worth sending: the chunk is too big.
MIN_MESSAGE_CHARS = 200
MIN_AVAILABLE_TOKENS = 256


@dataclass(frozen=True)
class SectionBudget:
    """Tokens for the prompt's variable parts, after the template and the response."""

    available: int  # for the card, the memories and the messages together
    card: int
    memories: int


@dataclass(frozen=True)
class Cut:
    """A message (by chat index) or the card, cut to fit: its size and what was sent."""

    what: str
    chars: int
    kept: int


def section_budget(
    *, context_size: int, response_tokens: int, template_tokens: int, memories_budget: int
) -> SectionBudget:
    available = int(context_size * USABLE_SHARE) - response_tokens - template_tokens
    if available < MIN_AVAILABLE_TOKENS:
        raise ConfigError(
            f"model.context_size is {context_size} tokens: after the response "
            f"({response_tokens}, extraction.max_response_tokens) and the prompt's own text "
            f"({template_tokens}) too little is left for the chat; raise model.context_size "
            "or lower extraction.max_response_tokens"
        )
    return SectionBudget(available, available // 4, min(memories_budget, available // 4))


def fit_text(text: str, max_tokens: int, what: str) -> tuple[str, Cut | None]:
    """`text`, or its beginning with a marker when it is over `max_tokens`."""
    limit = max_tokens * CHARS_PER_TOKEN
    if len(text) <= limit:
        return text, None
    kept = _cut(text, limit)
    return kept, Cut(what, len(text), len(kept))


def fit_messages(
    messages: Sequence[RenderedMessage], max_tokens: int
) -> tuple[list[RenderedMessage], list[Cut]]:
    """The messages within `max_tokens`: the longest cut to one common length."""
    limit = max_tokens * CHARS_PER_TOKEN
    overhead = sum(len(m.name) + 4 for m in messages)  # "Name: " and the blank line after
    lengths = sorted(len(m.text) for m in messages)
    if overhead + sum(lengths) <= limit:
        return list(messages), []
    cap = _common_cap(lengths, limit - overhead)
    if cap < MIN_MESSAGE_CHARS:
        raise ConfigError(
            f"{len(messages)} messages do not fit the model's context even cut to "
            f"{MIN_MESSAGE_CHARS} characters each: lower extraction.messages_per_call or "
            "raise model.context_size"
        )
    fitted, cuts = [], []
    for message in messages:
        if len(message.text) <= cap:
            fitted.append(message)
            continue
        kept = _cut(message.text, cap)
        fitted.append(replace(message, text=kept))
        cuts.append(Cut(f"message {message.index}", len(message.text), len(kept)))
    return fitted, cuts


def tokens_of(messages: Sequence[RenderedMessage]) -> int:
    return sum(approx_tokens(f"{m.name}: {m.text}\n\n") for m in messages)


def describe_cuts(cuts: Sequence[Cut]) -> str:
    """`message 12 (2,000,000 characters, 9,800 sent), card (...)`."""
    return ", ".join(f"{cut.what} ({cut.chars:,} characters, {cut.kept:,} sent)" for cut in cuts)


def _common_cap(sorted_lengths: list[int], room: int) -> int:
    """The largest length c with sum(min(length, c)) <= room (lengths ascending)."""
    spent = 0
    for position, length in enumerate(sorted_lengths):
        longer = len(sorted_lengths) - position  # this one and every longer one
        if spent + length * longer > room:
            return (room - spent) // longer
        spent += length
    return sorted_lengths[-1] if sorted_lengths else room


def _cut(text: str, limit: int) -> str:
    """The beginning of `text`, marker included, at most `limit` characters long."""
    longest_marker = _marker(len(text))  # no shorter cut leaves more out than this
    head = text[: max(limit - len(longest_marker) - 1, 0)]
    # End on a word boundary when one is near, so no word is sent half.
    space = head.rfind(" ", max(len(head) - 80, 0))
    if space > 0:
        head = head[:space]
    head = head.rstrip()
    return f"{head} {_marker(len(text) - len(head))}"


def _marker(left_out: int) -> str:
    return f"[… {left_out:,} more characters not sent: too long for the prompt]"
