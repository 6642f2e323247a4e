"""An int8 copy of a collection's vectors, for finding which rows to score exactly.

A query against 100,000 x 384 float32 vectors reads 150 MB, and that reading is
what a brute-force search costs. Each row is also kept as int8 codes times one
float scale (a quarter of the bytes), and SimSIMD's integer dot products over
the codes give an estimate of every cosine in a fraction of the time
(bench/RESULTS.md).

The estimate comes with a bound, so it never changes the answer: for a row x
kept as x' = scale * codes, and a query q kept the same way as q',

    |q.x - q'.x'| = |(q - q').x' + q.(x - x')| <= |q - q'| |x'| + |q| |x - x'|

The integer dot product is exact, so the bound only needs a margin for the
float arithmetic around it and the float32 cosines it is compared with. A
row whose estimate plus its bound falls short of what the k-th best row is sure
to reach cannot be among the best k; only the others are scored in float32
(typically a few hundred of 100,000).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np
import simsimd

from charmemory.adapters.row_merge import kept_then

PARALLEL_ROWS = 50_000  # from this many rows on, the estimate runs on two threads
THREADS = min(2, os.cpu_count() or 1)
# Rounding, relative to |q| |x'| per dimension: a float32 dot product of d terms is off
# by at most d units of 2**-24 (summed naively; numpy sums closer), doubled for the
# float32 scales and the float64 estimate. 4.6e-5 at 384 dimensions, against bounds
# of about 0.015.
_ROUNDING_PER_DIMENSION = 2.0**-23
_CHUNK = 4_096  # rows quantised at a time: the temporary array stays in cache


@dataclass(frozen=True)
class Int8Vectors:
    codes: np.ndarray  # int8 (n, dimensions)
    scales: np.ndarray  # float32 (n,): row = scale * codes + what rounding left
    norms: np.ndarray  # float32 (n,): |scale * codes|
    errors: np.ndarray  # float32 (n,): |row - scale * codes|

    @classmethod
    def build(cls, vectors: np.ndarray) -> Int8Vectors:
        """From float32 rows, quantised with one scale per row."""
        rows = len(vectors)
        codes = np.empty(vectors.shape, dtype=np.int8)
        scales = np.empty(rows, dtype=np.float32)
        norms = np.empty(rows, dtype=np.float32)
        errors = np.empty(rows, dtype=np.float32)
        for start in range(0, rows, _CHUNK):
            part = slice(start, start + _CHUNK)
            codes[part], scales[part], norms[part], errors[part] = _quantise(vectors[part])
        return cls(codes, scales, norms, errors)

    def merged(self, keep: np.ndarray, fresh: Int8Vectors, order: np.ndarray | None) -> Int8Vectors:
        """The rows ``keep`` marks, then ``fresh``'s, taken in ``order`` if one is given."""
        # Not dataclasses.astuple: it deep-copies every array first.
        parts = (
            kept_then(mine, keep, theirs, order)
            for mine, theirs in zip(self._arrays(), fresh._arrays(), strict=True)
        )
        return Int8Vectors(*parts)

    def _arrays(self) -> tuple[np.ndarray, ...]:
        return (self.codes, self.scales, self.norms, self.errors)

    def estimate(self, query: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Each row's estimated dot product with ``query``, and how far off it may be."""
        codes, scales, _, errors = _quantise(query[None, :])
        threads = THREADS if len(self.codes) >= PARALLEL_ROWS else 1
        products = simsimd.cdist(codes, self.codes, metric="dot", threads=threads)
        estimate = np.asarray(products, dtype=np.float64).reshape(-1)
        estimate *= self.scales * float(scales[0])
        length = float(np.linalg.norm(query))
        rounding = _ROUNDING_PER_DIMENSION * self.codes.shape[1] * length
        bound = self.norms * (float(errors[0]) + rounding)
        bound += length * self.errors
        return estimate, bound


def _quantise(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Codes, scales, the norms of what the codes stand for, and the errors left.

    In float32 and in place: at 100,000 x 384 this takes about 0.15 s, a sixth of
    what float64 temporaries took.
    """
    largest = np.abs(rows).max(axis=1)
    scales = np.where(largest > 0, largest / 127, 1).astype(np.float32)
    work = rows / scales[:, None]
    np.rint(work, out=work)
    np.clip(work, -127, 127, out=work)
    codes = work.astype(np.int8)
    work *= scales[:, None]  # what the codes stand for
    norms = np.sqrt(np.vecdot(work, work))
    work -= rows
    return codes, scales, norms, np.sqrt(np.vecdot(work, work))
