"""The configured system text, put in front of a request's messages (every provider)."""

from __future__ import annotations

from collections.abc import Sequence

from charmemory.ports import ChatMessage


def with_system_prompt(messages: Sequence[ChatMessage], *extra: str) -> list[ChatMessage]:
    """The messages with the configured system text (and any schema hint) in front."""
    text = "\n\n".join(part for part in extra if part.strip())
    if not text:
        return list(messages)
    if messages and messages[0].role == "system":
        return [ChatMessage("system", f"{text}\n\n{messages[0].content}"), *messages[1:]]
    return [ChatMessage("system", text), *messages]
