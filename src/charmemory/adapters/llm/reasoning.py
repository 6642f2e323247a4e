"""Keeping a reasoning model's thinking apart from its answer.

Reasoning arrives in a `reasoning_content` or `reasoning` field (DeepSeek,
OpenRouter, NanoGPT, Ollama, llama.cpp...) or inline as `<think>...</think>`
in the content. An unclosed leading `<think>` (the answer was cut while the
model was still thinking) is all reasoning. Some chat templates open the
block themselves, so a complete answer may hold only the closing tag; then
everything before it is reasoning. Reasoning is never returned as the answer.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from charmemory.adapters.llm.provider_errors import ReasoningBudgetExhaustedError

OPEN_TAG = "<think>"
CLOSE_TAG = "</think>"
REASONING_FIELDS = ("reasoning_content", "reasoning")


def field_reasoning(message: Mapping[str, Any]) -> str:
    """Reasoning carried in its own field of a message or stream delta."""
    for name in REASONING_FIELDS:
        value = message.get(name)
        if isinstance(value, str) and value:
            return value
    return ""


def _partial_tag(text: str, tag: str) -> int:
    """Length of the longest end of `text` that could be the start of `tag`."""
    for size in range(min(len(tag) - 1, len(text)), 0, -1):
        if tag.startswith(text[-size:]):
            return size
    return 0


class ThinkSplitter:
    """Splits streamed content into answer and reasoning, tags cut across chunks included."""

    def __init__(self) -> None:
        self.thinking = False
        self._pending = ""

    def feed(self, chunk: str) -> tuple[str, str]:
        """(answer, reasoning) text that this chunk completes."""
        answer: list[str] = []
        reasoning: list[str] = []
        text = self._pending + chunk
        self._pending = ""
        while text:
            tag = CLOSE_TAG if self.thinking else OPEN_TAG
            side = reasoning if self.thinking else answer
            at = text.find(tag)
            if at >= 0:
                side.append(text[:at])
                text = text[at + len(tag) :]
                self.thinking = not self.thinking
                continue
            keep = _partial_tag(text, tag)
            side.append(text[: len(text) - keep])
            self._pending = text[len(text) - keep :]
            break
        return "".join(answer), "".join(reasoning)

    def finish(self) -> tuple[str, str]:
        """Whatever was held back in case it began a tag."""
        rest, self._pending = self._pending, ""
        return ("", rest) if self.thinking else (rest, "")


def split_think(text: str) -> tuple[str, str]:
    """(answer, reasoning) of a complete content string."""
    opening, closing = text.find(OPEN_TAG), text.find(CLOSE_TAG)
    if closing >= 0 and (opening < 0 or closing < opening):
        # The template opened the block: only its end is in the text.
        head, tail = text[:closing], text[closing + len(CLOSE_TAG) :]
        answer, reasoning = split_think(tail)
        return answer, head + reasoning
    splitter = ThinkSplitter()
    answer, reasoning = splitter.feed(text)
    answer_rest, reasoning_rest = splitter.finish()
    return answer + answer_rest, reasoning + reasoning_rest


def check_answered(
    provider: str, answer: str, reasoning_chars: int, finish_reason: str | None, max_tokens: int
) -> None:
    """An empty answer cut by the token limit is an error worth explaining."""
    if answer.strip() or finish_reason != "length":
        return
    spent = (
        f"reasoning ({reasoning_chars} characters of it)" if reasoning_chars else "before answering"
    )
    raise ReasoningBudgetExhaustedError(
        provider,
        f"the model spent its whole budget of {max_tokens} tokens {spent} and gave no answer",
        # The caller knows which setting gave the budget; it names it (see ResponseBudgetError).
        hint="allow a longer response, or turn the model's reasoning down",
    )
