"""Asking the model for one memory entry as JSON, and reading what it answers.

The answer is requested as structured output (`JsonAnswer`): the embedded model
holds it to a grammar, HTTP providers use their structured-output mode. A
provider that refuses the schema itself is asked again in plain text (the
prompt describes the format too). An answer that cannot be read is asked for
again twice when asking again can help (`SceneAnswerError.recoverable`); the
last error is the one reported.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from charmemory.core.books.answer import (
    SCENE_SCHEMA,
    SCHEMA_NAME,
    SceneAnswer,
    SceneAnswerError,
    parse_scene_answer,
)
from charmemory.core.books.profiles import Profile
from charmemory.errors import CharMemoryError
from charmemory.ports import FREE_TEXT, AnswerFormat, ChatMessage, ChatModel, JsonAnswer
from charmemory.services.prompts import PromptService
from charmemory.services.settings import SettingsService

RETRIES = 2
SCENE_ANSWER = JsonAnswer(SCHEMA_NAME, SCENE_SCHEMA)
# What a provider says when it will not take a schema (STMB falls back on the same words).
_SCHEMA_REFUSAL = re.compile(
    r"response_format|json_schema|json_object|structured output|schema", re.IGNORECASE
)


@dataclass(frozen=True)
class Asked:
    answer: SceneAnswer
    calls: int  # requests made, retries and the plain-text fallback included
    plain_text: bool  # the provider refused the schema, so the answer was asked as text


async def ask_for_entry(
    model: ChatModel, messages: Sequence[ChatMessage], *, max_tokens: int, temperature: float
) -> Asked:
    """One entry's title, content and keywords from ``model``."""
    answer_format: AnswerFormat = SCENE_ANSWER
    calls = 0
    attempts = 0
    while True:
        calls += 1
        try:
            completion = await model.complete(
                messages,
                max_tokens=max_tokens,
                temperature=temperature,
                answer_format=answer_format,
            )
        except CharMemoryError as error:
            if answer_format is SCENE_ANSWER and _refuses_schema(error):
                answer_format = FREE_TEXT
                continue
            raise
        try:
            answer = parse_scene_answer(completion.text, finish_reason=completion.finish_reason)
        except SceneAnswerError as error:
            attempts += 1
            if not error.recoverable or attempts > RETRIES:
                raise
            continue
        return Asked(answer, calls, answer_format is not SCENE_ANSWER)


def _refuses_schema(error: CharMemoryError) -> bool:
    status = getattr(error, "status", None)
    return status in (400, 422) and bool(_SCHEMA_REFUSAL.search(str(error)))


ModelFor = Callable[[str, Mapping[str, Any]], ChatModel]


class EntryWriter:
    """Writes entries with a profile's model (or the chat's) and a preset's prompt."""

    def __init__(self, settings: SettingsService, prompts: PromptService, model_for: ModelFor):
        self._settings = settings
        self._prompts = prompts
        self._model_for = model_for

    def instructions(self, preset: str) -> str:
        """The preset's text in force (the workspace's own, else ours)."""
        return self._prompts.text("scene", preset)

    async def write(
        self, character: str, profile: Profile, messages: Sequence[ChatMessage]
    ) -> Asked:
        connection = profile.connection
        overrides: dict[str, Any] = {}
        if connection is not None:
            overrides = {"provider": connection.provider}
            if connection.model:
                overrides["model"] = connection.model
        model = self._model_for(character, overrides)
        values = self._settings.model(overrides, character, require_model=False)
        temperature = values.temperature
        if connection is not None and connection.temperature is not None:
            temperature = connection.temperature
        return await ask_for_entry(
            model, messages, max_tokens=values.max_tokens, temperature=temperature
        )
