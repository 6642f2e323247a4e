import pytest

from charmemory.core.bullet_length import (
    CUT_MARKER,
    MemoryTooLongError,
    cut_to_length,
    require_within_limit,
)


def test_a_memory_within_the_limit_is_left_alone() -> None:
    assert cut_to_length("Mira owns a compass.", 20) == "Mira owns a compass."


def test_a_long_memory_is_cut_at_the_last_space_that_keeps_most_of_it() -> None:
    assert (
        cut_to_length("Mira owns a brass compass from Lyon.", 30)
        == "Mira owns a brass compass" + CUT_MARKER
    )


def test_a_long_memory_without_spaces_is_cut_where_the_limit_falls() -> None:
    cut = cut_to_length("x" * 50, 20)

    assert cut == "x" * (20 - len(CUT_MARKER)) + CUT_MARKER and len(cut) == 20


def test_a_typed_memory_over_the_limit_is_refused_with_the_setting_to_raise() -> None:
    require_within_limit(["short", "x" * 100], 100)
    with pytest.raises(MemoryTooLongError, match=r"at most 100 characters and this one has 101"):
        require_within_limit(["short", "x" * 101], 100)
    with pytest.raises(MemoryTooLongError, match=r"settings set extraction\.max_bullet_chars"):
        require_within_limit(["x" * 101], 100)
