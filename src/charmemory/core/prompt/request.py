"""What one generation's prompt is built from, and the macro and scan views of it."""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from functools import cached_property
from typing import Any

from charmemory.core.injection import Injection
from charmemory.core.prompt.macros import MacroContext
from charmemory.core.world_info.entries import GenerationType, Role
from charmemory.core.world_info.scan import CardFields, ScanContext, ScanMessage, prompt_messages
from charmemory.formats.card import Card
from charmemory.formats.chat import Chat


@dataclass(frozen=True)
class Persona:
    """Who the user plays: the name `{{user}}` stands for and an optional description."""

    name: str = "User"
    description: str = ""


@dataclass(frozen=True)
class DepthPrompt:
    """The card's `data.extensions.depth_prompt` (SillyTavern's "Character's Note")."""

    text: str = ""
    depth: int = 4
    role: Role = "system"


@dataclass(frozen=True)
class PromptRequest:
    card: Card
    chat: Chat
    persona: Persona = Persona()
    memory: Injection | None = None  # retrieved memories, placed as the injection says
    generation_type: GenerationType = "normal"
    character: str | None = None  # the card's file name without .png; defaults to its name
    # A group chat: every member's name, in the group's order (the speaker is `card`).
    group: tuple[str, ...] = ()
    # `prompt_messages(chat, generation_type)` when the caller has already read them.
    visible: tuple[ScanMessage, ...] | None = None

    @property
    def metadata(self) -> Mapping[str, Any]:
        return self.chat.header.chat_metadata

    @property
    def scenario(self) -> str:
        """The chat's own scenario (`chat_metadata.scenario`) wins over the card's."""
        override = self.metadata.get("scenario")
        return (override if isinstance(override, str) and override else self.card.scenario).strip()

    @property
    def depth_prompt(self) -> DepthPrompt:
        value = self.card.extensions.get("depth_prompt")
        if not isinstance(value, Mapping):
            return DepthPrompt()
        text, depth, role = value.get("prompt"), value.get("depth"), value.get("role")
        return DepthPrompt(
            text=text.strip() if isinstance(text, str) else "",
            depth=int(depth)
            if isinstance(depth, int | float) and not isinstance(depth, bool)
            else 4,
            role=role if role in ("system", "user", "assistant") else "system",
        )

    def messages(self) -> list[ScanMessage]:
        return list(self._messages)

    @cached_property
    def _messages(self) -> tuple[ScanMessage, ...]:
        # Read once per request: a long chat is walked by the scan and by assembly.
        if self.visible is not None:
            return self.visible
        return tuple(prompt_messages(self.chat, self.generation_type))


def macro_context(request: PromptRequest, *, now: datetime, rng: random.Random) -> MacroContext:
    """The macro values of a request: names, the card's fields, the clock and the dice."""
    card = request.card
    return MacroContext(
        user=request.persona.name,
        char=card.name,
        group=", ".join(request.group),
        rng=rng,
        now=now,
        description=card.description.strip(),
        personality=card.personality.strip(),
        scenario=request.scenario,
        persona=request.persona.description.strip(),
        mes_examples=card.mes_example.strip(),
        char_prompt=card.system_prompt.strip(),
        char_jailbreak=card.post_history_instructions.strip(),
        char_version=card.character_version,
        idle_since=_idle_since(request.chat),
    )


def scan_context(
    request: PromptRequest,
    macros: MacroContext,
    injections: tuple[tuple[str, str], ...] = (),
) -> ScanContext:
    """The World Info scan's view of a request: its messages and the card's fields.

    The first message has its macros replaced first, as SillyTavern does for a greeting.
    """
    messages = request.messages()
    if messages and messages[0].id == 0:
        first = messages[0]
        messages[0] = ScanMessage(first.id, first.name, macros.substitute(first.text))
    card = request.card
    fields = CardFields(
        persona_description=macros.substitute(request.persona.description.strip()),
        character_description=macros.substitute(card.description.strip()),
        character_personality=macros.substitute(card.personality.strip()),
        character_depth_prompt=macros.substitute(request.depth_prompt.text),
        scenario=macros.substitute(request.scenario),
        creator_notes=macros.substitute(card.creator_notes.strip()),
    )
    tags = tuple(card.tags)
    return ScanContext(
        messages=tuple(messages),
        fields=fields,
        injections=injections,
        generation_type=request.generation_type,
        character=request.character or card.name,
        character_tags=tags,
    )


def _idle_since(chat: Chat) -> datetime | None:
    """When the user sent the message before the chat's last one, for `{{idle_duration}}`."""
    passed_last = False
    for message in reversed(chat.messages):
        if message.is_hidden:
            continue
        if message.is_user and passed_last:
            return message.sent_at
        passed_last = True
    return None
