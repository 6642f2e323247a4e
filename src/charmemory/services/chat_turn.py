"""One turn of a chat: the prompt, the streamed reply, the saved reply, its record.

One turn, as a pipeline: take the chat as it stands, retrieve the memories that
fit its last messages, activate World Info, assemble the prompt (see
`prompting`), stream the reply from the model, save it in SillyTavern's format
with what was given recorded for `diagnose`, and let automatic extraction run in
the background. A chat that another program changed while a reply was generated
is not overwritten (`chat_writes`).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from charmemory.core.chat import editing
from charmemory.core.chat.diagnostics import GenerationRecord, bound_lorebooks, prompt_parts
from charmemory.core.chat.messages import Generated, character_reply, in_group, iso_time
from charmemory.core.narrator.stamps import CastSnapshot, stamp, unstamp
from charmemory.core.prompt import Persona
from charmemory.core.triggers import group_outcome
from charmemory.errors import ConflictError
from charmemory.formats.chat import Chat, Message
from charmemory.ports import Character, ChatModel, ChatRef, GenerationLog, LoadedChat, StreamDelta
from charmemory.services.chat_background import BackgroundWork
from charmemory.services.chat_writes import AsRead, as_read, write_merging
from charmemory.services.memory_access import MemoryLocator
from charmemory.services.narrator import NarratorService
from charmemory.services.prompting import PreparedPrompt, PromptPreparer
from charmemory.services.settings import SettingsService

Kind = Literal["normal", "swipe", "regenerate", "continue"]
OnDelta = Callable[[StreamDelta], object]
STOPPED = "stopped"  # `extra` key marking a reply cut short by the user


@dataclass(frozen=True)
class Turn:
    """One reply, as saved, with what it was given."""

    chat: str
    index: int  # the reply's message index
    reply: str
    reasoning: str
    kind: Kind
    memories: list[dict[str, Any]]
    world_info: list[dict[str, Any]]
    extraction: str  # none | started | skipped: <reason> (core.triggers)
    generation: int  # the diagnostics record's number
    finish_reason: str | None = None
    stopped: bool = False
    # In a group chat, each member's own outcome (`extraction` sums them up).
    extraction_members: dict[str, str] = field(default_factory=dict)


class _PendingSave:
    """The user's message, written while the model works on the reply.

    Writing a long chat holds the interpreter for milliseconds, so it starts once
    the prompt is ready (the model's first token is then the longest wait), not
    while charmemory prepares the prompt.
    """

    def __init__(self, write: Callable[[], LoadedChat]):
        self._write = write
        self._task: asyncio.Task[LoadedChat] | None = None

    def start(self) -> asyncio.Task[LoadedChat]:
        if self._task is None:
            self._task = asyncio.create_task(asyncio.to_thread(self._write))
        return self._task

    async def written(self) -> LoadedChat:
        return await self.start()

    async def settled(self) -> None:
        """Started if it was not, and finished; its failure is `written`'s to tell."""
        task = self.start()
        if not task.done():
            await asyncio.wait([task])


class TurnRunner:
    """Makes a reply to a chat already read and locked by the caller."""

    def __init__(
        self,
        locator: MemoryLocator,
        preparer: PromptPreparer,
        generations: GenerationLog,
        settings: SettingsService,
        background: BackgroundWork,
        *,
        model_for: Callable[[str], ChatModel],
        clock: Callable[[], datetime],
        narrator: NarratorService | None = None,
    ):
        self._locator = locator
        self._library = locator.library
        self._preparer = preparer
        self._generations = generations
        self._settings = settings
        self._background = background
        self._model_for = model_for
        self._clock = clock
        self._narrator = narrator

    def prefetch(self, ref: ChatRef, text: str) -> None:
        """Start embedding ``text``, the message the user is sending, for the reply's query."""
        self._preparer.prefetch(self._locator.for_chat(ref.character, ref), text)

    async def answer(
        self,
        loaded: LoadedChat,
        message: Message,
        on_delta: OnDelta | None,
        stop: asyncio.Event | None,
        persona: Persona | None = None,
    ) -> Turn:
        """The user's ``message`` appended to the chat, then the character's reply; the
        message is written while the model works, even when no reply could be made.
        ``persona``: `PromptPreparer.persona` of the chat, which the message sent under
        its name leaves as it was, so the prompt need not work it out again."""
        if self._narrator is not None:
            self._narrator.stamp_sent(loaded.ref, loaded.chat, message)
        before = as_read(loaded.chat, 0)
        loaded.chat.append(message)
        saving = _PendingSave(lambda: self._write_sent(loaded, message, before))
        try:
            return await self.run(loaded, "normal", on_delta, stop, saving, persona=persona)
        finally:
            await saving.settled()

    async def run(
        self,
        loaded: LoadedChat,
        kind: Kind,
        on_delta: OnDelta | None,
        stop: asyncio.Event | None,
        saving: _PendingSave | None = None,
        *,
        batch: int | None = None,
        persona: Persona | None = None,
    ) -> Turn:
        """A reply of ``kind`` to the chat as read (`normal` appends one; `swipe` and
        `continue` change the last); in a group round, replies drafted together share
        ``batch``. ``persona``: the chat's, when the caller has it already."""
        character = loaded.ref.character
        group = loaded.ref.group
        location = self._locator.for_chat(character, loaded.ref)
        model_settings = self._settings.model(character=character.name)
        # The active cast as the generation starts governs it, whatever changes meanwhile.
        cast = self.snapshot(loaded.ref, loaded.chat)
        prepared = await self._preparer.prepare(
            character,
            loaded.chat,
            location,
            model_settings,
            kind="swipe" if kind == "swipe" else "continue" if kind == "continue" else "normal",
            group=group.members if group is not None else (),
            cast=cast,
            persona=persona,
        )
        if saving is not None:
            saving.start()
        model = self._model_for(character.name)
        started = self._clock()
        clock_start = time.perf_counter()
        text, reasoning, finish, first_token_ms, stopped = await self._stream(
            model, prepared, on_delta, stop
        )
        finished = self._clock()
        stamps: dict[str, Any] = {STOPPED: True} if stopped else {}
        if group is not None:
            # SillyTavern's group_generation_id: one per round of replies.
            stamps["gen_id"] = batch if batch is not None else round(started.timestamp() * 1000)
        generated = Generated(
            text,
            started,
            finished,
            model.provider,
            model.model,
            reasoning,
            stamps,
        )
        timings = {
            **prepared.timings,
            "first_token_ms": first_token_ms,
            "generation_ms": round((time.perf_counter() - clock_start) * 1000, 2),
        }
        try:
            if saving is not None:
                loaded = await saving.written()  # the user's message, written meanwhile
            saved, index = self._save_reply(loaded, kind, character, generated, prepared, cast)
        except ConflictError as error:
            self._record(
                loaded.ref, kind, prepared, generated, timings, finish, None, str(error), cast
            )
            raise ConflictError(
                f"{error}; the reply was not saved (it is kept: charmemory diagnose "
                f"{character.name!r} --raw)"
            ) from None
        # The next turn's query holds this reply: embedded now, while the user reads it.
        self._preparer.prefetch(location, saved.chat.messages[index].active_text)
        number = self._record(
            saved.ref, kind, prepared, generated, timings, finish, index, None, cast
        )
        outcomes = self._background.trigger_extraction(character, saved.ref)
        self._background.follow_reply(saved.ref)
        return Turn(
            saved.ref.id,
            index,
            saved.chat.messages[index].mes,
            reasoning,
            kind,
            memories_of(prepared),
            activated_lore(prepared),
            group_outcome(outcomes) if group is not None else outcomes[character.name],
            number,
            finish,
            stopped,
            outcomes if group is not None else {},
        )

    async def _stream(
        self,
        model: ChatModel,
        prepared: PreparedPrompt,
        on_delta: OnDelta | None,
        stop: asyncio.Event | None,
    ) -> tuple[str, str, str | None, float | None, bool]:
        text: list[str] = []
        reasoning: list[str] = []
        finish: str | None = None
        first: float | None = None
        started = time.perf_counter()
        stream = model.stream(
            prepared.messages,
            max_tokens=prepared.model.max_tokens,
            temperature=prepared.model.temperature,
        )
        stopped = False
        try:
            async for delta in stream:
                if stop is not None and stop.is_set():
                    stopped = True
                    break
                if first is None and (delta.text or delta.reasoning):
                    first = round((time.perf_counter() - started) * 1000, 2)
                text.append(delta.text)
                reasoning.append(delta.reasoning)
                finish = delta.finish_reason or finish
                if on_delta is not None:
                    on_delta(delta)
        finally:
            await stream.aclose()
        return "".join(text), "".join(reasoning), finish, first, stopped

    def _save_reply(
        self,
        loaded: LoadedChat,
        kind: Kind,
        character: Character,
        generated: Generated,
        prepared: PreparedPrompt,
        cast: CastSnapshot | None,
    ) -> tuple[LoadedChat, int]:
        """Write the reply into the chat as read; refused if its messages changed meanwhile."""

        def put(chat: Chat) -> int:
            if kind == "swipe":
                index, message = editing.last_reply(chat)
                editing.add_swipe(message, generated)
            elif kind == "continue":
                index, message = editing.last_reply(chat)
                editing.continue_reply(message, generated)
            else:
                index = chat.append(character_reply(character.name, generated))
                message = chat.messages[index]
                if loaded.ref.group is not None:
                    in_group(message, character.card_path.name)
            if cast is not None:
                stamp(message, cast.member_ids, merge=kind == "continue")
            elif kind == "swipe":
                unstamp(message)  # the swipe it replaced may have had one
            for key, value in prepared.built.metadata_updates.items():
                chat.header.set_metadata(key, value)
            return index

        before = as_read(loaded.chat, 0 if kind in ("normal", "regenerate") else 1)
        return write_merging(self._library, loaded, put, before, put(loaded.chat))

    def _write_sent(self, loaded: LoadedChat, message: Message, before: AsRead) -> LoadedChat:
        return write_merging(self._library, loaded, lambda c: c.append(message), before, None)[0]

    def _record(
        self,
        ref: ChatRef,
        kind: Kind,
        prepared: PreparedPrompt,
        generated: Generated,
        timings: dict[str, float],
        finish: str | None,
        index: int | None,
        error: str | None,
        cast: CastSnapshot | None = None,
    ) -> int:
        parts = prompt_parts(prepared.built)
        memories = prepared.memories
        record = GenerationRecord(
            character=ref.character.name,
            chat=ref.id,
            at=iso_time(generated.finished),
            kind=kind,
            model=f"{generated.api}/{generated.model}",
            prompt=parts.prompt,
            memory_query=memories.query if memories else "",
            memories=memories_of(prepared),
            world_info=parts.world_info,
            tokens=parts.tokens,
            timings=timings,
            lorebooks=bound_lorebooks(prepared.lore.books, prepared.lore.named_books),
            missing_lorebooks=list(prepared.lore.missing),
            reply=generated.text,
            reasoning=generated.reasoning,
            finish_reason=finish,
            message_index=index,
            error=error,
            narrator_cast=None if cast is None else list(cast.member_ids),
        )
        keep = int(self._settings.value("chat.diagnostics_kept", ref.character.name))
        return self._generations.record(record, keep=keep)

    def snapshot(self, ref: ChatRef, chat: Chat) -> CastSnapshot | None:
        """The narrator chat's active cast as a generation starts (None outside one)."""
        return None if self._narrator is None else self._narrator.snapshot(ref, chat)


def memories_of(prepared: PreparedPrompt) -> list[dict[str, Any]]:
    memories = prepared.memories
    if memories is None:
        return []
    included = set(memories.injection.included)
    return [
        {
            "id": r.id,
            "text": r.text,
            "score": round(r.score, 6),
            "cosine": round(r.cosine, 6),
            "bm25": None if r.bm25 is None else round(r.bm25, 6),
        }
        for r in memories.results
        if r.id in included
    ]


def activated_lore(prepared: PreparedPrompt) -> list[dict[str, Any]]:
    return [
        {"book": e.book, "uid": e.uid, "comment": e.comment, "why": e.text}
        for e in prepared.built.world_info.explanations()
        if e.activated
    ]
