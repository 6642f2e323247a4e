from charmemory.core.consolidation_answer import ProposedBlock
from charmemory.core.consolidation_diff import (
    consolidation_diff,
    diff_from_dict,
    diff_to_dict,
    review_warnings,
)
from charmemory.core.consolidation_plan import SourceBlock

SELECTED = [
    SourceBlock(0, "a", "2026-02-15 10:42", ("Mira owns a compass.", "Alex sings.")),
    SourceBlock(1, "b", "2026-03-01 09:00", ("mira owns a compass", "Mira fears deep water.")),
]


def test_memories_are_kept_removed_or_added_by_their_normalised_text() -> None:
    proposed = [
        ProposedBlock((0, 1), ("Mira owns a compass.", "Mira fears deep water and storms.")),
        ProposedBlock((0,), ("Alex sings.",)),
    ]
    diff = consolidation_diff(SELECTED, proposed)
    assert diff.kept == ("Mira owns a compass.", "Alex sings.")
    assert diff.removed == ("mira owns a compass", "Mira fears deep water.")
    assert diff.added == ("Mira fears deep water and storms.",)
    assert [m.sources for m in diff.merged] == [(0, 1)]
    assert (diff.bullets_before, diff.bullets_after) == (4, 3)
    assert (diff.blocks_before, diff.blocks_after) == (2, 2)
    assert diff_from_dict(diff_to_dict(diff)) == diff


def test_an_answer_that_changes_nothing_says_so() -> None:
    proposed = [ProposedBlock((b.index,), b.bullets) for b in SELECTED]
    assert consolidation_diff(SELECTED, proposed).changes_nothing


def test_a_conservative_pass_that_drops_most_memories_is_flagged() -> None:
    proposed = [ProposedBlock((0, 1), ("Mira owns a compass.",))]
    diff = consolidation_diff(SELECTED, proposed)
    [warning] = review_warnings("conservative", diff)
    assert "75%" in warning and "3 of 4" in warning
    assert review_warnings("aggressive", diff) == []
    mild = consolidation_diff(SELECTED, [ProposedBlock((0, 1), SELECTED[0].bullets[:2])])
    assert review_warnings("conservative", mild) == []


def test_the_diff_shows_notes_kept_and_blocks_an_answer_without_sources_replaced() -> None:
    noted = [SELECTED[0], SourceBlock(1, "b", "d", ("Mira fears deep water.",), ("Ask Alex.",))]
    proposed = [ProposedBlock((0, 1), ("Mira owns a compass.",), named_sources=False)]

    diff = consolidation_diff(noted, proposed)

    assert diff.notes == ("Ask Alex.",)
    assert diff.replaced == (0, 1)
    assert diff_from_dict(diff_to_dict(diff)) == diff
    # A preview stored before notes were shown still reads.
    older = {k: v for k, v in diff_to_dict(diff).items() if k not in ("notes", "replaced")}
    assert diff_from_dict(older).notes == ()
