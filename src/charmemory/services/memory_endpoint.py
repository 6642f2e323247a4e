"""The OpenAI-compatible memory endpoint: a frontend's chat request, remembered.

For each request: find whose conversation it is (named in the URL, or
recognised from the system messages), record the conversation as that
character's chat, retrieve the memories that fit its last turns and put them
into the messages, forward the request to the configured provider and hand its
answer back (streamed bytes untouched, as they arrive). Afterwards the reply is
recorded where the frontend shows it, automatic extraction may start in the
background, and what was sent is kept for `diagnose`. A request for nobody
passes through unchanged.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Callable
from contextlib import aclosing
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from charmemory.core.chat.diagnostics import GenerationRecord
from charmemory.core.chat.messages import Generated, iso_time
from charmemory.core.memory_endpoint.injection import with_injection
from charmemory.core.memory_endpoint.recognition import Recognition, recognise
from charmemory.core.memory_endpoint.request import CompletionRequest, message_text, read_request
from charmemory.errors import CharMemoryError
from charmemory.ports import (
    ActivityRecorder,
    Character,
    CharacterLibrary,
    CompletionRelay,
    GenerationLog,
    RelayedPiece,
    StreamDelta,
    Usage,
)
from charmemory.services.chat import STOPPED, ChatService
from charmemory.services.chat_recording import ChatRecorder, Followed
from charmemory.services.memory_access import MemoryLocator
from charmemory.services.prompting import PromptPreparer
from charmemory.services.retrieval import Retrieval
from charmemory.services.settings import SettingsService

MEMORY_SECTION = "memories"


@dataclass
class Exchange:
    """One request on its way: what is forwarded, for whom, and what it was given."""

    request: CompletionRequest
    body: dict[str, Any]  # as forwarded
    relay: CompletionRelay
    character: Character | None
    recognition: str
    followed: Followed | None = None
    retrieval: Retrieval | None = None
    timings: dict[str, float] = field(default_factory=dict)
    started: float = field(default_factory=time.perf_counter)

    @property
    def chat(self) -> str | None:
        return self.followed.ref.id if self.followed else None


@dataclass
class _Reply:
    text: list[str] = field(default_factory=list)
    reasoning: list[str] = field(default_factory=list)
    finish: str | None = None
    usage: Usage | None = None
    first_byte_ms: float | None = None

    def add(self, delta: StreamDelta) -> None:
        self.text.append(delta.text)
        self.reasoning.append(delta.reasoning)
        self.finish = delta.finish_reason or self.finish
        self.usage = delta.usage or self.usage


class MemoryEndpoint:
    def __init__(
        self,
        library: CharacterLibrary,
        locator: MemoryLocator,
        settings: SettingsService,
        chats: ChatService,
        preparer: PromptPreparer,
        recorder: ChatRecorder,
        generations: GenerationLog,
        activity: ActivityRecorder,
        *,
        relay_for: Callable[[str | None], CompletionRelay],
        clock: Callable[[], datetime],
        after_reply: Callable[[], object] = lambda: None,
    ):
        self._library = library
        self._locator = locator
        self._settings = settings
        self._chats = chats
        self._preparer = preparer
        self._recorder = recorder
        self._generations = generations
        self._activity = activity
        self._relay_for = relay_for
        self._clock = clock
        self._after_reply = after_reply

    async def models(self, character_name: str | None = None) -> Any:
        """The upstream's model list, so a frontend's model picker works."""
        name = self._library.character(character_name).name if character_name else None
        return await self._relay_for(name).models()

    async def open(self, body: Any, character_name: str | None = None) -> Exchange:
        """Read, attribute and record the request, and add the memories; nothing sent yet."""
        request = read_request(body)
        started = time.perf_counter()
        if character_name is not None:
            character = self._library.character(character_name)
            recognition = Recognition(character, "named in the URL")
        else:
            recognition = self._recognised(request)
        character = recognition.character
        relay = self._relay_for(character.name if character else None)
        exchange = Exchange(request, dict(request.body), relay, character, recognition.reason)
        exchange.body["model"] = self._model(request, relay, character)
        if character is None:
            self._activity.record("endpoint.passthrough", f"memory endpoint: {recognition.reason}")
            return exchange
        if request.turns:  # the newest message is embedded while the conversation is recorded
            self._preparer.prefetch(self._locator.for_chat(character, None), request.turns[-1].text)
            await asyncio.sleep(0)
        exchange.followed = await self._recorder.follow(character, request)
        exchange.timings["record_ms"] = _ms(started)
        step = time.perf_counter()
        location = self._locator.for_chat(character, exchange.followed.ref)
        exchange.retrieval = await self._preparer.memories(exchange.followed.loaded.chat, location)
        if exchange.retrieval is not None:
            exchange.body["messages"] = with_injection(
                request.messages, exchange.retrieval.injection
            )
        exchange.timings["retrieval_ms"] = _ms(step)
        exchange.timings["prepare_ms"] = _ms(started)
        return exchange

    async def complete(self, exchange: Exchange) -> Any:
        """The upstream's whole answer, with the reply recorded."""
        try:
            answer = await exchange.relay.complete(exchange.body)
        except CharMemoryError as error:
            await self._finish(exchange, _Reply(), error=str(error))
            raise
        reply = _Reply()
        choices = answer.get("choices") if isinstance(answer, dict) else None
        if isinstance(choices, list) and choices and isinstance(choices[0], dict):
            message = choices[0].get("message") or {}
            reply.text.append(message_text(message.get("content")))
            reasoning = message.get("reasoning_content") or message.get("reasoning")
            reply.reasoning.append(reasoning if isinstance(reasoning, str) else "")
            reply.finish = choices[0].get("finish_reason")
        reply.first_byte_ms = _ms(exchange.started)
        await self._finish(exchange, reply)
        return answer

    async def stream(self, exchange: Exchange) -> AsyncIterator[bytes]:
        """The upstream's streamed bytes as they come; the reply recorded at the end.

        The upstream is asked before this returns, so its refusal is raised here,
        before anything is sent. Closing the iterator early (the frontend hung up)
        cancels the upstream request and keeps what came so far, marked as stopped,
        as the chat engine keeps a stopped reply.
        """
        pieces = exchange.relay.stream(exchange.body)
        try:
            first = await anext(pieces, None)
        except CharMemoryError as error:
            await pieces.aclose()
            await self._finish(exchange, _Reply(), error=str(error))
            raise
        return self._relayed(exchange, pieces, first)

    async def _relayed(
        self,
        exchange: Exchange,
        pieces: AsyncIterator[RelayedPiece],
        first: RelayedPiece | None,
    ) -> AsyncIterator[bytes]:
        reply = _Reply(first_byte_ms=_ms(exchange.started))
        failure: str | None = None
        complete = recorded = False
        try:
            async with aclosing(pieces):
                piece = first
                while piece is not None:
                    if piece.done and not recorded:
                        # Recorded before the frontend hears the end: its next request
                        # must find the reply in the chat.
                        recorded = True
                        await self._finish(exchange, reply, error=failure)
                    for delta in piece.deltas:
                        reply.add(delta)
                    failure = failure or piece.error
                    if piece.raw:
                        yield piece.raw
                    piece = await anext(pieces, None)
            complete = True
        except CharMemoryError as error:
            failure = str(error)
            yield _error_event(failure)
        finally:
            stopped = not complete and failure is None
            if not recorded and (not stopped or "".join(reply.text)):
                await asyncio.shield(self._finish(exchange, reply, error=failure, stopped=stopped))

    # -- internals -----------------------------------------------------------------

    def _recognised(self, request: CompletionRequest) -> Recognition:
        found = recognise(request.system_text, self._library.characters())
        if found.character is not None:
            return found
        default = self._settings.value("server.default_character")
        if default:
            character = self._library.character(default)
            return Recognition(character, f"{found.reason}; server.default_character is used")
        return found

    def _model(
        self, request: CompletionRequest, relay: CompletionRelay, character: Character | None
    ) -> str:
        pinned = self._settings.value("server.model", character.name if character else None)
        return pinned or request.model or relay.model

    async def _finish(
        self,
        exchange: Exchange,
        reply: _Reply,
        *,
        error: str | None = None,
        stopped: bool = False,
    ) -> None:
        """Record the reply (unless it failed or speaks for the user) and the diagnostics."""
        followed = exchange.followed
        if followed is None or exchange.character is None:
            if error:
                self._activity.record(
                    "endpoint.error", f"memory endpoint: {error}", level="warning"
                )
            return
        now = self._clock()
        text = "".join(reply.text)
        generated = Generated(
            text,
            now,
            now,
            exchange.relay.provider,
            str(exchange.body.get("model") or ""),
            "".join(reply.reasoning),
            {STOPPED: True} if stopped else {},
        )
        index: int | None = None
        if error is None and exchange.request.kind != "impersonate":
            try:
                saved, index = await self._recorder.record_reply(
                    followed, exchange.request, generated
                )
            except CharMemoryError as failure:
                error = f"the reply was not recorded: {failure}"
            else:
                # The next request's query holds this reply: embedded now, between requests.
                self._preparer.prefetch(
                    self._locator.for_chat(exchange.character, saved.ref),
                    saved.chat.messages[index].active_text,
                )
                self._chats.trigger_extraction(exchange.character, saved.ref)
                self._after_reply()
        self._keep(exchange, generated, reply, index, error)

    def _keep(
        self,
        exchange: Exchange,
        generated: Generated,
        reply: _Reply,
        index: int | None,
        error: str | None,
    ) -> None:
        assert exchange.followed is not None and exchange.character is not None
        retrieval = exchange.retrieval
        included = set(retrieval.injection.included) if retrieval else set()
        injected = retrieval.injection.text if retrieval else ""
        prompt = [
            {
                "role": m.get("role"),
                "content": message_text(m.get("content")),
                "sections": [
                    MEMORY_SECTION if injected and m.get("content") == injected else "frontend"
                ],
                **({"name": m["name"]} if isinstance(m.get("name"), str) else {}),
            }
            for m in exchange.body.get("messages") or []
        ]
        usage = reply.usage or Usage()
        kind = {"swipe": "swipe", "continue": "continue"}.get(
            exchange.followed.mirrored.reply.kind, "normal"
        )
        record = GenerationRecord(
            character=exchange.character.name,
            chat=exchange.followed.ref.id,
            at=iso_time(generated.finished),
            kind="impersonate" if exchange.request.kind == "impersonate" else kind,
            model=f"{generated.api}/{generated.model}",
            prompt=prompt,
            memory_query=retrieval.query if retrieval else "",
            memories=[
                {
                    "id": r.id,
                    "text": r.text,
                    "score": round(r.score, 6),
                    "cosine": round(r.cosine, 6),
                }
                for r in (retrieval.results if retrieval else [])
                if r.id in included
            ],
            world_info=[],
            tokens={
                "prompt": usage.prompt_tokens,
                "completion": usage.completion_tokens,
                "memories": retrieval.injection.tokens if retrieval else 0,
            },
            timings={
                **exchange.timings,
                **(
                    {"first_byte_ms": reply.first_byte_ms}
                    if reply.first_byte_ms is not None
                    else {}
                ),
                "generation_ms": _ms(exchange.started),
            },
            reply=generated.text,
            reasoning=generated.reasoning,
            finish_reason=reply.finish,
            message_index=index,
            error=error,
        )
        keep = int(self._settings.value("chat.diagnostics_kept", exchange.character.name))
        self._generations.record(record, keep=keep)
        if error:
            self._activity.record(
                "endpoint.error",
                f"memory endpoint: {error}",
                level="warning",
                character=exchange.character.name,
                chat=exchange.followed.ref.id,
            )


def _error_event(message: str) -> bytes:
    payload = json.dumps({"error": {"message": message, "type": "upstream_error"}})
    return f"data: {payload}\n\n".encode()


def _ms(since: float) -> float:
    return round((time.perf_counter() - since) * 1000, 2)
