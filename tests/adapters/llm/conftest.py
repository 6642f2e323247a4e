"""Chat models pointed at the scripted server, with retries that do not really wait."""

from collections.abc import Callable
from typing import Any

import pytest

from charmemory.adapters.llm.factory import build_chat_model
from charmemory.adapters.llm.http_model import HttpChatModel
from charmemory.adapters.llm.retry import RetryPolicy
from charmemory.core.model_settings import ModelSettings
from tests.support.scripted_llm import ScriptedLLMServer

API_KEY = "sk-scripted-0123456789abcdef"
ModelFactory = Callable[..., HttpChatModel]


class RecordedSleeps(list[float]):
    async def __call__(self, seconds: float) -> None:
        self.append(seconds)


@pytest.fixture
def sleeps() -> RecordedSleeps:
    return RecordedSleeps()


@pytest.fixture
def make_model(llm_server: ScriptedLLMServer, sleeps: RecordedSleeps) -> ModelFactory:
    """`make_model(provider, **settings)`: a model whose retries only record their waits."""

    def make(provider: str = "openai", *, base_url: str | None = None, **settings: Any):
        retries = settings.pop("max_retries", 3)
        retry = RetryPolicy(
            max_retries=retries, base_delay=0.5, max_delay=4.0, jitter=lambda: 1.0, sleep=sleeps
        )
        model_settings = ModelSettings(
            provider,
            settings.pop("model", "test-model"),
            base_url or llm_server.base_url,
            **settings,
        )
        model = build_chat_model(model_settings, API_KEY, retry=retry)
        assert isinstance(model, HttpChatModel)
        return model

    return make


@pytest.fixture
def api_key() -> str:
    return API_KEY
