import re

import pytest

from charmemory.core.fusion import ReciprocalRank
from charmemory.core.retrieval import EmbeddingContext
from charmemory.core.retrieval_settings import (
    SPECS,
    RetrievalSettings,
    merge_settings,
    parse_setting_text,
    setting_key,
    setting_values,
    validate_setting,
)
from charmemory.errors import ConfigError


def test_defaults_round_trip_through_the_stored_form() -> None:
    values = setting_values(RetrievalSettings())
    assert set(values) == set(SPECS)
    stored = {setting_key(name): value for name, value in values.items()}
    assert merge_settings(stored) == RetrievalSettings()


def test_a_character_value_wins_and_none_means_not_set() -> None:
    settings = merge_settings(
        {"retrieval.top_k": 8, "retrieval.embed_date": True, "llm.model": "x"},
        {"retrieval.top_k": 3, "retrieval.embed_date": None, "retrieval.depth": 2},
    )
    assert settings.top_k == 3
    assert settings.context == EmbeddingContext(topic=True, date=True)
    assert settings.injection.depth == 2
    assert merge_settings({"retrieval.top_k": None}).top_k == 5


def test_chunk_granularity_behaves_like_the_data_bank() -> None:
    settings = merge_settings(
        {"retrieval.granularity": "chunk", "retrieval.chunk_size": 1000, "retrieval.chunk_count": 3}
    )
    assert (settings.retrieved, settings.chunks.chunk_size) == (3, 1000)
    injection = settings.injection_in_force
    assert injection.token_budget is None and injection.item_template == "{{text}}"
    assert injection.template == "Related information:\n{{text}}"
    assert RetrievalSettings().injection_in_force.token_budget == 400
    assert RetrievalSettings().retrieved == 5


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("retrieval.top_k", 0, "between 1 and 50, not 0"),
        ("retrieval.top_k", True, "must be a whole number, not True"),
        ("retrieval.min_cosine", 1.5, "between 0 and 1, not 1.5"),
        ("retrieval.granularity", "page", "must be one of bullet, chunk, not 'page'"),
        ("retrieval.template", "Memories:", "must be text holding {{text}}"),
        ("retrieval.fusion", {"kind": "magic"}, "unknown fusion kind 'magic'"),
        ("retrieval.fusion", "rrf", 'must be an object such as {"kind": "weighted"}'),
        ("retrieval.dedupe", "yes", "must be true or false"),
        ("retrieval.colour", 1, "unknown setting 'retrieval.colour'; known: retrieval.granularity"),
    ],
)
def test_bad_values_are_refused_with_their_reason(key: str, value: object, message: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(message)):
        validate_setting(key, value)
    with pytest.raises(ConfigError):
        merge_settings({key: value})


def test_an_unknown_key_names_its_scope() -> None:
    with pytest.raises(ConfigError, match=r"'retrieval\.topk' in the character settings"):
        merge_settings({}, {"retrieval.topk": 3})


def test_typed_text_becomes_a_checked_value() -> None:
    assert parse_setting_text("retrieval.top_k", " 7 ") == 7
    assert parse_setting_text("retrieval.min_cosine", "0.25") == 0.25
    assert parse_setting_text("retrieval.dedupe", "off") is False
    assert parse_setting_text("retrieval.template", "Memories:\\n{{text}}") == "Memories:\n{{text}}"
    fusion = parse_setting_text("retrieval.fusion", '{"kind": "rrf", "k": 10}')
    assert merge_settings({"retrieval.fusion": fusion}).fusion == ReciprocalRank(k=10)
    with pytest.raises(ConfigError, match="must be a number, not 'many'"):
        parse_setting_text("retrieval.top_k", "many")
    with pytest.raises(ConfigError, match="must be a JSON object"):
        parse_setting_text("retrieval.fusion", "rrf")
    assert setting_key("top_k") == setting_key("retrieval.top_k") == "retrieval.top_k"
    assert validate_setting("retrieval.top_k", None) is None
