"""The default local embedder: all-MiniLM-L6-v2 on onnxruntime, no torch.

The pipeline is sentence-transformers' for this model: WordPiece tokens (at
most 256 per text, longer texts are truncated), the transformer, mean pooling
over real tokens, L2 normalisation. The int8 weights stay within cosine 0.999
of the fp32 model (checked in the tests against stored reference vectors).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from charmemory.adapters.compute_thread import on_compute_thread
from charmemory.adapters.model_install import MINILM_L6_V2_INT8, InstalledModel, load_installed

MAX_TOKENS = 256
DIMENSIONS = 384


class OnnxEmbedder:
    """Embeds texts with a locally installed MiniLM; heavy work runs off the event loop.

    The model is located (and its manifest checked) on construction, so a
    missing model is reported at once; the ONNX session loads on first use.
    """

    model_name = MINILM_L6_V2_INT8.name
    dimensions = DIMENSIONS

    def __init__(
        self,
        model: InstalledModel | None = None,
        *,
        models_dir: Path | None = None,
        intra_op_threads: int | None = None,
        batch_size: int = 32,
        max_tokens: int = MAX_TOKENS,
    ) -> None:
        if batch_size < 1 or not 1 <= max_tokens <= 512:
            raise ValueError("batch_size must be >= 1 and max_tokens within 1..512")
        self._model = model or load_installed(MINILM_L6_V2_INT8, models_dir)
        self._threads = intra_op_threads
        self._batch_size = batch_size
        self._max_tokens = max_tokens
        self._lock = threading.Lock()
        self._session: Any = None
        self._tokenizer: Any = None
        self._input_names: frozenset[str] = frozenset()

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Unit-length float32 vectors, one row per text, in input order."""
        if not texts:
            return np.zeros((0, DIMENSIONS), dtype=np.float32)
        return await on_compute_thread(self.embed_blocking, list(texts))

    def embed_blocking(self, texts: Sequence[str]) -> np.ndarray:
        """The same as :meth:`embed`, on the calling thread (batch jobs, benchmarks)."""
        out = np.zeros((len(texts), DIMENSIONS), dtype=np.float32)
        if not texts:
            return out
        with self._lock:  # one run at a time: the session already uses every allowed thread
            self._load()
            # Similar lengths share a batch, so little padding is computed.
            order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
            for start in range(0, len(order), self._batch_size):
                chosen = order[start : start + self._batch_size]
                out[chosen] = self._run([texts[i] for i in chosen])
        return out

    def _run(self, texts: list[str]) -> np.ndarray:
        encodings = self._tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._input_names:
            feeds["token_type_ids"] = np.zeros_like(ids)
        hidden = self._session.run(None, feeds)[0]
        weights = mask[:, :, None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.maximum(norms, 1e-12)).astype(np.float32)

    def _load(self) -> None:
        if self._session is not None:
            return
        import onnxruntime as ort
        from tokenizers import Tokenizer

        tokenizer = Tokenizer.from_file(str(self._model.path("tokenizer.json")))
        # The published tokenizer pads and truncates to 128; the model was
        # trained and is evaluated with 256 and per-batch padding.
        tokenizer.enable_truncation(max_length=self._max_tokens)
        tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.log_severity_level = 3
        options.inter_op_num_threads = 1
        # Spinning worker threads keep burning a core after each query and slow the
        # index search that follows (bench/RESULTS.md: end-to-end p50 halved).
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        if self._threads is not None:
            options.intra_op_num_threads = self._threads
        session = ort.InferenceSession(
            str(self._model.path("model.onnx")), options, providers=["CPUExecutionProvider"]
        )
        self._input_names = frozenset(i.name for i in session.get_inputs())
        self._tokenizer = tokenizer
        self._session = session
