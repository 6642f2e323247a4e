"""Fusing the lexical (BM25) and semantic (cosine) signals into one ranking.

Strategies are plain data, so settings files and diagnostics can name them:
``{"kind": "rrf", "k": 60, "bm25_weight": 1, "vector_weight": 1}``.

The default, equal weights on min-max normalised BM25 and cosine scores, was
chosen on the labelled set in ``bench/data`` (results in ``bench/RESULTS.md``):
it is within two answers (of 171 queries) of the best recall@5 and recall@10 of
every strategy tried, and no other weighting is best on both; it keeps the
recall of vectors alone on paraphrases (which share no word with the memory, so
BM25 cannot help) and adds BM25's lift on questions naming exact people and
things, on questions that need two memories and on long role-play messages,
where one embedding of the whole scene blurs the hint. Reciprocal rank fusion
lost paraphrase recall: it gives BM25's best guess the same weight as the
vector's even when the lexical match is weak. A heavier BM25 weight that won on
the first 28 long chat queries lost on the next 28, so 0.5 stays.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import asdict, dataclass, fields
from typing import Any, Literal, Protocol, TypeVar

from charmemory.core.time_question import TimeFocus

Signal = Literal["bm25", "vector"]
_SIGNALS: tuple[Signal, ...] = ("bm25", "vector")


class Scored(Protocol):
    """A candidate as an index reports it; ranks are 1-based."""

    @property
    def key(self) -> str: ...
    @property
    def cosine(self) -> float: ...
    @property
    def vector_rank(self) -> int: ...
    @property
    def bm25(self) -> float | None: ...
    @property
    def bm25_rank(self) -> int | None: ...


C = TypeVar("C", bound=Scored)
# A memory block (any key) and how many memories it holds.
Block = tuple[Hashable, int]


@dataclass(frozen=True)
class SingleSignal:
    """Rank by one signal alone (the baselines)."""

    signal: Signal = "vector"


@dataclass(frozen=True)
class ReciprocalRank:
    """Sum of weight / (k + rank) over the signals that found the candidate."""

    k: int = 60
    bm25_weight: float = 1.0
    vector_weight: float = 1.0


@dataclass(frozen=True)
class WeightedScores:
    """Weighted sum of both scores, each min-max normalised over the candidates."""

    bm25_weight: float = 0.5
    vector_weight: float = 0.5


@dataclass(frozen=True)
class Gated:
    """Only candidates whose ``gate`` score reaches ``min_score`` pass; ``rank_by`` orders them.

    Passing candidates without a ``rank_by`` score follow, in ``gate`` order.
    """

    gate: Signal = "vector"
    min_score: float = 0.3
    rank_by: Signal = "bm25"


Fusion = SingleSignal | ReciprocalRank | WeightedScores | Gated

_KINDS: dict[str, type[Fusion]] = {
    "single": SingleSignal,
    "rrf": ReciprocalRank,
    "weighted": WeightedScores,
    "gated": Gated,
}

DEFAULT_FUSION: Fusion = WeightedScores()


def fusion_to_dict(fusion: Fusion) -> dict[str, Any]:
    kind = next(name for name, cls in _KINDS.items() if isinstance(fusion, cls))
    return {"kind": kind, **asdict(fusion)}


def fusion_from_dict(data: Mapping[str, Any]) -> Fusion:
    """Read a strategy from settings; ValueError names what is wrong."""
    kind = data.get("kind")
    if kind not in _KINDS:
        raise ValueError(f"unknown fusion kind {kind!r} (known: {', '.join(_KINDS)})")
    cls = _KINDS[kind]
    allowed = {f.name for f in fields(cls)}
    unknown = set(data) - allowed - {"kind"}
    if unknown:
        raise ValueError(f"unknown {kind} fusion setting(s): {', '.join(sorted(unknown))}")
    fusion = cls(**{key: value for key, value in data.items() if key != "kind"})
    for item in fields(fusion):
        value = getattr(fusion, item.name)
        if item.name in ("signal", "gate", "rank_by"):
            if value not in _SIGNALS:
                raise ValueError(f"{item.name} must be one of {', '.join(_SIGNALS)}")
        # bool is an int in Python; `true` for a weight is a mistake, not 1.
        elif isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
            raise ValueError(f"{kind} fusion {item.name} must be a number >= 0, not {value!r}")
    return fusion


def _score(candidate: Scored, signal: Signal) -> float | None:
    return candidate.bm25 if signal == "bm25" else candidate.cosine


def _rank(candidate: Scored, signal: Signal) -> int | None:
    return candidate.bm25_rank if signal == "bm25" else candidate.vector_rank


def _normaliser(candidates: Sequence[Scored], signal: Signal) -> Callable[[Scored], float]:
    values = [v for c in candidates if (v := _score(c, signal)) is not None]
    low, high = (min(values), max(values)) if values else (0.0, 0.0)

    def normalised(candidate: Scored) -> float:
        value = _score(candidate, signal)
        if value is None:
            return 0.0
        return 1.0 if high == low else (value - low) / (high - low)

    return normalised


def fuse(candidates: Sequence[C], fusion: Fusion) -> list[tuple[C, float]]:
    """Candidates that the strategy keeps, best first, with the fused score."""
    scored: list[tuple[C, float]]
    if isinstance(fusion, SingleSignal):
        scored = [(c, s) for c in candidates if (s := _score(c, fusion.signal)) is not None]
    elif isinstance(fusion, ReciprocalRank):
        weights = {"bm25": fusion.bm25_weight, "vector": fusion.vector_weight}
        scored = [
            (c, sum(w / (fusion.k + r) for s, w in weights.items() if (r := _rank(c, s))))
            for c in candidates
        ]
    elif isinstance(fusion, WeightedScores):
        bm25, vector = _normaliser(candidates, "bm25"), _normaliser(candidates, "vector")
        scored = [
            (c, fusion.bm25_weight * bm25(c) + fusion.vector_weight * vector(c)) for c in candidates
        ]
    else:
        passing = [
            c
            for c in candidates
            if (gate := _score(c, fusion.gate)) is not None and gate >= fusion.min_score
        ]
        primary = _normaliser(passing, fusion.rank_by)
        fallback = _normaliser(passing, fusion.gate)
        # Candidates with a rank_by score (2..3) sort above those without (0..1).
        scored = [
            (c, 2.0 + primary(c) if _score(c, fusion.rank_by) is not None else fallback(c))
            for c in passing
        ]
    return sorted(scored, key=lambda pair: (-pair[1], pair[0].vector_rank))


def select(
    candidates: Sequence[C],
    fusion: Fusion,
    *,
    top_k: int,
    min_cosine: float = 0.0,
    dedupe_by: Callable[[C], str] | None = None,
    time: TimeFocus | None = None,
    block_of: Callable[[C], Block | None] | None = None,
    block_weight: float = 0.0,
) -> list[tuple[C, float]]:
    """Fuse, drop candidates under ``min_cosine``, collapse duplicates, keep ``top_k``.

    ``block_of`` tells a candidate's memory block (any key) and how many memories
    the block holds; each candidate then gains ``block_weight`` times the mean
    fused score of its block's other memories (those not among the candidates
    count 0). A role-play scene is remembered as one block, and a chat that
    recalls it matches several of its memories a little rather than one well:
    on the labelled set, 0.2 raised long chat queries' recall@5 from 0.643 to
    0.723 and no kind of query lost (bench/RESULTS.md).

    With ``time`` (a question about time), memories on the days it asks about come
    first, whatever their cosine, and the earliest or latest close match is preferred.
    """
    chosen: list[tuple[C, float]] = []
    seen: set[str] = set()
    fused = fuse(candidates, fusion)
    if block_of is not None and block_weight:
        fused = _with_block_context(fused, block_of, block_weight)
    if time is not None:
        fused = time.reranked(fused)
    for candidate, score in fused:
        if candidate.cosine < min_cosine and not (time is not None and time.in_days(candidate)):
            continue
        if dedupe_by is not None:
            marker = dedupe_by(candidate)
            if marker in seen:
                continue
            seen.add(marker)
        chosen.append((candidate, score))
        if len(chosen) == top_k:
            break
    return chosen


def _with_block_context(
    fused: list[tuple[C, float]], block_of: Callable[[C], Block | None], weight: float
) -> list[tuple[C, float]]:
    blocks = [block_of(candidate) for candidate, _ in fused]
    totals: dict[Hashable, float] = defaultdict(float)
    for (_, score), block in zip(fused, blocks, strict=True):
        if block is not None:
            totals[block[0]] += score
    rescored = [
        (candidate, score + weight * (totals[block[0]] - score) / (block[1] - 1))
        if block is not None and block[1] > 1
        else (candidate, score)
        for (candidate, score), block in zip(fused, blocks, strict=True)
    ]
    return sorted(rescored, key=lambda pair: (-pair[1], pair[0].vector_rank))
