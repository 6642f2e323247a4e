"""What a frontend's chat-completions request says, read without changing it.

Only `messages` is required; every other field (model, sampling, `stream`,
tools, fields this code has never heard of) travels on untouched. The
conversation is the user and assistant messages in order; system messages are
the frontend's own prompt pieces and injections, read only to recognise the
character and to tell a continuation or an impersonation from a reply.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from charmemory.errors import FormatError

RequestKind = Literal["reply", "continue", "impersonate"]

# SillyTavern's default prompts for a continuation and an impersonation, sent as a
# system message after the conversation.
CONTINUE_NUDGE = "continue your last message without repeating its original content"
IMPERSONATION = "write your next reply from the point of view of"


@dataclass(frozen=True)
class Turn:
    """One user or assistant message of the conversation."""

    is_user: bool
    text: str
    name: str | None = None  # the `name` the frontend gave the message


@dataclass(frozen=True)
class CompletionRequest:
    body: Mapping[str, Any]
    messages: tuple[Mapping[str, Any], ...]
    turns: tuple[Turn, ...]
    system_text: str  # every system message, joined: where the character is recognised
    kind: RequestKind
    stream: bool
    model: str | None


def message_text(content: Any) -> str:
    """A message's content as text: a string, or the text parts of a list of parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            part.get("text", "")
            for part in content
            if isinstance(part, dict) and isinstance(part.get("text"), str)
        )
    return ""


def read_request(body: Any) -> CompletionRequest:
    """The request as the endpoint needs it; FormatError when it is no chat request."""
    if not isinstance(body, dict):
        raise FormatError("the request body must be a JSON object with `messages`")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise FormatError("`messages` must be a non-empty list of chat messages")
    for number, message in enumerate(messages):
        if not isinstance(message, dict) or not isinstance(message.get("role"), str):
            raise FormatError(f"message {number} must be an object with a `role`")
    model = body.get("model")
    return CompletionRequest(
        body=body,
        messages=tuple(messages),
        turns=tuple(conversation_turns(messages)),
        system_text="\n\n".join(
            message_text(m.get("content")) for m in messages if m["role"] in ("system", "developer")
        ),
        kind=request_kind(messages),
        stream=body.get("stream") is True,
        model=model if isinstance(model, str) and model.strip() else None,
    )


def conversation_turns(messages: Sequence[Mapping[str, Any]]) -> list[Turn]:
    """The user and assistant messages with text, in order (tool calls without text left out)."""
    turns = []
    for message in messages:
        role = message.get("role")
        if role not in ("user", "assistant"):
            continue
        text = message_text(message.get("content"))
        if not text.strip():
            continue
        name = message.get("name")
        turns.append(Turn(role == "user", text, name if isinstance(name, str) else None))
    return turns


def request_kind(messages: Sequence[Mapping[str, Any]]) -> RequestKind:
    """Whether the reply continues the last message, speaks for the user, or answers.

    Told by SillyTavern's default nudges in the system messages after the last turn.
    """
    tail: list[str] = []
    for message in reversed(messages):
        if message.get("role") in ("user", "assistant"):
            break
        tail.append(" ".join(message_text(message.get("content")).split()).casefold())
    text = "\n".join(tail)
    if IMPERSONATION in text:
        return "impersonate"
    if CONTINUE_NUDGE in text:
        return "continue"
    return "reply"
