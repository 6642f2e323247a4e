"""Embedders served over HTTP: any OpenAI-compatible ``/embeddings`` endpoint, and Ollama.

Requests go through the LLM transport, so timeouts, retries and typed errors
behave as they do for chat models, and an API key a server echoes back is
redacted from every message. Vectors are L2-normalised here whatever the
server does, as the Embedder port promises unit-length rows.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any

import numpy as np

from charmemory.adapters.llm.provider_errors import ErrorContext, MalformedResponseError, Redact
from charmemory.adapters.llm.retry import RetryPolicy
from charmemory.adapters.llm.transport import Endpoint, Transport
from charmemory.core.redaction import Redactor


class HttpEmbedder(ABC):
    """Shared batching, validation and normalisation; subclasses speak one API dialect."""

    provider: str

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str | None = None,
        dimensions: int | None = None,
        batch_size: int = 64,
        connect_timeout: float = 10.0,
        read_timeout: float = 120.0,
        retry: RetryPolicy | None = None,
        redact: Redact | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.model_name = f"{self.provider}/{model}"
        self.dimensions = dimensions or 0  # learned from the first answer when not given
        self._batch_size = batch_size
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        errors = ErrorContext(
            self.provider, model, self.base_url, redact=redact or Redactor([api_key])
        )
        endpoint = Endpoint(self.base_url, headers, connect_timeout, read_timeout, errors)
        self._transport = Transport(endpoint, retry or RetryPolicy())

    def __repr__(self) -> str:
        return f"{type(self).__name__}(base_url={self.base_url!r}, model={self.model!r})"

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        rows: list[np.ndarray] = []
        for start in range(0, len(texts), self._batch_size):
            batch = list(texts[start : start + self._batch_size])
            rows.append(self._checked(await self._request(batch), len(batch)))
        if not rows:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        vectors = np.vstack(rows)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return (vectors / np.maximum(norms, 1e-12)).astype(np.float32)

    @abstractmethod
    async def _request(self, texts: list[str]) -> list[Any]:
        """One raw vector per text, in input order."""

    def _checked(self, raw: list[Any], count: int) -> np.ndarray:
        try:
            vectors = np.asarray(raw, dtype=np.float32)
        except (TypeError, ValueError):
            vectors = np.zeros((0,))
        if vectors.ndim != 2 or vectors.shape[0] != count or not np.isfinite(vectors).all():
            raise self._malformed(f"expected {count} vectors of numbers")
        if self.dimensions and vectors.shape[1] != self.dimensions:
            raise self._malformed(
                f"expected {self.dimensions}-dimensional vectors, got {vectors.shape[1]}"
            )
        self.dimensions = vectors.shape[1]
        return vectors

    def _malformed(self, detail: str) -> MalformedResponseError:
        return MalformedResponseError(
            self.provider, "the embedding answer is not usable", provider_message=detail
        )


class OpenAIEmbedder(HttpEmbedder):
    """``POST {base_url}/embeddings`` as OpenAI, LM Studio, llama.cpp, vLLM and others serve it."""

    provider = "openai"

    async def _request(self, texts: list[str]) -> list[Any]:
        body = {"model": self.model, "input": texts, "encoding_format": "float"}
        answer = await self._transport.request_json("POST", "embeddings", body=body)
        data = answer.get("data") if isinstance(answer, dict) else None
        if not isinstance(data, list) or not all(isinstance(item, dict) for item in data):
            raise self._malformed("no data list in the answer")
        # Entries carry their input position; servers need not keep the order.
        ordered = sorted(data, key=lambda item: item.get("index", 0))
        return [item.get("embedding") for item in ordered]


class OllamaEmbedder(HttpEmbedder):
    """``POST {base_url}/api/embed`` of an Ollama server (base_url without ``/v1``)."""

    provider = "ollama"

    async def _request(self, texts: list[str]) -> list[Any]:
        body = {"model": self.model, "input": texts, "truncate": True}
        answer = await self._transport.request_json("POST", "api/embed", body=body)
        embeddings = answer.get("embeddings") if isinstance(answer, dict) else None
        if not isinstance(embeddings, list):
            raise self._malformed("no embeddings list in the answer")
        return embeddings
