"""A BERT sentence encoder stored as 4-bit blocks, run in numpy: multilingual-e5-small.

The model file packs, after the ``E5S1`` magic and the encoder's shape, the
SentencePiece unigram vocabulary (pieces and scores), the per-character
normalisation map of XLM-RoBERTa's tokenizer, and a directory of tensors: the
weight matrices in Q4_0 blocks (per 32 weights one float16 scale and 32 4-bit
values, stored as ``value - 8``), everything else in float32.

The forward pass is BERT's: word + position + token-type embeddings, layer
norm, then per layer self-attention and a GELU feed-forward block, each added
back and layer-normed; the sentence vector is the mean over the tokens, made
unit length. The weights are expanded to float32 once, when the file is loaded,
so every product is one BLAS call.
"""

from __future__ import annotations

import math
import re
import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np

MAGIC = b"E5S1"
_BLOCK = 32  # weights per Q4_0 block
_BLOCK_BYTES = 2 + _BLOCK // 2
_METASPACE = "\u2581"
_SPACES = re.compile(" {2,}")
_F32, _Q4 = 0, 1  # tensor kinds in the directory


class ModelFileError(ValueError):
    """The file is not a packed encoder this reader understands."""


@dataclass(frozen=True)
class Shape:
    hidden: int
    layers: int
    heads: int
    feed_forward: int
    vocabulary: int
    positions: int
    eps: float


@dataclass(frozen=True)
class Layer:
    qkv: np.ndarray  # (hidden, 3 * hidden): queries, keys and values in one product
    qkv_bias: np.ndarray
    out: np.ndarray  # (hidden, hidden)
    out_bias: np.ndarray
    attention_norm: tuple[np.ndarray, np.ndarray]
    up: np.ndarray  # (hidden, feed_forward)
    up_bias: np.ndarray
    down: np.ndarray  # (feed_forward, hidden)
    down_bias: np.ndarray
    output_norm: tuple[np.ndarray, np.ndarray]


@dataclass(frozen=True)
class Vocabulary:
    pieces: list[tuple[str, float]]
    bos: int
    eos: int
    pad: int
    unk: int
    normalisation: dict[int, str]  # code point -> its replacement


@dataclass(frozen=True)
class Encoder:
    shape: Shape
    vocabulary: Vocabulary
    words: np.ndarray  # (vocabulary, hidden // 32, 18) raw Q4_0 blocks, expanded per lookup
    positions: np.ndarray
    token_type: np.ndarray
    embedding_norm: tuple[np.ndarray, np.ndarray]
    layers: tuple[Layer, ...]

    def embed_ids(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """Mean-pooled, unit-length vectors for a padded batch of token ids."""
        batch, length = ids.shape
        hidden, heads = self.shape.hidden, self.shape.heads
        size = hidden // heads
        x = _dequantised(self.words[ids.reshape(-1)]).reshape(batch, length, hidden)
        x += self.positions[:length] + self.token_type
        x = _layer_norm(x, self.embedding_norm, self.shape.eps)
        # Padding is never attended to: -inf before the softmax, per batch row.
        blocked = np.where(mask[:, None, None, :] > 0, 0.0, -1e9).astype(np.float32)
        scale = np.float32(1 / math.sqrt(size))
        for layer in self.layers:
            qkv = x @ layer.qkv + layer.qkv_bias
            q, k, v = (
                part.reshape(batch, length, heads, size).transpose(0, 2, 1, 3)
                for part in np.split(qkv, 3, axis=-1)
            )
            scores = (q @ k.transpose(0, 1, 3, 2)) * scale + blocked
            scores -= scores.max(axis=-1, keepdims=True)
            np.exp(scores, out=scores)
            scores /= scores.sum(axis=-1, keepdims=True)
            context = (scores @ v).transpose(0, 2, 1, 3).reshape(batch, length, hidden)
            x = _layer_norm(
                x + context @ layer.out + layer.out_bias, layer.attention_norm, self.shape.eps
            )
            inner = _gelu(x @ layer.up + layer.up_bias)
            x = _layer_norm(
                x + inner @ layer.down + layer.down_bias, layer.output_norm, self.shape.eps
            )
        weights = mask[:, :, None].astype(np.float32)
        pooled = (x * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1.0)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.maximum(norms, 1e-12)).astype(np.float32)


def load_encoder(path: Path) -> Encoder:
    """Read a packed encoder file; ModelFileError when it is not one."""
    data = path.read_bytes()
    if data[:4] != MAGIC:
        raise ModelFileError(f"{path} is not a packed encoder (no {MAGIC!r} magic)")
    try:
        return _parse(data)
    except (struct.error, KeyError, IndexError, ValueError) as error:
        raise ModelFileError(f"{path} is damaged: {error}") from None


def _parse(data: bytes) -> Encoder:
    reader = _Reader(data, 8)  # magic, format version
    hidden, layers, heads, feed_forward, vocabulary, positions, _types = reader.ints(7)
    eps = reader.float()
    if reader.ints(1)[0] != _BLOCK:
        raise ValueError("unexpected block size")
    shape = Shape(hidden, layers, heads, feed_forward, vocabulary, positions, eps)
    vocab = _vocabulary(reader)
    tensors = _directory(reader, data)

    def f32(name: str, *dims: int) -> np.ndarray:
        return _float32(data, tensors[name], dims)

    def matrix(name: str, rows: int, columns: int) -> np.ndarray:
        # Stored row per output (rows x columns); returned transposed, ready for x @ W.
        return _dequantised(_blocks(data, tensors[name], rows, columns)).reshape(rows, columns).T

    def norm(name: str) -> tuple[np.ndarray, np.ndarray]:
        return f32(f"{name}.w", hidden), f32(f"{name}.b", hidden)

    built = []
    for i in range(layers):
        name = f"l{i}."
        built.append(
            Layer(
                qkv=np.ascontiguousarray(
                    np.concatenate(
                        [matrix(name + part + ".w", hidden, hidden) for part in "qkv"], axis=1
                    )
                ),
                qkv_bias=np.concatenate([f32(name + part + ".b", hidden) for part in "qkv"]),
                out=np.ascontiguousarray(matrix(name + "ao.w", hidden, hidden)),
                out_bias=f32(name + "ao.b", hidden),
                attention_norm=norm(name + "aln"),
                up=np.ascontiguousarray(matrix(name + "fi.w", feed_forward, hidden)),
                up_bias=f32(name + "fi.b", feed_forward),
                down=np.ascontiguousarray(matrix(name + "fo.w", hidden, feed_forward)),
                down_bias=f32(name + "fo.b", hidden),
                output_norm=norm(name + "oln"),
            )
        )
    return Encoder(
        shape=shape,
        vocabulary=vocab,
        words=_blocks(data, tensors["emb.word"], vocabulary, hidden),
        positions=f32("emb.pos", positions, hidden),
        token_type=f32("emb.type", _types, hidden)[0],
        embedding_norm=norm("emb.ln"),
        layers=tuple(built),
    )


class _Reader:
    def __init__(self, data: bytes, offset: int) -> None:
        self.data = data
        self.at = offset

    def take(self, fmt: str) -> tuple:
        values = struct.unpack_from("<" + fmt, self.data, self.at)
        self.at += struct.calcsize("<" + fmt)
        return values

    def ints(self, count: int) -> tuple[int, ...]:
        return self.take(f"{count}i")

    def float(self) -> float:
        return self.take("f")[0]

    def raw(self, size: int) -> bytes:
        chunk = self.data[self.at : self.at + size]
        if len(chunk) != size:
            raise ValueError("truncated")
        self.at += size
        return chunk


def _vocabulary(reader: _Reader) -> Vocabulary:
    count, bos, eos, pad, unk = reader.ints(5)
    (blob_size,) = reader.take("Q")
    offsets = np.frombuffer(reader.raw(4 * (count + 1)), dtype="<u4")
    scores = np.frombuffer(reader.raw(4 * count), dtype="<f4")
    blob = reader.raw(blob_size)
    pieces = [
        (blob[offsets[i] : offsets[i + 1]].decode("utf-8"), float(scores[i])) for i in range(count)
    ]
    entries, size = reader.take("iI")
    table = _Reader(reader.raw(size), 0)
    normalisation = {}
    for _ in range(entries):
        code, replaced = table.take("IB")
        normalisation[code] = "".join(map(chr, table.take(f"{replaced}I")))
    return Vocabulary(pieces, bos, eos, pad, unk, normalisation)


def _directory(reader: _Reader, data: bytes) -> dict[str, tuple[int, int, int]]:
    """Tensor name -> (kind, element count, byte offset)."""
    tensors = {}
    for _ in range(reader.ints(1)[0]):
        (length,) = reader.take("H")
        name = reader.raw(length).decode("ascii")
        kind, count, offset, size = reader.take("BIQQ")
        if offset + size > len(data):
            raise ValueError(f"tensor {name} runs past the end")
        tensors[name] = (kind, count, offset)
    return tensors


def _float32(data: bytes, entry: tuple[int, int, int], dims: tuple[int, ...]) -> np.ndarray:
    kind, count, offset = entry
    if kind != _F32 or count != math.prod(dims):
        raise ValueError(f"expected {dims} float32 values")
    return np.frombuffer(data, dtype="<f4", count=count, offset=offset).reshape(dims).copy()


def _blocks(data: bytes, entry: tuple[int, int, int], rows: int, columns: int) -> np.ndarray:
    kind, count, offset = entry
    if kind != _Q4 or count != rows * columns or columns % _BLOCK:
        raise ValueError(f"expected a {rows}x{columns} 4-bit matrix")
    size = rows * columns // _BLOCK * _BLOCK_BYTES
    raw = np.frombuffer(data, dtype=np.uint8, count=size, offset=offset)
    return raw.reshape(rows, columns // _BLOCK, _BLOCK_BYTES)


def _dequantised(blocks: np.ndarray) -> np.ndarray:
    """Q4_0 blocks (..., blocks, 18 bytes) as float32 (..., blocks * 32)."""
    scales = blocks[..., :2].copy().view("<f2").astype(np.float32)
    packed = blocks[..., 2:]
    values = np.concatenate((packed & 0x0F, packed >> 4), axis=-1).astype(np.float32) - 8.0
    return (values * scales).reshape(*blocks.shape[:-2], -1)


def _layer_norm(x: np.ndarray, norm: tuple[np.ndarray, np.ndarray], eps: float) -> np.ndarray:
    mean = x.mean(axis=-1, keepdims=True)
    centred = x - mean
    variance = (centred * centred).mean(axis=-1, keepdims=True)
    return centred / np.sqrt(variance + eps) * norm[0] + norm[1]


def _gelu(x: np.ndarray) -> np.ndarray:
    """GELU with the exact erf, by Abramowitz and Stegun 7.1.26 (error under 1.5e-7)."""
    z = np.abs(x) * np.float32(1 / math.sqrt(2))
    t = 1.0 / (1.0 + 0.3275911 * z)
    poly = t * (
        0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429)))
    )
    erf = 1.0 - poly * np.exp(-z * z)
    return (0.5 * x * (1.0 + np.sign(x) * erf)).astype(np.float32)


class SentencePieceTokenizer:
    """XLM-RoBERTa's unigram tokenizer from the vocabulary in the file: ids with <s> and </s>.

    The text is normalised character by character with the file's map, runs of
    spaces become one, a space is put in front and spaces become "▁"; the best
    segmentation by piece scores (Viterbi) is then taken over the whole text.
    """

    def __init__(self, vocabulary: Vocabulary, max_tokens: int) -> None:
        from tokenizers import Tokenizer, models, pre_tokenizers

        self._vocabulary = vocabulary
        self._max_tokens = max_tokens
        self._table = str.maketrans(vocabulary.normalisation)
        model = models.Unigram(vocabulary.pieces, unk_id=vocabulary.unk, byte_fallback=False)
        tokenizer = Tokenizer(model)
        tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(
            replacement=_METASPACE, prepend_scheme="always", split=False
        )
        self._tokenizer = tokenizer

    def ids(self, texts: list[str]) -> list[list[int]]:
        normalised = [_SPACES.sub(" ", text.translate(self._table)) for text in texts]
        content = self._max_tokens - 2
        v = self._vocabulary
        return [
            [v.bos, *encoding.ids[:content], v.eos]
            for encoding in self._tokenizer.encode_batch(normalised, add_special_tokens=False)
        ]
