"""Tiny packed 4-bit encoder files for tests, and a plain reference of their forward pass.

The weights are small integers times one scale per block of 32, so 4 bits hold
them exactly and the reference can use the same floats.
"""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

HIDDEN, HEADS, FEED_FORWARD, POSITIONS = 64, 2, 64, 24
PIECES = ["<s>", "<pad>", "</s>", "<unk>", "▁", "▁hello", "▁world", "hel", "lo", "▁sea", "s", "A"]
# Full-width "Ａ" is written "A"; a control character is dropped.
NORMALISATION = {0xFF21: [ord("A")], 0x0007: []}


@dataclass
class TinyModel:
    rng: np.random.Generator = field(default_factory=lambda: np.random.default_rng(3))
    tensors: dict[str, np.ndarray] = field(default_factory=dict)
    quantised: dict[str, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)

    def matrix(self, name: str, rows: int, columns: int) -> None:
        integers = self.rng.integers(-8, 8, size=(rows, columns))
        scales = self.rng.uniform(0.01, 0.05, size=(rows, columns // 32)).astype(np.float16)
        self.quantised[name] = (integers, scales)
        self.tensors[name] = integers * np.repeat(scales.astype(np.float32), 32, axis=1)

    def floats(self, name: str, *shape: int, around: float = 0.0) -> None:
        self.tensors[name] = (around + 0.1 * self.rng.standard_normal(shape)).astype(np.float32)


def tiny_model(layers: int = 2) -> TinyModel:
    model = TinyModel()
    model.matrix("emb.word", len(PIECES), HIDDEN)
    model.floats("emb.pos", POSITIONS, HIDDEN)
    model.floats("emb.type", 2, HIDDEN)
    model.floats("emb.ln.w", HIDDEN, around=1.0)
    model.floats("emb.ln.b", HIDDEN)
    for i in range(layers):
        for part, rows, columns in (
            ("q", HIDDEN, HIDDEN),
            ("k", HIDDEN, HIDDEN),
            ("v", HIDDEN, HIDDEN),
            ("ao", HIDDEN, HIDDEN),
            ("fi", FEED_FORWARD, HIDDEN),
            ("fo", HIDDEN, FEED_FORWARD),
        ):
            model.matrix(f"l{i}.{part}.w", rows, columns)
            model.floats(f"l{i}.{part}.b", rows)
        for norm in ("aln", "oln"):
            model.floats(f"l{i}.{norm}.w", HIDDEN, around=1.0)
            model.floats(f"l{i}.{norm}.b", HIDDEN)
    return model


def write_model(model: TinyModel, path: Path) -> Path:
    layers = sum(1 for name in model.tensors if name.endswith(".q.w"))
    head = b"E5S1" + struct.pack(
        "<I7ifi", 1, HIDDEN, layers, HEADS, FEED_FORWARD, len(PIECES), POSITIONS, 2, 1e-12, 32
    )
    blob = b"".join(piece.encode() for piece in PIECES)
    offsets = np.cumsum([0] + [len(piece.encode()) for piece in PIECES]).astype("<u4")
    scores = np.array([0, 0, 0, 0, -3, -5, -5, -7, -7, -6, -4, -4], dtype="<f4")
    vocab = struct.pack("<5iQ", len(PIECES), 0, 2, 1, 3, len(blob))
    vocab += offsets.tobytes() + scores.tobytes() + blob
    table = b"".join(
        struct.pack(f"<IB{len(out)}I", code, len(out), *out) for code, out in NORMALISATION.items()
    )
    vocab += struct.pack("<iI", len(NORMALISATION), len(table)) + table
    directory_size = sum(2 + len(name) + 1 + 4 + 8 + 8 for name in model.tensors)
    data_start = len(head) + len(vocab) + 4 + directory_size
    directory, data = b"", b""
    for name, values in model.tensors.items():
        raw = (
            _q4(*model.quantised[name])
            if name in model.quantised
            else values.astype("<f4").tobytes()
        )
        kind = 1 if name in model.quantised else 0
        directory += struct.pack("<H", len(name)) + name.encode()
        directory += struct.pack("<BIQQ", kind, values.size, data_start + len(data), len(raw))
        data += raw
    path.write_bytes(head + vocab + struct.pack("<i", len(model.tensors)) + directory + data)
    return path


def _q4(integers: np.ndarray, scales: np.ndarray) -> bytes:
    """Q4_0 blocks: a float16 scale, then 32 values + 8 as nibbles (j low, j + 16 high)."""
    out = bytearray()
    nibbles = (integers + 8).astype(np.uint8).reshape(-1, 32)
    for block, scale in zip(nibbles, scales.reshape(-1), strict=True):
        out += scale.astype("<f2").tobytes() + (block[:16] | (block[16:] << 4)).tobytes()
    return bytes(out)


def reference_embedding(model: TinyModel, ids: list[int]) -> np.ndarray:
    """Sentence vector of one text, token by token and head by head, as BERT defines it."""
    t = model.tensors
    layers = sum(1 for name in t if name.endswith(".q.w"))
    x = np.stack([t["emb.word"][i] + t["emb.pos"][p] + t["emb.type"][0] for p, i in enumerate(ids)])
    x = _norm(x, t["emb.ln.w"], t["emb.ln.b"])
    size = HIDDEN // HEADS
    for layer in range(layers):
        w = {part: t[f"l{layer}.{part}.w"] for part in ("q", "k", "v", "ao", "fi", "fo")}
        b = {part: t[f"l{layer}.{part}.b"] for part in ("q", "k", "v", "ao", "fi", "fo")}
        q, k, v = (x @ w[p].T + b[p] for p in "qkv")
        context = np.zeros_like(x)
        for h in range(HEADS):
            cols = slice(h * size, (h + 1) * size)
            scores = q[:, cols] @ k[:, cols].T / math.sqrt(size)
            weights = np.exp(scores - scores.max(axis=1, keepdims=True))
            weights /= weights.sum(axis=1, keepdims=True)
            context[:, cols] = weights @ v[:, cols]
        x = _norm(x + context @ w["ao"].T + b["ao"], t[f"l{layer}.aln.w"], t[f"l{layer}.aln.b"])
        inner = x @ w["fi"].T + b["fi"]
        inner = 0.5 * inner * (1 + np.vectorize(math.erf)(inner / math.sqrt(2)))
        x = _norm(x + inner @ w["fo"].T + b["fo"], t[f"l{layer}.oln.w"], t[f"l{layer}.oln.b"])
    pooled = x.mean(axis=0)
    return pooled / np.linalg.norm(pooled)


def _norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray) -> np.ndarray:
    mean = x.mean(axis=1, keepdims=True)
    variance = ((x - mean) ** 2).mean(axis=1, keepdims=True)
    return (x - mean) / np.sqrt(variance + 1e-12) * weight + bias
