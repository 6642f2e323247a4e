import pytest

from charmemory.core.restatement import news_in, restates, sentences

SAVED = "Tomas counted nineteen lanterns on the pier."


@pytest.mark.parametrize(
    ("new", "cosine"),
    [
        ("The lanterns Tomas counted on the pier numbered nineteen.", 0.94),  # very close
        ("Tomas counted the lanterns on the pier: nineteen.", 0.78),  # close, same words
    ],
)
def test_the_same_fact_in_other_words_is_a_restatement(new: str, cosine: float) -> None:
    assert restates(new, SAVED, cosine)


@pytest.mark.parametrize(
    ("new", "cosine", "why"),
    [
        ("Tomas counted twenty lanterns on the pier.", 0.95, "a new number is an update"),
        ("Tomas counted nineteen lanterns on the pier at Hollowmere.", 0.93, "a new name"),
        ("Tomas no longer counted lanterns on the pier.", 0.92, "negated"),
        ("Tomas didn't count nineteen lanterns on the pier.", 0.92, "negated"),
        ("Tomas repaired the pier after the storm with nineteen planks.", 0.7, "new words"),
        ("Tomas counted nineteen lanterns on the pier.", 0.5, "not close"),
    ],
)
def test_news_is_never_a_restatement(new: str, cosine: float, why: str) -> None:
    assert not restates(new, SAVED, cosine), why


def test_a_name_at_the_start_of_the_saved_memory_counts_as_said() -> None:
    assert restates(
        "Eleanor, Hale's late wife, was a linguist.", "Hale's wife Eleanor, a linguist, died.", 0.9
    )


def test_one_new_word_below_the_closest_cosines_is_news() -> None:
    saved = "Mira's grandmother gave her a silver amulet shaped like a swallow."
    lost = "Mira lost the silver swallow amulet her grandmother gave her."
    assert not restates(lost, saved, 0.86)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Mira sails. Alex stays!", ["Mira sails.", "Alex stays!"]),
        ('She said "Go." Then she left.', ['She said "Go."', "Then she left."]),
        (
            'The desk reads "E. — I love you — E." in ink.',
            ['The desk reads "E. — I love you — E." in ink.'],
        ),
        ("Dr. Hale met Mrs. Okafor and J. R. Pike.", ["Dr. Hale met Mrs. Okafor and J. R. Pike."]),
        ("The fare was 3.5 crowns. it rained", ["The fare was 3.5 crowns. it rained"]),
        ("Он пришёл. Она ушла.", ["Он пришёл.", "Она ушла."]),
        ("  one clause, no end  ", ["one clause, no end"]),
    ],
)
def test_a_bullet_is_cut_into_its_sentences(text: str, expected: list[str]) -> None:
    assert sentences(text) == expected


def test_the_cut_end_of_a_copied_bullet_is_not_news() -> None:
    copied = ["Hale has an oak desk.", "Okafor signs the cheques.", "Margaret is the […]"]
    assert news_in(copied, [True, True, False]) == []
    assert news_in(copied, [False, True, False]) == ["Hale has an oak desk."]
    # Cut, but nothing in it restated: all of it is news.
    assert news_in(copied, [False, False, False]) == copied
    assert news_in(["Hale has an oak desk.", "Sam sings."], [True, False]) == ["Sam sings."]
