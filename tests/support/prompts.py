"""Cards, chats and requests for prompt tests."""

from __future__ import annotations

import random
from datetime import UTC, datetime
from typing import Any

from charmemory.core.injection import approximate_tokens
from charmemory.core.prompt import (
    DEFAULT_PROMPT_SETTINGS,
    GenerationPrompt,
    Persona,
    PromptRequest,
    PromptSettings,
    build_prompt,
)
from charmemory.core.world_info import (
    DEFAULT_WORLD_INFO_SETTINGS,
    LoreSources,
    WorldInfoSettings,
    gather_candidates,
)
from charmemory.formats.card import Card
from charmemory.formats.chat import Chat, ChatHeader, Message
from charmemory.ports import TokenCounter

NOW = datetime(2026, 11, 28, 20, 0, tzinfo=UTC)


def card(**fields: Any) -> Card:
    return Card(**{"name": "Seraphina", **fields})


def chat(*lines: tuple[str, str] | str, metadata: dict[str, Any] | None = None) -> Chat:
    """A chat of (speaker, text) lines; a bare string is Seraphina's; "Wren" is the user."""
    messages = []
    for index, line in enumerate(lines):
        speaker, text = ("Seraphina", line) if isinstance(line, str) else line
        sent = f"2026-11-28T19:{index:02d}:00.000Z"
        user = speaker == "Wren"
        messages.append(Message.new(name=speaker, mes=text, is_user=user, send_date=sent))
    return Chat(ChatHeader({"chat_metadata": metadata or {}}), messages)


def prompt(
    request_card: Card,
    request_chat: Chat,
    *,
    sources: LoreSources | None = None,
    settings: PromptSettings = DEFAULT_PROMPT_SETTINGS,
    world_info: WorldInfoSettings = DEFAULT_WORLD_INFO_SETTINGS,
    seed: int = 1,
    count_tokens: TokenCounter = approximate_tokens,
    **request: Any,
) -> GenerationPrompt:
    persona = request.pop("persona", Persona("Wren"))
    built = PromptRequest(request_card, request_chat, persona, **request)
    return build_prompt(
        built,
        gather_candidates(sources or LoreSources(), world_info),
        rng=random.Random(seed),
        now=NOW,
        settings=settings,
        world_info=world_info,
        count_tokens=count_tokens,
    )


def shape(result: GenerationPrompt) -> list[tuple[str, str, str]]:
    """(role, section, content) of each message."""
    return [(m.role, m.section, m.content) for m in result.prompt.messages]
