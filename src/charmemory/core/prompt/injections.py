"""Prompts injected into the chat at a depth, grouped as SillyTavern's Chat Completion does.

Depth 0 is after the last message, depth 1 before it, and so on; a depth past
the oldest message puts the injection before it. At one depth, everything of
one role becomes one message: its parts (trimmed) are joined by newlines in
the order of SillyTavern's extension prompt names (`2_floating_prompt` the
Author's Note, `4_vectors_data_bank` retrieved memories, `DEPTH_PROMPT` the
card's depth prompt, `customDepthWI-<depth>-<role>` World Info). At one depth
the assistant message comes first, then the user one, then the system one,
closest to the end. Injections deeper than 1000 are dropped.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from charmemory.core.prompt.messages import IN_CHAT_INJECTIONS, PromptMessage
from charmemory.core.world_info.entries import ROLES, Role

MAX_INJECTION_DEPTH = 1000
AUTHORS_NOTE_KEY = "2_floating_prompt"
MEMORY_KEY = "4_vectors_data_bank"
DEPTH_PROMPT_KEY = "DEPTH_PROMPT"


@dataclass(frozen=True)
class ChatInjection:
    depth: int
    role: Role
    text: str
    source: str  # "authors_note", "memory", "depth_prompt", "world_info"
    key: str  # SillyTavern's extension prompt name, which orders injections at one depth


def world_info_key(depth: int, role: Role) -> str:
    return f"customDepthWI-{depth}-{ROLES.index(role)}"


def insert_injections(
    history: Sequence[PromptMessage],
    injections: Sequence[ChatInjection],
    substitute: Callable[[str], str],
) -> list[PromptMessage]:
    """The chat history, oldest first, with the injections in place."""
    newest_first = list(reversed(history))
    inserted = 0
    for depth in sorted({item.depth for item in injections}):
        if not 0 <= depth <= MAX_INJECTION_DEPTH:
            continue
        messages = []
        for role in ROLES:
            parts = sorted(
                (item for item in injections if item.depth == depth and item.role == role),
                key=lambda item: item.key,
            )
            text = substitute("\n".join(p.text.strip() for p in parts if p.text.strip()))
            if text.strip():
                sources = tuple(dict.fromkeys(p.source for p in parts if p.text.strip()))
                messages.append(PromptMessage(role, text.strip(), (IN_CHAT_INJECTIONS,), sources))
        if messages:
            at = depth + inserted
            newest_first[at:at] = messages
            inserted += len(messages)
    return list(reversed(newest_first))
