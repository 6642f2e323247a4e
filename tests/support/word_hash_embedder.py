"""A deterministic stand-in for the embedding model: texts sharing words are close."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

import numpy as np


class WordHashEmbedder:
    """Bag-of-words vectors hashed into ``dimensions`` slots; counts the texts it embeds."""

    def __init__(self, model_name: str = "words-v1", dimensions: int = 64) -> None:
        self.model_name = model_name
        self.dimensions = dimensions
        self.calls: list[list[str]] = []

    @property
    def embedded(self) -> int:
        return sum(len(call) for call in self.calls)

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.calls.append(list(texts))
        out = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in re.findall(r"\w+", text.casefold()):
                out[row, int(hashlib.md5(word.encode()).hexdigest(), 16) % self.dimensions] += 1
            out[row, 0] += 0.01  # no zero vectors
        return out / np.linalg.norm(out, axis=1, keepdims=True)
