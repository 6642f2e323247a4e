"""The multilingual local embedder: multilingual-e5-small with 4-bit weights, run in numpy.

all-MiniLM-L6-v2 knows English only; on the Chinese and Russian labelled sets it
reaches recall@5 0.32 and 0.41 by vectors alone, this model 0.81 and 0.85
(bench/RESULTS.md). It is twice as deep, so it is used for memory files not
written in English (`core/language.py`), and English keeps MiniLM's speed.

Every text is embedded as a query ("query: " + text): the model card's advice
for symmetric use, and on the labelled sets it did as well as "passage: " for
memories. Texts are cut at 256 tokens, as MiniLM's are.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from contextlib import AbstractContextManager
from pathlib import Path

import numpy as np
from threadpoolctl import ThreadpoolController

from charmemory.adapters.compute_thread import on_compute_thread
from charmemory.adapters.model_install import (
    MULTILINGUAL_E5_SMALL_Q4,
    InstalledModel,
    load_installed,
)
from charmemory.adapters.q4_encoder import Encoder, SentencePieceTokenizer, load_encoder

# OpenBLAS starts one thread per core for every product. A query's products are
# small, and on 2 busy cores its threads spin waiting for each other: a 27-token
# query took 578 ms with them and 72 ms with one thread, once, at a load of about 3; the
# latency bench's multilingual queries went from 1-6 s to tens of ms (bench/RESULTS.md).
_BLAS_THREADS = 1

DIMENSIONS = 384
MAX_TOKENS = 256
_PREFIX = "query: "


class E5Embedder:
    """Embeds texts in any of 94 languages; the model loads on first use."""

    model_name = MULTILINGUAL_E5_SMALL_Q4.name
    dimensions = DIMENSIONS

    def __init__(
        self,
        model: InstalledModel | None = None,
        *,
        models_dir: Path | None = None,
        batch_size: int = 16,
        max_tokens: int = MAX_TOKENS,
    ) -> None:
        if batch_size < 1 or not 3 <= max_tokens <= 512:
            raise ValueError("batch_size must be >= 1 and max_tokens within 3..512")
        self._model = model or load_installed(MULTILINGUAL_E5_SMALL_Q4, models_dir)
        self._batch_size = batch_size
        self._max_tokens = max_tokens
        self._lock = threading.Lock()
        self._encoder: Encoder | None = None
        self._tokenizer: SentencePieceTokenizer | None = None
        self._blas: ThreadpoolController | None = None

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Unit-length float32 vectors, one row per text, in input order."""
        if not texts:
            return np.zeros((0, DIMENSIONS), dtype=np.float32)
        return await on_compute_thread(self.embed_blocking, list(texts))

    def embed_blocking(self, texts: Sequence[str]) -> np.ndarray:
        """The same as :meth:`embed`, on the calling thread."""
        if not texts:
            return np.zeros((0, DIMENSIONS), dtype=np.float32)
        with self._lock:
            encoder, tokenizer = self._loaded()
            out = np.zeros((len(texts), encoder.shape.hidden), dtype=np.float32)
            ids = tokenizer.ids([_PREFIX + text for text in texts])
            # Similar lengths share a batch, so little padding is computed.
            order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
            for start in range(0, len(order), self._batch_size):
                chosen = order[start : start + self._batch_size]
                longest = max(len(ids[i]) for i in chosen)
                batch = np.full((len(chosen), longest), encoder.vocabulary.pad, dtype=np.int64)
                mask = np.zeros((len(chosen), longest), dtype=np.int64)
                for row, i in enumerate(chosen):
                    batch[row, : len(ids[i])] = ids[i]
                    mask[row, : len(ids[i])] = 1
                with self._blas_limit():
                    out[chosen] = encoder.embed_ids(batch, mask)
        return out

    def _blas_limit(self) -> AbstractContextManager[object]:
        if self._blas is None:
            self._blas = ThreadpoolController()
        return self._blas.limit(limits=_BLAS_THREADS, user_api="blas")

    def _loaded(self) -> tuple[Encoder, SentencePieceTokenizer]:
        if self._encoder is None or self._tokenizer is None:
            self._encoder = load_encoder(self._model.path("model.bin"))
            self._tokenizer = SentencePieceTokenizer(self._encoder.vocabulary, self._max_tokens)
        return self._encoder, self._tokenizer
