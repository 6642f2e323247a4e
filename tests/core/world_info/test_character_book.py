from charmemory.core.world_info.character_book import book_from_character_book
from charmemory.formats.card import read_card
from charmemory.formats.lorebook import parse_lorebook
from tests.support.sillytavern_samples import sillytavern_sample

SAME = ("key", "keysecondary", "comment", "content", "constant", "selective", "order")
SAME += ("position", "disable", "addMemo", "probability", "useProbability", "depth", "group")


def test_a_cards_embedded_book_becomes_the_book_sillytavern_imports() -> None:
    card = read_card(sillytavern_sample("default_Seraphina.png").read_bytes())
    assert card.character_book is not None
    embedded = book_from_character_book(card.character_book)
    imported = parse_lorebook(sillytavern_sample("Eldoria.json").read_text(encoding="utf-8"))
    assert list(embedded.entries) == list(imported.entries)
    for uid, entry in imported.entries.items():
        made, read = embedded.entries[uid].to_dict(), entry.to_dict()
        assert {k: made[k] for k in SAME} == {k: read[k] for k in SAME}, uid


def test_v2_names_and_extensions_map_to_world_info_fields() -> None:
    book = book_from_character_book(
        {
            "entries": [
                {
                    "keys": ["harbour"],
                    "content": "The harbour is closed.",
                    "enabled": False,
                    "insertion_order": 7,
                    "position": "before_char",
                    "extensions": {"depth": 2, "probability": 40, "vectorized": True},
                },
                {"keys": "not a list", "content": 5},
            ]
        }
    )
    [entry] = book.entries.values()
    data = entry.to_dict()
    assert (data["key"], data["disable"], data["order"], data["position"]) == (
        ["harbour"],
        True,
        7,
        0,
    )
    assert (data["depth"], data["probability"], data["vectorized"]) == (2, 40, True)
