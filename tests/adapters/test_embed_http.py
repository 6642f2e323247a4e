import socket
from typing import Any

import numpy as np
import pytest

from charmemory.adapters.embed_http import OllamaEmbedder, OpenAIEmbedder
from charmemory.adapters.llm.provider_errors import (
    AuthenticationError,
    MalformedResponseError,
    ProviderConnectionError,
)
from charmemory.adapters.llm.retry import RetryPolicy
from charmemory.ports import Embedder
from tests.support.scripted_embeddings import Scripted

KEY = "sk-test-secret-123"
NO_RETRY = RetryPolicy(max_retries=0)


@pytest.fixture
def server(embedding_server: Scripted) -> Scripted:
    return embedding_server


def vector_for(text: str) -> list[float]:
    return [float(len(text)), 1.0, 0.0]


def openai_reply(path: str, body: dict[str, Any]) -> tuple[int, Any]:
    data = [{"index": i, "embedding": vector_for(t)} for i, t in enumerate(body["input"])]
    return 200, {"data": list(reversed(data)), "model": body["model"]}


async def test_openai_compatible_embeddings(server: Scripted) -> None:
    server.reply = openai_reply
    embedder = OpenAIEmbedder(f"{server.url}/v1/", "nomic-embed", api_key=KEY, batch_size=2)

    vectors = await embedder.embed(["a", "bbb", "cc"])

    assert isinstance(embedder, Embedder)
    assert [path for path, _, _ in server.requests] == [
        "/v1/embeddings",
        "/v1/embeddings",
    ]
    assert [body["input"] for _, _, body in server.requests] == [["a", "bbb"], ["cc"]]
    assert server.requests[0][1]["Authorization"] == f"Bearer {KEY}"
    expected = np.array([vector_for(t) for t in ("a", "bbb", "cc")])
    expected /= np.linalg.norm(expected, axis=1, keepdims=True)
    assert np.allclose(vectors, expected, atol=1e-6)
    assert (embedder.model_name, embedder.dimensions) == ("openai/nomic-embed", 3)
    assert KEY not in repr(embedder)


async def test_ollama_embeddings(server: Scripted) -> None:
    server.reply = lambda path, body: (
        200,
        {"embeddings": [[3.0, 4.0] for _ in body["input"]]},
    )
    embedder = OllamaEmbedder(server.url, "all-minilm")

    vectors = await embedder.embed(["x", "y"])

    path, headers, body = server.requests[0]
    assert path == "/api/embed" and "Authorization" not in headers
    assert body == {"model": "all-minilm", "input": ["x", "y"], "truncate": True}
    assert np.allclose(vectors, [[0.6, 0.8], [0.6, 0.8]])
    assert embedder.model_name == "ollama/all-minilm"


async def test_no_texts_means_no_request(server: Scripted) -> None:
    embedder = OpenAIEmbedder(server.url, "m", dimensions=8)
    assert (await embedder.embed([])).shape == (0, 8)
    assert server.requests == []


async def test_a_refused_key_is_never_repeated_back(server: Scripted) -> None:
    server.reply = lambda path, body: (
        401,
        {"error": {"message": f"Incorrect API key: {KEY}"}},
    )
    embedder = OpenAIEmbedder(server.url, "m", api_key=KEY, retry=NO_RETRY)

    with pytest.raises(AuthenticationError) as caught:
        await embedder.embed(["hello"])

    assert KEY not in str(caught.value) and "[redacted]" in str(caught.value)


@pytest.mark.parametrize(
    "answer",
    [
        {"data": [{"index": 0, "embedding": ["x", "y"]}]},
        {"data": []},
        {"unexpected": True},
        {"data": [{"index": 0, "embedding": [1.0, 2.0, 3.0, 4.0]}]},
    ],
)
async def test_unusable_answers_are_typed_errors(server: Scripted, answer: Any) -> None:
    server.reply = lambda path, body: (200, answer)
    embedder = OpenAIEmbedder(server.url, "m", dimensions=3, retry=NO_RETRY)
    with pytest.raises(MalformedResponseError, match="embedding answer is not usable"):
        await embedder.embed(["hello"])


async def test_an_unreachable_server_is_a_connection_error() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    embedder = OllamaEmbedder(f"http://127.0.0.1:{port}", "m", retry=NO_RETRY)
    with pytest.raises(ProviderConnectionError, match="could not reach"):
        await embedder.embed(["hello"])
