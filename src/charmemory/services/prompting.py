"""Everything a reply is generated from: memories retrieved, World Info activated, prompt built.

The steps, each timed for diagnostics: retrieve the character's memories for the
chat's last messages (when it has memories and an index), gather and activate
its lorebooks, and assemble the prompt in SillyTavern's order. Nothing here
changes the chat; the chat service saves the reply and the metadata updates.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, datetime

from charmemory.core.chat_query import query_messages, query_texts
from charmemory.core.chat_user import DEFAULT_USER_NAME, named_chat_user
from charmemory.core.injection import Injection
from charmemory.core.memory_location import MemoryLocation
from charmemory.core.model_settings import ModelSettings
from charmemory.core.narrator.stamps import CastSnapshot
from charmemory.core.prompt import GenerationPrompt, Persona, PromptRequest, build_prompt
from charmemory.core.prompt.settings import SETTINGS as PROMPT_SETTINGS
from charmemory.core.prompt.settings import prompt_settings
from charmemory.core.time_question import chat_day
from charmemory.core.world_info import GenerationType, prompt_messages
from charmemory.core.world_info.settings import SETTINGS as WORLD_INFO_SETTINGS
from charmemory.core.world_info.settings import world_info_settings
from charmemory.errors import CharMemoryError
from charmemory.formats.chat import Chat
from charmemory.ports import Character, ChatMessage, MemoryFileStore, TokenCounter
from charmemory.services.lore import GatheredLore, LoreGatherer
from charmemory.services.retrieval import Retrieval, RetrievalService
from charmemory.services.settings import SettingsService


@dataclass(frozen=True)
class PreparedPrompt:
    messages: list[ChatMessage]
    built: GenerationPrompt
    lore: GatheredLore
    memories: Retrieval | None
    model: ModelSettings
    persona: Persona
    timings: dict[str, float] = field(default_factory=dict)


class PromptPreparer:
    def __init__(
        self,
        settings: SettingsService,
        files: MemoryFileStore,
        lore: LoreGatherer,
        retrieval: Callable[[], RetrievalService | None],
        count_tokens: Callable[[], TokenCounter],
        *,
        clock: Callable[[], datetime],
        rng: Callable[[], random.Random] = random.Random,
    ):
        self._settings = settings
        self._files = files
        self._lore = lore
        self._retrieval = retrieval
        self._count_tokens = count_tokens
        self._clock = clock
        self._rng = rng
        self._synced: dict[str, str | None] = {}  # memory file -> digest its index holds

    async def prepare(
        self,
        character: Character,
        chat: Chat,
        location: MemoryLocation,
        model: ModelSettings,
        *,
        kind: GenerationType = "normal",
        group: tuple[str, ...] = (),
        cast: CastSnapshot | None = None,
        persona: Persona | None = None,
    ) -> PreparedPrompt:
        """The prompt for the next reply to ``chat`` (as it stands: without a replaced reply).

        In a group chat, ``group`` names every member and ``character`` is the speaker.
        In a narrator chat, ``cast`` is the generation's snapshot of the active cast.
        ``persona``: `persona(chat)` when the caller has it already.
        """
        timings: dict[str, float] = {}
        started = time.perf_counter()
        visible = tuple(prompt_messages(chat, kind))  # read once: retrieval and the prompt
        memories = await self._retrieve(location, query_texts(chat, visible), chat_day(chat))
        timings["retrieval_ms"] = _ms(started)
        persona = persona or self.persona(chat)
        injection: Injection | None = memories.injection if memories else None
        request = PromptRequest(
            character.card,
            chat,
            persona,
            memory=injection if injection and injection.text else None,
            generation_type=kind,
            character=character.stem,
            group=group,
            visible=visible,
        )
        step = time.perf_counter()
        world_info = world_info_settings(self._settings.values(WORLD_INFO_SETTINGS, character.name))
        lore = self._lore.gather(character, chat, world_info, cast=cast)
        scores = await self._lore.vector_scores(
            lore, lore.candidates, _scan_text(request, world_info.scan_depth)
        )
        timings["lore_ms"] = _ms(step)
        step = time.perf_counter()
        settings = prompt_settings(
            self._settings.values(PROMPT_SETTINGS, character.name),
            context_size=model.context_size,
            response_length=model.max_tokens,
        )
        built = build_prompt(
            request,
            lore.candidates,
            rng=self._rng(),
            now=self._clock(),
            settings=settings,
            world_info=world_info,
            count_tokens=self._count_tokens(),
            vector_scores=scores,
        )
        timings["assembly_ms"] = _ms(step)
        timings["prepare_ms"] = _ms(started)
        messages = [ChatMessage(m.role, m.content) for m in built.prompt.messages]
        return PreparedPrompt(messages, built, lore, memories, model, persona, timings)

    def persona(self, chat: Chat, *, known_as: Callable[[], str | None] | None = None) -> Persona:
        """Who the user plays in ``chat``: the persona set, else the chat's user.

        ``known_as``: where to look when neither names them (a new chat: the name the
        user goes by in the character's other chats), asked only then.
        """
        description = str(self._settings.value("persona.description") or "")
        # A persona the user named wins; otherwise the name the chat's user goes by.
        if self._settings.origin("persona.name") != "default":
            name = str(self._settings.value("persona.name"))
        else:
            name = named_chat_user(chat) or (known_as and known_as()) or DEFAULT_USER_NAME
        return Persona(name=name, description=description)

    def prefetch(self, location: MemoryLocation, message: str) -> None:
        """Start embedding ``message`` for the coming memory queries that hold it (the
        user's message as it is sent, a reply as it is written); returns at once. It
        never fails: what stops it (no model, a setting that names none) stops the query
        too, which says so where it is asked."""
        try:
            retrieval = self._retrieval()
            if retrieval is not None and self._files.digest(location.file) is not None:
                retrieval.prefetch(location.collection, message)
        except CharMemoryError:
            return

    async def memories(
        self, chat: Chat, location: MemoryLocation, kind: GenerationType = "normal"
    ) -> Retrieval | None:
        """The memories retrieved for the chat's last messages (None: no memory file or index)."""
        return await self._retrieve(location, query_messages(chat, kind), chat_day(chat))

    async def _retrieve(
        self, location: MemoryLocation, texts: list[str], now: date | None
    ) -> Retrieval | None:
        retrieval = self._retrieval()
        digest = self._files.digest(location.file)
        if retrieval is None or digest is None:
            return None
        if self._synced.get(location.file) != digest:
            # Read and index the file only when it changed since the last turn.
            loaded = self._files.load(location.file)
            await retrieval.sync_file(location.collection, loaded.file, loaded.memories)
            self._synced[location.file] = loaded.version.digest
        return await retrieval.retrieve_for_chat(location.collection, texts, now=now)


def _scan_text(request: PromptRequest, depth: int) -> str:
    """The newest messages World Info scans, as the query for vectorized entries."""
    messages = request.messages()[-depth:] if depth else []
    return "\n".join(message.text for message in reversed(messages))


def _ms(since: float) -> float:
    return round((time.perf_counter() - since) * 1000, 2)
