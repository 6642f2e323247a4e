"""The prompt of each chunk of one extraction run, within the model's context.

What stays the same for the whole run is worked out once: the template, the budget
of each prompt part (`core.prompt_budget`) and the card, cut to its share. Per
chunk come the messages, cut to fit when they must, and the existing memories.

Choosing existing memories asks the retrieval index for the ones related to the
chunk, which embeds the chunk's text: the slow part of building a prompt. It is
only needed when the memory file holds more than the budget can show; otherwise
every memory is shown whatever their ranking, and the choice is made once per
version of the file.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from charmemory.core.existing_memories import (
    Candidate,
    SelectedMemories,
    StoredBlock,
    approx_tokens,
    recent_first,
    select_existing,
)
from charmemory.core.extraction_prompt import PromptValues, point_of_view, render_prompt
from charmemory.core.extraction_settings import ExtractionSettings
from charmemory.core.message_cleaning import cleaned_messages, join_messages
from charmemory.core.prompt_budget import (
    Cut,
    fit_messages,
    fit_text,
    section_budget,
)
from charmemory.core.watermark import SourceMessage
from charmemory.ports import Character, ChatMessage, LoadedMemories

# What a chat API adds around each message (role, separators), in tokens.
MESSAGE_OVERHEAD_TOKENS = 8

RelatedLookup = Callable[[LoadedMemories, str], Awaitable[list[Candidate]]]


@dataclass(frozen=True)
class ChunkPrompt:
    messages: list[ChatMessage]
    recent: str  # the chat text sent; empty when nothing in the chunk is left to send
    cuts: list[Cut]  # messages cut to fit


@dataclass
class _Shown:
    """The existing memories of one version of the file, ready to choose from."""

    digest: str | None
    candidates: list[Candidate]
    everything: SelectedMemories  # newest first within the budget, no lookup


class ChunkPrompts:
    def __init__(
        self,
        template: str,
        character: Character,
        user_name: str,
        settings: ExtractionSettings,
        *,
        context_size: int,
        related: RelatedLookup,
        members: Sequence[str] | None = None,
    ):
        """``members``: the group's member names, when the chat is a group chat."""
        self._template = template
        self._point_of_view = point_of_view(character.name, user_name, members)
        self._character = character
        self._user_name = user_name
        self._max_bullets = settings.max_bullets
        self._related = related
        self.budget = section_budget(
            context_size=context_size,
            response_tokens=settings.max_response_tokens,
            template_tokens=self._tokens(self._render("", "", "")),
            memories_budget=settings.existing_memories_budget,
        )
        self.card, self.card_cut = fit_text(
            character.card.baseline_text(), self.budget.card, "the character card"
        )
        self._shown: _Shown | None = None

    async def build(self, part: Sequence[SourceMessage], memories: LoadedMemories) -> ChunkPrompt:
        rendered = cleaned_messages(part, user_name=self._user_name, char_name=self._character.name)
        room = self.budget.available - approx_tokens(self.card)
        query, _ = fit_messages(rendered, room)
        selected = await self._existing(memories, join_messages(query))
        fitted, cuts = fit_messages(rendered, room - selected.tokens)
        recent = join_messages(fitted)
        return ChunkPrompt(self._render(self.card, selected.text, recent), recent, cuts)

    async def _existing(self, memories: LoadedMemories, query: str) -> SelectedMemories:
        shown = self._shown
        if shown is None or shown.digest != memories.version.digest:
            candidates = recent_first(_stored_blocks(memories))
            everything = select_existing(candidates, self.budget.memories)
            shown = self._shown = _Shown(memories.version.digest, candidates, everything)
        if not shown.everything.left_out or not query:
            return shown.everything  # every memory fits: ranking would not change the choice
        related = await self._related(memories, query)
        return select_existing([*related, *shown.candidates], self.budget.memories)

    def _render(self, card: str, existing: str, recent: str) -> list[ChatMessage]:
        return [
            ChatMessage(role, content)  # type: ignore[arg-type]
            for role, content in render_prompt(
                self._template,
                PromptValues(
                    char=self._character.name,
                    user=self._user_name,
                    char_card=card,
                    existing_memories=existing,
                    recent_messages=recent,
                    max_bullets=self._max_bullets,
                    point_of_view=self._point_of_view,
                ),
            )
        ]

    @staticmethod
    def _tokens(messages: list[ChatMessage]) -> int:
        return sum(approx_tokens(m.content) + MESSAGE_OVERHEAD_TOKENS for m in messages)


def _stored_blocks(memories: LoadedMemories) -> list[StoredBlock]:
    return [
        StoredBlock(position, block.date or "", tuple(b.text for b in block.bullets))
        for position, block in enumerate(memories.memories.blocks)
    ]
