"""What one generation was given and why: kept for `charmemory diagnose`.

A record holds the prompt exactly as sent (each message with the prompt
sections it came from and its tokens), the memories injected with their scores
and the query that found them, every World Info candidate with whether it
activated and why, the model, the timings, the finish reason and the reply
itself (so a reply that could not be saved is not lost). A candidate that is a
memory-book entry says so (`memory`: its tier, scene range and chat).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from charmemory.core.books.entry import chat_of, is_memory, link_of, scene_of, tier_of
from charmemory.core.books.tiers import tier_name
from charmemory.core.prompt import GenerationPrompt
from charmemory.core.world_info import Explanation
from charmemory.formats.lorebook import LorebookEntry


@dataclass(frozen=True)
class GenerationRecord:
    character: str
    chat: str
    at: str  # ISO-8601
    kind: str  # normal, swipe, regenerate, continue
    model: str  # provider/model
    prompt: list[dict[str, Any]]
    memory_query: str
    memories: list[dict[str, Any]]
    world_info: list[dict[str, Any]]
    tokens: dict[str, Any]
    timings: dict[str, float]
    lorebooks: list[dict[str, Any]] = field(default_factory=list)  # source, name, entries
    missing_lorebooks: list[str] = field(default_factory=list)
    reply: str = ""
    reasoning: str = ""
    finish_reason: str | None = None
    message_index: int | None = None  # where the reply went in the chat
    error: str | None = None
    number: int = 0  # 1, 2, ... per chat, given when the record is kept

    def to_dict(self) -> dict[str, Any]:
        # Not dataclasses.asdict: its deep copy of a long prompt costs more than the turn.
        return {name: getattr(self, name) for name in self.__dataclass_fields__}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> GenerationRecord:
        known = {name: data[name] for name in cls.__dataclass_fields__ if name in data}
        return cls(**known)


@dataclass(frozen=True)
class PromptParts:
    """The parts of a record that come from building the prompt."""

    prompt: list[dict[str, Any]] = field(default_factory=list)
    world_info: list[dict[str, Any]] = field(default_factory=list)
    tokens: dict[str, Any] = field(default_factory=dict)


def prompt_parts(built: GenerationPrompt) -> PromptParts:
    """The prompt as sent, its token breakdown and every World Info decision."""
    assembled = built.prompt
    messages = [
        {
            "role": message.role,
            "content": message.content,
            "sections": list(message.sections),
            "sources": list(message.sources),
            "tokens": message.tokens,
            **({"name": message.name} if message.name else {}),
            **({"message_id": message.message_id} if message.message_id is not None else {}),
        }
        for message in assembled.messages
    ]
    tokens = {
        "total": assembled.tokens,
        "budget": assembled.budget,
        "sections": dict(assembled.section_tokens),
        "world_info_budget": built.world_info.budget,
        "world_info_used": built.world_info.used_tokens,
        "last_in_context_message_id": assembled.last_in_context_message_id,
        "dropped_message_ids": list(assembled.dropped_message_ids),
    }
    result = built.world_info
    explained = [
        _explained(explanation, item.entry.source)
        for explanation, item in zip(result.explanations(), result.candidates.entries, strict=True)
    ]
    return PromptParts(messages, explained, tokens)


def _explained(explanation: Explanation, source: LorebookEntry) -> dict[str, Any]:
    memory = memory_of(source)
    return {
        "book": explanation.book,
        "uid": explanation.uid,
        "comment": explanation.comment,
        "activated": explanation.activated,
        "reason": str(explanation.reason),
        "why": explanation.text,
        **({"step": explanation.step} if explanation.step is not None else {}),
        **({"memory": memory} if memory is not None else {}),
    }


def memory_of(entry: LorebookEntry) -> dict[str, Any] | None:
    """What a memory-book entry is (tier, scene range, chat, link); None for other entries."""
    if not is_memory(entry):
        return None
    scene = scene_of(entry)
    link = link_of(entry)
    return {
        "tier": tier_name(tier_of(entry)),
        "range": None if scene is None else [scene.first, scene.last],
        "chat": chat_of(entry),
        **({} if link is None else {"canonical": link.canonical, "group": link.inclusion_group}),
    }
