import pytest

from charmemory.core.language import written_in_english


@pytest.mark.parametrize(
    ("texts", "english"),
    [
        (["Elara is afraid of deep water since her brother drowned.",
          "{{user}} taught her to swim in the mill pond."], True),
        (["林小满在巷口开了一家面馆。", "{{user}}每天都来吃面。"], False),
        (["Ярослава потеряла лодку у старой мельницы."], False),
        (["Elena encontró la llave de plata en el molino y se la dio a su hermana."], False),
        (["O capitão vendeu o mapa antigo no mercado do porto."], False),
        ([], True),
        (["1234 — !!"], True),
    ],
)  # fmt: skip
def test_english_is_told_from_other_languages(texts: list[str], english: bool) -> None:
    assert written_in_english(texts) is english
