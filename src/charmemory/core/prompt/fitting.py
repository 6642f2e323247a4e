"""Fitting a prompt into the context: the oldest chat messages go first.

As SillyTavern's Chat Completion: the budget is the context size less the
response length and the tokens priming the reply. The fixed sections must fit
whole, or the prompt cannot be built. Then the new-chat marker is reserved,
chat messages (injections among them) are taken from the newest back while
they fit, stopping at the first that does not, and the dialogue examples take
what room is left, block by block, each block's marker first; a block none of
whose messages fit is dropped. With `pin_examples` the examples are taken
before the chat.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from charmemory.core.prompt.messages import PromptMessage
from charmemory.errors import ContextTooSmallError


@dataclass(frozen=True)
class Fitted:
    examples: list[PromptMessage]
    history: list[PromptMessage]  # oldest first, without the new-chat marker
    left: int  # tokens still free


def fit_to_budget(
    budget: int,
    fixed: Sequence[PromptMessage],
    new_chat: PromptMessage | None,
    history: Sequence[PromptMessage],
    example_blocks: Sequence[Sequence[PromptMessage]],
    *,
    pin_examples: bool,
) -> Fitted:
    needed = sum(message.tokens for message in fixed)
    if needed > budget:
        raise ContextTooSmallError(
            f"the prompt's fixed parts need {needed} tokens but the context leaves {budget}: "
            "raise the context size, lower the response length or shorten the card"
        )
    left = budget - needed
    if new_chat is not None:
        left -= new_chat.tokens
    if pin_examples:
        examples, left = _examples(example_blocks, left)
        kept, left = _history(history, left)
    else:
        kept, left = _history(history, left)
        examples, left = _examples(example_blocks, left)
    return Fitted(examples, kept, left)


def _history(history: Sequence[PromptMessage], left: int) -> tuple[list[PromptMessage], int]:
    kept: list[PromptMessage] = []
    for message in reversed(history):
        if message.tokens > left:
            break
        kept.append(message)
        left -= message.tokens
    kept.reverse()
    return kept, left


def _examples(
    blocks: Sequence[Sequence[PromptMessage]], left: int
) -> tuple[list[PromptMessage], int]:
    kept: list[PromptMessage] = []
    for marker, *messages in blocks:
        added: list[PromptMessage] = []
        marked = marker.tokens <= left
        if marked:
            left -= marker.tokens
        for message in messages:
            if message.tokens > left:
                break
            added.append(message)
            left -= message.tokens
        if added:
            kept += [marker, *added] if marked else added
        elif marked:
            left += marker.tokens
    return kept, left
