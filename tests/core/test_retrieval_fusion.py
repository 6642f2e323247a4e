import pytest

from charmemory.core.fusion import (
    DEFAULT_FUSION,
    Gated,
    ReciprocalRank,
    SingleSignal,
    WeightedScores,
    fuse,
    fusion_from_dict,
    fusion_to_dict,
    select,
)
from charmemory.ports import IndexHit


def hit(
    key: str,
    cosine: float,
    vector_rank: int,
    bm25: float | None = None,
    bm25_rank: int | None = None,
) -> IndexHit:
    return IndexHit(key, f"text {key}", {}, cosine, vector_rank, bm25, bm25_rank)


BOTH = hit("both", 0.60, 2, 3.0, 2)
VECTOR_ONLY = hit("vector", 0.70, 1)
LEXICAL_ONLY = hit("lexical", 0.20, 9, 5.0, 1)
CANDIDATES = [VECTOR_ONLY, BOTH, LEXICAL_ONLY]


def keys(ranked: list[tuple[IndexHit, float]]) -> list[str]:
    return [candidate.key for candidate, _ in ranked]


def test_rrf_favours_what_both_signals_found() -> None:
    ranked = fuse(CANDIDATES, ReciprocalRank(k=60))
    assert keys(ranked) == ["both", "lexical", "vector"]
    assert ranked[0][1] == pytest.approx(1 / 62 + 1 / 62)


def test_rrf_weights_shift_the_balance() -> None:
    assert keys(fuse(CANDIDATES, ReciprocalRank(bm25_weight=0.0)))[:2] == ["vector", "both"]
    assert keys(fuse(CANDIDATES, ReciprocalRank(vector_weight=0.0)))[:2] == ["lexical", "both"]


def test_a_single_signal_keeps_only_what_it_found() -> None:
    assert keys(fuse(CANDIDATES, SingleSignal("bm25"))) == ["lexical", "both"]
    assert keys(fuse(CANDIDATES, SingleSignal("vector"))) == ["vector", "both", "lexical"]


def test_weighted_scores_normalise_each_signal() -> None:
    ranked = dict((c.key, s) for c, s in fuse(CANDIDATES, WeightedScores(0.5, 0.5)))
    assert ranked["vector"] == pytest.approx(0.5 * 0 + 0.5 * 1)
    assert ranked["lexical"] == pytest.approx(0.5 * 1 + 0.5 * 0)
    assert ranked["both"] == pytest.approx(0.5 * (3 - 3) / 2 + 0.5 * (0.6 - 0.2) / 0.5)


def test_a_gate_filters_and_the_other_signal_orders() -> None:
    ranked = fuse(CANDIDATES, Gated(gate="vector", min_score=0.5, rank_by="bm25"))
    assert keys(ranked) == ["both", "vector"]
    lexical_gate = fuse(CANDIDATES, Gated(gate="bm25", min_score=0.0, rank_by="vector"))
    assert keys(lexical_gate) == ["both", "lexical"]


def test_the_default_is_equal_weights_on_normalised_scores() -> None:
    assert WeightedScores(bm25_weight=0.5, vector_weight=0.5) == DEFAULT_FUSION


def test_strategies_round_trip_through_plain_data() -> None:
    for fusion in (DEFAULT_FUSION, SingleSignal("bm25"), WeightedScores(0.2, 0.8), Gated()):
        assert fusion_from_dict(fusion_to_dict(fusion)) == fusion
    assert fusion_to_dict(ReciprocalRank()) == {
        "kind": "rrf",
        "k": 60,
        "bm25_weight": 1.0,
        "vector_weight": 1.0,
    }


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"kind": "magic"}, "unknown fusion kind 'magic'"),
        ({"kind": "rrf", "depth": 3}, "unknown rrf fusion setting"),
        ({"kind": "single", "signal": "smell"}, "signal must be one of bm25, vector"),
        ({"kind": "weighted", "bm25_weight": "a lot"}, "bm25_weight must be a number >= 0"),
        ({"kind": "rrf", "k": True}, "k must be a number >= 0, not True"),
        ({"kind": "gated", "min_score": -1}, "min_score must be a number >= 0"),
    ],
)
def test_bad_strategy_data_is_named(data: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        fusion_from_dict(data)


def test_select_applies_threshold_dedupe_and_top_k() -> None:
    twin = IndexHit("twin", "text both", {}, 0.55, 3, 2.0, 3)
    chosen = select(
        [*CANDIDATES, twin],
        ReciprocalRank(),
        top_k=5,
        min_cosine=0.5,
        dedupe_by=lambda c: c.text,
    )
    assert keys(chosen) == ["both", "vector"]
    assert keys(select(CANDIDATES, ReciprocalRank(), top_k=1)) == ["both"]


def test_a_memory_whose_block_also_matches_gains_on_one_that_stands_alone() -> None:
    scene = [hit("scene", 0.60, 2), hit("scene mate", 0.55, 3), hit("scene mate 2", 0.50, 4)]
    alone = hit("alone", 0.62, 1)
    blocks = {"scene": "b1", "scene mate": "b1", "scene mate 2": "b1", "alone": "b2"}
    sizes = {"b1": 4, "b2": 3}  # each block holds memories that are not candidates

    def block_of(candidate: IndexHit) -> tuple[str, int]:
        return blocks[candidate.key], sizes[blocks[candidate.key]]

    fusion = SingleSignal("vector")
    plain = select([alone, *scene], fusion, top_k=2)
    in_context = select([alone, *scene], fusion, top_k=2, block_of=block_of, block_weight=0.2)

    assert keys(plain) == ["alone", "scene"]
    assert keys(in_context) == ["scene", "scene mate"]
    # The bonus: 0.2 x the mean score of the block's other memories, absent ones as 0.
    assert in_context[0][1] == pytest.approx(0.60 + 0.2 * (0.55 + 0.50) / 3)
