import re

import pytest

from charmemory.core.fusion import ReciprocalRank
from charmemory.core.retrieval import EmbeddingContext
from charmemory.core.retrieval_settings import SETTINGS, RetrievalSettings, from_values
from charmemory.core.settings.registry import setting_named
from charmemory.core.settings.spec import checked, parse_text
from charmemory.errors import ConfigError


def test_the_declared_defaults_are_the_settings_defaults() -> None:
    assert from_values({}) == RetrievalSettings()
    stored = {setting.name: setting.default for setting in SETTINGS}
    assert from_values(stored) == RetrievalSettings()


def test_values_by_full_name_become_settings() -> None:
    settings = from_values(
        {"retrieval.top_k": 3, "retrieval.embed_date": True, "retrieval.depth": 2, "model.x": 1}
    )
    assert settings.top_k == 3
    assert settings.context == EmbeddingContext(topic=True, date=True)
    assert settings.injection.depth == 2
    assert from_values({"retrieval.top_k": None}).top_k == 5


def test_chunk_granularity_behaves_like_the_data_bank() -> None:
    settings = from_values(
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
        ("retrieval.fusion", "rrf", 'must be an object such as {"kind": "rrf", "k": 60}'),
        ("retrieval.dedupe", "yes", "must be true or false"),
    ],
)
def test_bad_values_are_refused_with_their_reason(key: str, value: object, message: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(message)):
        checked(setting_named(key), value)
    with pytest.raises(ConfigError):
        from_values({key: value})


def test_typed_text_becomes_a_checked_value() -> None:
    def parsed(name: str, text: str) -> object:
        return parse_text(setting_named(name), text)

    assert parsed("retrieval.top_k", " 7 ") == 7
    assert parsed("retrieval.min_cosine", "0.25") == 0.25
    assert parsed("retrieval.dedupe", "off") is False
    assert parsed("retrieval.template", "Memories:\\n{{text}}") == "Memories:\n{{text}}"
    fusion = parsed("retrieval.fusion", '{"kind": "rrf", "k": 10}')
    assert from_values({"retrieval.fusion": fusion}).fusion == ReciprocalRank(k=10)
    with pytest.raises(ConfigError, match="must be a whole number, not 'many'"):
        parsed("retrieval.top_k", "many")
    with pytest.raises(ConfigError, match="is not valid JSON"):
        parsed("retrieval.fusion", "rrf")
