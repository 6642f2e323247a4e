"""The prompt a character answers from, in SillyTavern's default Chat Completion order.

Sections, each its own message and left out when empty: the main prompt (the
card's system prompt replaces it unless overrides are forbidden; `{{original}}`
in it stands for the main prompt), World Info before, the persona description,
the character's description, personality and scenario, World Info after, the
dialogue examples (each block opened by an `[Example Chat]` system message),
the chat history (opened by `[Start a new Chat]`, with the Author's Note, the
retrieved memories, the card's depth prompt and World Info @depth entries
injected at their depths), and the post-history instructions (which the card
may also override). In a group chat the speaker's card is the card, the history
opens with `[Start a new group chat. Group members: {{group}}]`, every line but
the user's is prefixed with its speaker's name, and a nudge to write only as
the speaker closes the history. The Author's Note and the memories may instead sit just
after (`in_prompt`) or before (`before_prompt`) the main prompt. Every text has
its macros replaced. Optionally, runs of system messages are squashed.

`build_prompt` runs the whole step: World Info, then assembly. `assemble_prompt`
assembles from a World Info placement computed elsewhere.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from charmemory.core.injection import TokenCounter, approximate_tokens
from charmemory.core.prompt import messages as section
from charmemory.core.prompt.authors_note import (
    authors_note_due,
    authors_note_from_metadata,
    authors_note_text,
)
from charmemory.core.prompt.examples import example_blocks, example_messages
from charmemory.core.prompt.fitting import fit_to_budget
from charmemory.core.prompt.injections import (
    AUTHORS_NOTE_KEY,
    DEPTH_PROMPT_KEY,
    MAX_INJECTION_DEPTH,
    MEMORY_KEY,
    ChatInjection,
    insert_injections,
    world_info_key,
)
from charmemory.core.prompt.macros import MacroContext
from charmemory.core.prompt.messages import PromptMessage, squash_system_messages
from charmemory.core.prompt.request import PromptRequest, macro_context, scan_context
from charmemory.core.prompt.settings import DEFAULT_PROMPT_SETTINGS, PromptSettings
from charmemory.core.world_info.activation import WorldInfoResult, activate_world_info
from charmemory.core.world_info.candidates import Candidates
from charmemory.core.world_info.entries import Role
from charmemory.core.world_info.placement import WorldInfoPlacement
from charmemory.core.world_info.settings import DEFAULT_WORLD_INFO_SETTINGS, WorldInfoSettings
from charmemory.core.world_info.timed import TIMED_KEY

LAST_IN_CONTEXT_KEY = "lastInContextMessageId"


@dataclass(frozen=True)
class AssembledPrompt:
    messages: tuple[PromptMessage, ...]
    tokens: int  # the whole prompt, reply priming included
    section_tokens: Mapping[str, int]  # before squashing
    budget: int  # the context size less the response length
    last_in_context_message_id: int | None  # the oldest chat message in the prompt
    dropped_message_ids: tuple[int, ...]  # chat messages left out for lack of room


@dataclass(frozen=True)
class GenerationPrompt:
    prompt: AssembledPrompt
    world_info: WorldInfoResult = field(repr=False)

    @property
    def metadata_updates(self) -> dict[str, Any]:
        """What to store in the chat's `chat_metadata` once the generation is sent."""
        updates: dict[str, Any] = {TIMED_KEY: self.world_info.timed_state}
        if self.prompt.last_in_context_message_id is not None:
            updates[LAST_IN_CONTEXT_KEY] = self.prompt.last_in_context_message_id
        return updates


def build_prompt(
    request: PromptRequest,
    lore: Candidates,
    *,
    rng: random.Random,
    now: datetime,
    settings: PromptSettings = DEFAULT_PROMPT_SETTINGS,
    world_info: WorldInfoSettings = DEFAULT_WORLD_INFO_SETTINGS,
    count_tokens: TokenCounter = approximate_tokens,
    vector_scores: Mapping[tuple[str, int], float] | None = None,
) -> GenerationPrompt:
    """Activate World Info for `request` and assemble its prompt."""
    macros = macro_context(request, now=now, rng=rng)
    note = authors_note_from_metadata(request.metadata, settings.authors_note)
    scanned: tuple[tuple[str, str], ...] = ()
    if world_info.scan_injections:
        due = authors_note_due(note, request.chat)
        scanned = (
            ("Author's Note", macros.substitute(note.text) if due else ""),
            ("character depth prompt", macros.substitute(request.depth_prompt.text)),
        )
    result = activate_world_info(
        lore,
        scan_context(request, macros, scanned),
        max_context=settings.prompt_budget,
        rng=rng,
        settings=world_info,
        count_tokens=count_tokens,
        substitute=macros.substitute,
        timed_state=request.metadata.get(TIMED_KEY),
        vector_scores=vector_scores,
    )
    prompt = assemble_prompt(
        request, result.placement, macros, settings=settings, count_tokens=count_tokens
    )
    return GenerationPrompt(prompt, result)


def assemble_prompt(
    request: PromptRequest,
    placement: WorldInfoPlacement,
    macros: MacroContext,
    *,
    settings: PromptSettings = DEFAULT_PROMPT_SETTINGS,
    count_tokens: TokenCounter = approximate_tokens,
) -> AssembledPrompt:
    return _Assembly(
        request, placement, macros.with_outlets(placement.outlets), settings, count_tokens
    ).run()


class _Assembly:
    def __init__(
        self,
        request: PromptRequest,
        placement: WorldInfoPlacement,
        macros: MacroContext,
        settings: PromptSettings,
        count_tokens: TokenCounter,
    ) -> None:
        self.request = request
        self.placement = placement
        self.macros = macros
        self.settings = settings
        self.count = count_tokens
        note = authors_note_from_metadata(request.metadata, settings.authors_note)
        self.note = note
        self.note_text = ""
        if authors_note_due(note, request.chat):
            top, bottom = placement.authors_note_top, placement.authors_note_bottom
            self.note_text = authors_note_text(note, top, bottom)

    def run(self) -> AssembledPrompt:
        settings = self.settings
        head = self._head()
        in_group = bool(self.request.group)
        nudge = (
            self._message(
                "system", settings.group_nudge_prompt, section.CHAT_HISTORY, (section.GROUP_NUDGE,)
            )
            if in_group
            else None
        )
        tail = [m for m in (nudge, self._post_history()) if m is not None]
        new_chat = self._message(
            "system",
            settings.new_group_chat_prompt if in_group else settings.new_chat_prompt,
            section.CHAT_HISTORY,
            (section.NEW_CHAT,),
        )
        budget = settings.prompt_budget - settings.reply_priming_tokens
        history = self._history()
        fitted = fit_to_budget(
            budget,
            [*head, *tail],
            new_chat,
            history,
            self._example_blocks(),
            pin_examples=settings.pin_examples,
        )
        kept = [m for m in (new_chat, *fitted.history) if m is not None]
        messages = [*head, *fitted.examples, *kept, *tail]
        totals: dict[str, int] = {}
        for message in messages:
            totals[message.section] = totals.get(message.section, 0) + message.tokens
        if settings.squash_system_messages:
            messages = squash_system_messages(messages, self._tokens)
        included = [m.message_id for m in fitted.history if m.message_id is not None]
        offered = [m.id for m in self.request.messages()]
        kept_ids = set(included)
        return AssembledPrompt(
            messages=tuple(messages),
            tokens=sum(m.tokens for m in messages) + settings.reply_priming_tokens,
            section_tokens=totals,
            budget=settings.prompt_budget,
            last_in_context_message_id=min(included, default=None),
            dropped_message_ids=tuple(i for i in offered if i not in kept_ids),
        )

    # -- the parts ----------------------------------------------------------------------

    def _head(self) -> list[PromptMessage]:
        """Everything before the examples, in prompt order."""
        card = self.request.card
        settings = self.settings
        before, after = self._around_main()
        main = [m for m in (self._main(),) if m is not None]
        personality = settings.personality_format if card.personality.strip() else ""
        scenario = settings.scenario_format if self.request.scenario else ""
        sections = self._sections(
            [
                (section.WORLD_INFO_BEFORE, self._world_info(self.placement.before)),
                (section.PERSONA_DESCRIPTION, self.request.persona.description.strip()),
                (section.CHAR_DESCRIPTION, card.description.strip()),
                (section.CHAR_PERSONALITY, personality),
                (section.SCENARIO, scenario),
                (section.WORLD_INFO_AFTER, self._world_info(self.placement.after)),
            ]
        )
        return [*before, *main, *after, *sections]

    def _around_main(self) -> tuple[list[PromptMessage], list[PromptMessage]]:
        """The Author's Note and the memories placed before or after the main prompt.

        After it they come in that order; before it, each is put at the very top,
        so the memories come first (SillyTavern inserts the note first).
        """
        placed = [(section.AUTHORS_NOTE, self.note_text, self.note.position, self.note.role)]
        memory = self.request.memory
        if memory is not None:
            placed.append((section.MEMORY, memory.text, memory.position, memory.role))
        before: list[PromptMessage] = []
        after: list[PromptMessage] = []
        for name, text, position, role in placed:
            message = None if position == "in_chat" else self._message(role, text, name, (name,))
            if message is None:
                continue
            if position == "in_prompt":
                after.append(message)
            else:
                before.insert(0, message)
        return before, after

    def _main(self) -> PromptMessage | None:
        """The main prompt, or the card's system prompt in its place."""
        return self._overridable(
            section.MAIN_PROMPT, self.settings.main_prompt, self.request.card.system_prompt
        )

    def _post_history(self) -> PromptMessage | None:
        return self._overridable(
            section.POST_HISTORY_INSTRUCTIONS,
            self.settings.post_history_instructions,
            self.request.card.post_history_instructions,
        )

    def _overridable(self, name: str, preset: str, card_text: str) -> PromptMessage | None:
        override = card_text.strip()
        if override and not self.settings.forbid_card_overrides:
            return self._message("system", override, name, original=preset)
        return self._message("system", preset, name)

    def _world_info(self, text: str) -> str:
        layout = self.settings.world_info_format
        if not text or not layout.strip():
            return text
        return layout.replace("{0}", text)

    def _sections(self, parts: list[tuple[str, str]]) -> list[PromptMessage]:
        found = (self._message("system", text, name) for name, text in parts)
        return [message for message in found if message is not None]

    def _example_blocks(self) -> list[list[PromptMessage]]:
        texts = [
            *self.placement.examples_before,
            self.request.card.mes_example.strip(),
            *self.placement.examples_after,
        ]
        user, char = self.macros.user, self.macros.char
        blocks = []
        for text in texts:
            for block in example_blocks(self.macros.substitute(text)):
                marker = self._message(
                    "system",
                    self.settings.new_example_chat_prompt,
                    section.DIALOGUE_EXAMPLES,
                    (section.NEW_EXAMPLE_CHAT,),
                )
                lines = [
                    self._counted(
                        PromptMessage(
                            "system",
                            item.content,
                            (section.DIALOGUE_EXAMPLES,),
                            ("example",),
                            item.name,
                        )
                    )
                    for item in example_messages(block, user, char)
                ]
                if marker is not None:
                    blocks.append([marker, *lines])
        return blocks

    def _history(self) -> list[PromptMessage]:
        """The chat messages that can still fit, oldest first, with the injections in place.

        Messages are taken from the newest back until they alone exceed the whole
        prompt budget (older ones could never be kept, as fitting stops at the first
        that does not fit), and at least as deep as the deepest injection, so a long
        chat costs what fits, not its length.
        """
        chat = self.request.chat
        injections = self._injections()
        deepest = max(
            (i.depth for i in injections if 0 <= i.depth <= MAX_INJECTION_DEPTH), default=0
        )
        budget = self.settings.prompt_budget
        history: list[PromptMessage] = []
        used = 0
        for seen in reversed(self.request.messages()):
            if used > budget and len(history) > deepest:
                break
            message = chat.messages[seen.id]
            speaker = message.role
            role: Role = (
                "system" if speaker == "narrator" else "user" if speaker == "user" else "assistant"
            )
            text = self._named(message.name, seen.text, speaker, message.data.get("force_avatar"))
            content = self.macros.substitute(text.replace("\r", ""))
            counted = PromptMessage(
                role,
                content,
                (section.CHAT_HISTORY,),
                ("chat",),
                message_id=seen.id,
                tokens=self._tokens_of(content, None),
            )
            used += counted.tokens
            history.append(counted)
        history.reverse()
        injected = insert_injections(history, injections, self.macros.substitute)
        return [m if m.tokens else self._counted(m) for m in injected]

    def _named(self, name: str, text: str, role: str, force_avatar: Any) -> str:
        behavior = self.settings.names_behavior
        if behavior == "none":
            return text
        if behavior == "default" and self.request.group and name != self.macros.user:
            return f"{name}: {text}"  # in a group every line but the user's says who spoke
        if role == "narrator":
            return text
        if behavior == "content" or (force_avatar and name != self.macros.user):
            return f"{name}: {text}"
        return text

    def _injections(self) -> list[ChatInjection]:
        injections = []
        if self.note_text and self.note.position == "in_chat":
            note = self.note
            injections.append(
                ChatInjection(
                    note.depth, note.role, self.note_text, section.AUTHORS_NOTE, AUTHORS_NOTE_KEY
                )
            )
        memory = self.request.memory
        if memory is not None and memory.text and memory.position == "in_chat":
            injections.append(
                ChatInjection(memory.depth, memory.role, memory.text, section.MEMORY, MEMORY_KEY)
            )
        depth_prompt = self.request.depth_prompt
        if depth_prompt.text:
            injections.append(
                ChatInjection(
                    depth_prompt.depth,
                    depth_prompt.role,
                    depth_prompt.text,
                    "depth_prompt",
                    DEPTH_PROMPT_KEY,
                )
            )
        for item in self.placement.at_depth:
            injections.append(
                ChatInjection(
                    item.depth,
                    item.role,
                    item.text,
                    "world_info",
                    world_info_key(item.depth, item.role),
                )
            )
        return injections

    # -- messages and tokens ------------------------------------------------------------

    def _message(
        self,
        role: Role,
        text: str,
        name: str,
        sources: tuple[str, ...] = (),
        original: str | None = None,
    ) -> PromptMessage | None:
        content = self.macros.substitute(text, original)
        if not content:
            return None
        return self._counted(PromptMessage(role, content, (name,), sources))

    def _counted(self, message: PromptMessage) -> PromptMessage:
        return replace(message, tokens=self._tokens(message))

    def _tokens(self, message: PromptMessage) -> int:
        return self._tokens_of(message.content, message.name)

    def _tokens_of(self, content: str, name: str | None) -> int:
        overhead = self.settings.tokens_per_message
        if name:
            overhead += self.settings.tokens_per_name
        return self.count(content) + overhead
