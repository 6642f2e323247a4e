"""Fixtures shared by the whole test suite."""

from collections.abc import Iterator

import pytest

from tests.support.fake_chat_model import ScriptedChatModel
from tests.support.scripted_embeddings import Scripted, scripted_embedding_server
from tests.support.scripted_llm import ScriptedLLMServer


@pytest.fixture
def llm_server() -> Iterator[ScriptedLLMServer]:
    """A scripted OpenAI/Anthropic-compatible server on 127.0.0.1 (see tests/support)."""
    with ScriptedLLMServer() as server:
        yield server


@pytest.fixture
def chat_model() -> ScriptedChatModel:
    """An in-process chat model with queued answers, for tests where HTTP is not the subject."""
    return ScriptedChatModel()


@pytest.fixture
def embedding_server() -> Iterator[Scripted]:
    """A scripted embedding server (OpenAI-compatible and Ollama routes) on 127.0.0.1."""
    with scripted_embedding_server() as server:
        yield server
