"""Chatting with a character who remembers: the generation loop and every chat operation.

One turn, as a pipeline: take the chat as it stands, retrieve the memories that
fit its last messages, activate World Info, assemble the prompt (see
`prompting`), stream the reply from the model, save it in SillyTavern's format
with what was given recorded for `diagnose`, and let automatic extraction run in
the background. Operations on one chat are serialised; a chat that another
program changed while a reply was generated is not overwritten.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from charmemory.core.chat import editing
from charmemory.core.chat.diagnostics import GenerationRecord, bound_lorebooks, prompt_parts
from charmemory.core.chat.messages import (
    Generated,
    character_reply,
    greeting,
    in_group,
    iso_time,
    new_chat_header,
    user_message,
)
from charmemory.core.model_settings import ModelSettings
from charmemory.core.narrator.stamps import CastSnapshot, stamp, unstamp
from charmemory.core.triggers import (
    group_outcome,
)
from charmemory.errors import CharMemoryError, ConfigError, ConflictError, NotFoundError
from charmemory.formats.chat import Chat, Message, MessagePage
from charmemory.formats.chat_name import chat_file_name
from charmemory.ports import (
    ActivityRecorder,
    Character,
    ChatModel,
    ChatRef,
    GenerationLog,
    LoadedChat,
    StreamDelta,
)
from charmemory.services.chat_background import AfterReply, BackgroundWork
from charmemory.services.chat_edits import AfterBranch, ChatEditor
from charmemory.services.chat_writes import AsRead, as_read, write_merging
from charmemory.services.extraction import ExtractionService
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


class ChatService:
    def __init__(
        self,
        locator: MemoryLocator,
        preparer: PromptPreparer,
        generations: GenerationLog,
        settings: SettingsService,
        extraction: ExtractionService,
        activity: ActivityRecorder,
        *,
        model_for: Callable[[str], ChatModel],
        clock: Callable[[], datetime],
        after_reply: AfterReply | None = None,
        after_branch: AfterBranch | None = None,
        narrator: NarratorService | None = None,
    ):
        self._locator = locator
        self._library = locator.library
        self._preparer = preparer
        self._generations = generations
        self._settings = settings
        self._activity = activity
        self._model_for = model_for
        self._clock = clock
        self._locks: dict[Path, asyncio.Lock] = {}
        self._background = BackgroundWork(
            self._library, extraction, activity, chat_lock=self.chat_lock, after_reply=after_reply
        )
        self._editor = ChatEditor(
            self._library,
            chat_ref=self.chat_ref,
            chat_lock=self.chat_lock,
            narrator=narrator,
            after_branch=after_branch,
        )
        self._narrator = narrator

    # -- chats ------------------------------------------------------------------------

    def new_chat(self, character_name: str) -> LoadedChat:
        """A new chat opening with the card's greeting (alternate greetings as swipes)."""
        character = self._library.character(character_name)
        chat_id, chat = self._fresh_chat(character)
        loaded = self._library.create_chat(character, chat_id, chat)
        self._activity.record(
            "chat.new", f"new chat {chat_id}", character=character.name, chat=chat_id
        )
        return loaded

    def _fresh_chat(self, character: Character) -> tuple[str, Chat]:
        now = self._clock()
        chat_id = chat_file_name(character.name, now.astimezone()).removesuffix(".jsonl")
        header = new_chat_header()
        card = character.card
        messages = []
        if card.first_mes or card.alternate_greetings:
            messages.append(greeting(character.name, card.first_mes, card.alternate_greetings, now))
        return chat_id, Chat(header, messages)

    def open_chat(
        self, character_name: str, chat_id: str | None = None, *, new: bool = False
    ) -> LoadedChat:
        """A chat by id, a new one, or the character's latest (a new one if it has none)."""
        return self._library.load_chat(self.chat_ref(character_name, chat_id, new=new))

    def message_page(
        self, character_name: str, chat_id: str, *, before: int | None = None, count: int = 50
    ) -> tuple[ChatRef, MessagePage]:
        """A page of the chat's messages (the newest, or those before ``before``)."""
        ref = self._library.chat(self._library.character(character_name), chat_id)
        return ref, self._library.message_page(ref, before=before, count=count)

    def chat_ref(
        self, character_name: str, chat_id: str | None = None, *, new: bool = False
    ) -> ChatRef:
        """Which chat an operation is on, without reading it (a new chat is created)."""
        character = self._library.character(character_name)
        if new or (chat_id is None and self._library.latest_chat(character) is None):
            return self.new_chat(character.name).ref
        return self._library.chat(character, chat_id)

    # -- turns ------------------------------------------------------------------------

    async def preview(
        self, character_name: str, text: str, chat_id: str | None = None, *, new: bool = False
    ) -> dict[str, Any]:
        """The exact messages a `send` would send, its memories and World Info; nothing saved."""
        character = self._library.character(character_name)
        ref: ChatRef | None = None
        if new or (chat_id is None and self._library.latest_chat(character) is None):
            chat = self._fresh_chat(character)[1]
        else:
            loaded = self._library.load_chat(self._library.chat(character, chat_id))
            chat, ref = loaded.chat, loaded.ref
        chat.append(user_message(self._preparer.persona(chat).name, text, self._clock()))
        try:
            model = self._settings.model(character=character.name, require_model=False)
        except ConfigError:
            model = ModelSettings("custom", "", "")  # nothing is sent: the defaults will do
        prepared = await self._preparer.prepare(
            character,
            chat,
            self._locator.for_chat(character, ref),
            model,
            group=ref.group.members if ref is not None and ref.group is not None else (),
            cast=self._snapshot(ref, chat) if ref is not None else None,
        )
        return {
            "messages": [{"role": m.role, "content": m.content} for m in prepared.messages],
            "memories": [
                {"id": m["id"], "text": m["text"], "score": m["score"]}
                for m in _memories_of(prepared)
            ],
            "world_info": [
                {"book": e["book"], "uid": e["uid"], "comment": e["comment"], "why": e["why"]}
                for e in _activated_lore(prepared)
            ],
        }

    async def send(
        self,
        character_name: str,
        text: str,
        chat_id: str | None = None,
        *,
        new: bool = False,
        on_delta: OnDelta | None = None,
        stop: asyncio.Event | None = None,
    ) -> Turn:
        """The user's message, then the character's reply."""
        if not text.strip():
            raise CharMemoryError("the message is empty")
        ref = self.chat_ref(character_name, chat_id, new=new)
        async with self.chat_lock(ref):
            loaded = self._library.load_chat(ref)
            persona = self._preparer.persona(loaded.chat)
            message = user_message(persona.name, text, self._clock())
            if self._narrator is not None:
                self._narrator.stamp_sent(ref, loaded.chat, message)
            before = as_read(loaded.chat, 0)
            loaded.chat.append(message)
            saving = _PendingSave(lambda: self._write_sent(loaded, message, before))
            try:
                return await self._turn(loaded, "normal", on_delta, stop, saving)
            finally:
                await saving.settled()  # written even when no reply could be made

    async def generate(
        self,
        character_name: str,
        chat_id: str | None = None,
        *,
        kind: Kind = "normal",
        on_delta: OnDelta | None = None,
        stop: asyncio.Event | None = None,
    ) -> Turn:
        """A reply without a new message: a new reply, a swipe, a regeneration, a continuation."""
        ref = self.chat_ref(character_name, chat_id)
        async with self.chat_lock(ref):
            loaded = self._library.load_chat(ref)
            if kind != "normal":
                editing.last_reply(loaded.chat)  # raises when there is none to change
            if kind == "regenerate":
                editing.delete_last(loaded.chat, 1)
                loaded = self._library.save_chat(loaded, loaded.chat)
            return await self._turn(loaded, kind, on_delta, stop)

    async def reply_in_group(
        self,
        ref: ChatRef,
        *,
        batch: int,
        kind: Kind = "normal",
        on_delta: OnDelta | None = None,
        stop: asyncio.Event | None = None,
    ) -> Turn:
        """One member's reply to a group chat as it is now (``ref``: the chat as that
        member's); the replies drafted together share ``batch``. The caller holds
        `chat_lock(ref)` for the whole round."""
        loaded = self._library.load_chat(ref)
        if kind != "normal":
            editing.last_reply(loaded.chat)  # raises when there is none to change
        return await self._turn(loaded, kind, on_delta, stop, batch=batch)

    async def _turn(
        self,
        loaded: LoadedChat,
        kind: Kind,
        on_delta: OnDelta | None,
        stop: asyncio.Event | None,
        saving: _PendingSave | None = None,
        *,
        batch: int | None = None,
    ) -> Turn:
        character = loaded.ref.character
        group = loaded.ref.group
        location = self._locator.for_chat(character, loaded.ref)
        model_settings = self._settings.model(character=character.name)
        # The active cast as the generation starts governs it, whatever changes meanwhile.
        cast = self._snapshot(loaded.ref, loaded.chat)
        prepared = await self._preparer.prepare(
            character,
            loaded.chat,
            location,
            model_settings,
            kind="swipe" if kind == "swipe" else "continue" if kind == "continue" else "normal",
            group=group.members if group is not None else (),
            cast=cast,
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
        number = self._record(
            saved.ref, kind, prepared, generated, timings, finish, index, None, cast
        )
        outcomes = self.trigger_extraction(character, saved.ref)
        self._background.follow_reply(saved.ref)
        return Turn(
            saved.ref.id,
            index,
            saved.chat.messages[index].mes,
            reasoning,
            kind,
            _memories_of(prepared),
            _activated_lore(prepared),
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
            memories=_memories_of(prepared),
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

    # -- automatic extraction -----------------------------------------------------------

    def trigger_extraction(self, character: Character, ref: ChatRef) -> dict[str, str]:
        """Start extraction in the background if the trigger says so now (see
        `BackgroundWork.trigger_extraction`)."""
        return self._background.trigger_extraction(character, ref)

    async def extractions_finished(self) -> list[str]:
        """Wait for background extractions (and scene memories); the failures since the last
        call, once each."""
        return await self._background.finished()

    def cancel_extractions(self) -> None:
        """Stop background extractions (at shutdown): each is journalled, so none is torn."""
        self._background.cancel_extractions()

    def extraction_failures(self) -> list[str]:
        """The background extractions' failures since the last call, once each (no waiting)."""
        return self._background.failures()

    def status_line(self, character_name: str, chat_id: str | None = None) -> str:
        """`5/20 msgs · Ready`: how far the next automatic extraction is."""
        return self._background.status_line(character_name, chat_id)

    # -- diagnostics --------------------------------------------------------------------

    def generations(
        self, character_name: str, chat_id: str | None = None, count: int = 1
    ) -> list[GenerationRecord]:
        """The chat's newest ``count`` generations, newest first."""
        character = self._library.character(character_name)
        ref = self._library.chat(character, chat_id)
        return self._generations.last(character.name, ref.id, count)

    def generation(
        self, character_name: str, number: int, chat_id: str | None = None
    ) -> GenerationRecord:
        character = self._library.character(character_name)
        ref = self._library.chat(character, chat_id)
        found = self._generations.get(character.name, ref.id, number)
        if found is None:
            kept = [
                record.number for record in self._generations.last(character.name, ref.id, 1000)
            ]
            raise NotFoundError(
                f"no generation {number} of {ref.id} is kept"
                + (f" (kept: {min(kept)}-{max(kept)})" if kept else " (none yet)")
            )
        return found

    # -- editing (services/chat_edits.py) ------------------------------------------------

    async def choose_swipe(
        self, character_name: str, number: int, chat_id: str | None = None
    ) -> str:
        """Show swipe ``number`` (1-based) of the last reply; returns its text."""
        return await self._editor.choose_swipe(character_name, number, chat_id)

    async def edit(
        self, character_name: str, index: int, text: str, chat_id: str | None = None
    ) -> str:
        return await self._editor.edit(character_name, index, text, chat_id)

    async def delete_last(self, character_name: str, count: int, chat_id: str | None = None) -> int:
        """Delete the last ``count`` messages."""
        return await self._editor.delete_last(character_name, count, chat_id)

    async def delete_message(
        self, character_name: str, index: int, chat_id: str | None = None
    ) -> int:
        """Delete one message."""
        return await self._editor.delete_message(character_name, index, chat_id)

    async def set_hidden(
        self, character_name: str, first: int, last: int, hidden: bool, chat_id: str | None = None
    ) -> list[int]:
        return await self._editor.set_hidden(character_name, first, last, hidden, chat_id)

    async def branch(
        self, character_name: str, at: int | None = None, chat_id: str | None = None
    ) -> str:
        """A new chat holding messages 0..``at`` (default: all); returns its id."""
        return await self._editor.branch(character_name, at, chat_id)

    def _snapshot(self, ref: ChatRef, chat: Chat) -> CastSnapshot | None:
        return None if self._narrator is None else self._narrator.snapshot(ref, chat)

    def chat_lock(self, ref: ChatRef) -> asyncio.Lock:
        """Held by every operation on the chat's file (a group chat's members share it)."""
        return self._locks.setdefault(ref.path, asyncio.Lock())


def _memories_of(prepared: PreparedPrompt) -> list[dict[str, Any]]:
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


def _activated_lore(prepared: PreparedPrompt) -> list[dict[str, Any]]:
    return [
        {"book": e.book, "uid": e.uid, "comment": e.comment, "why": e.text}
        for e in prepared.built.world_info.explanations()
        if e.activated
    ]
