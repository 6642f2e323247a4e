import pytest

from charmemory.adapters.russian_stemmer import russian_stem


@pytest.mark.parametrize(
    ("word", "stem"),
    [
        # Expected stems from the Snowball reference implementation for Russian.
        ("лодка", "лодк"),
        ("лодками", "лодк"),
        ("лодку", "лодк"),
        ("мельницы", "мельниц"),
        ("потеряла", "потеря"),
        ("красивейший", "красив"),
        ("одевшись", "одевш"),
        ("сделавшись", "сдела"),
        ("бывшими", "бывш"),
        ("подружиться", "подруж"),
        ("читающий", "чита"),
        ("ёлка", "елк"),
        ("радость", "радост"),
        ("гордость", "гордост"),
        ("в", "в"),
    ],
)
def test_stems_as_snowball_does(word: str, stem: str) -> None:
    assert russian_stem(word) == stem
