"""Answers a test double gives, queued in order, each taken by the first request it fits.

The scripted LLM server (answers are HTTP steps) and the scripted chat model (answers are
completions) share it: `add` queues one answer, `respond_always` answers whatever comes
once the queue holds nothing for a request, and past both `exhausted` says so.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Generic, TypeVar

RequestT = TypeVar("RequestT")
AnswerT = TypeVar("AnswerT")


class Script(Generic[RequestT, AnswerT]):
    def __init__(self, exhausted: Callable[[RequestT], AnswerT]) -> None:
        self._queued: list[tuple[Callable[[RequestT], bool], Callable[[RequestT], AnswerT]]] = []
        self._always: Callable[[RequestT], AnswerT] | None = None
        self._exhausted = exhausted
        self._lock = threading.Lock()

    @property
    def pending(self) -> int:
        return len(self._queued)

    def add(
        self,
        respond: Callable[[RequestT], AnswerT],
        *,
        fits: Callable[[RequestT], bool] = lambda request: True,
    ) -> None:
        with self._lock:
            self._queued.append((fits, respond))

    def respond_always(self, respond: Callable[[RequestT], AnswerT]) -> None:
        self._always = respond

    def answer(self, request: RequestT) -> AnswerT:
        with self._lock:
            index = next((i for i, (fits, _) in enumerate(self._queued) if fits(request)), None)
            respond = self._queued.pop(index)[1] if index is not None else None
        return (respond or self._always or self._exhausted)(request)
