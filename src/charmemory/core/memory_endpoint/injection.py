"""Where retrieved memories go in a frontend's messages; nothing else is touched.

The injection is one message, placed as the retrieval settings say:
`before_prompt` first of all, `in_prompt` right after the leading system
messages (the frontend's system prompt and card), and `in_chat` at a depth
counted over the conversation as SillyTavern counts it: depth 0 after the last
user or assistant message, depth 1 before it, a depth past the oldest message
before that one. Only an `in_chat` injection takes the configured role; the
other positions are system text, as in SillyTavern.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from charmemory.core.injection import Injection


def with_injection(
    messages: Sequence[Mapping[str, Any]], injection: Injection
) -> list[Mapping[str, Any]]:
    """The messages with the injection's message inserted (the same list when it is empty)."""
    if not injection.text:
        return list(messages)
    role = injection.role if injection.position == "in_chat" else "system"
    at = injection_index(messages, injection)
    return [*messages[:at], {"role": role, "content": injection.text}, *messages[at:]]


def injection_index(messages: Sequence[Mapping[str, Any]], injection: Injection) -> int:
    if injection.position == "before_prompt":
        return 0
    if injection.position == "in_prompt":
        return next(
            (i for i, message in enumerate(messages) if message.get("role") != "system"),
            len(messages),
        )
    turns = [
        i for i, message in enumerate(messages) if message.get("role") in ("user", "assistant")
    ]
    if not turns:
        return len(messages)
    depth = max(injection.depth, 0)
    if depth == 0:
        return turns[-1] + 1
    return turns[max(len(turns) - depth, 0)]
