"""Extraction in two passes: the answer, then a second look for what it missed.

A candidate of bench/extraction_quality.py: after the first answer, the same
conversation goes on with one more turn asking for the facts worth remembering that
the list misses, under the same grammar; the bullets of both answers make one
`<memory>` block. The second call starts with the first call's prompt and answer, which
llama.cpp still holds, so it reads only the new turn: its prompt tokens are counted as
the ones it adds.
"""

from __future__ import annotations

from collections.abc import Sequence

from charmemory.core.extraction_answer import SENTINEL, parse_answer
from charmemory.ports import ChatMessage, ChatModel, Completion, NewMemories

SECOND_LOOK = (
    "Read the chat again. Which facts worth remembering months later does your list "
    "miss? Answer with one <memory> block of the missing facts only, or "
    f"{SENTINEL} if it misses none."
)


async def second_look(
    model: ChatModel,
    prompt: Sequence[ChatMessage],
    first: Completion,
    wanted: NewMemories,
    *,
    max_tokens: int,
    temperature: float,
) -> tuple[str, int, int]:
    """Both answers' bullets as one answer, the prompt tokens the second call adds and
    the tokens it wrote."""
    turns = [*prompt, ChatMessage("assistant", first.text), ChatMessage("user", SECOND_LOOK)]
    more = await model.complete(
        turns, max_tokens=max_tokens, temperature=temperature, answer_format=wanted
    )
    bullets = [
        *parse_answer(first.text, max_bullets=wanted.max_bullets).bullets,
        *parse_answer(more.text, max_bullets=wanted.max_bullets).bullets,
    ]
    unique = list(dict.fromkeys(bullets))
    text = "<memory>\n" + "".join(f"- {b}\n" for b in unique) + "</memory>" if unique else SENTINEL
    first_tokens = (first.usage.prompt_tokens or 0) + (first.usage.completion_tokens or 0)
    added = max(0, (more.usage.prompt_tokens or 0) - first_tokens)
    return text, added, more.usage.completion_tokens or 0
