import pytest

from charmemory.adapters.llm.embedded_grammar import (
    answer_grammar,
    consolidation_grammar,
    memory_grammar,
)
from charmemory.ports import FREE_TEXT, ConsolidatedMemories, JsonAnswer, NewMemories

CITY = JsonAnswer(
    "city",
    {
        "type": "object",
        "properties": {"city": {"type": "string"}, "country": {"type": "string"}},
        "required": ["city", "country"],
    },
)


def test_each_format_gets_its_own_grammar_and_free_text_none() -> None:
    assert answer_grammar(FREE_TEXT) is None
    assert answer_grammar(NewMemories(4, "Mira", "Alex")) == memory_grammar(4)
    assert answer_grammar(ConsolidatedMemories(2)) == consolidation_grammar(2)


def test_new_memories_allow_as_many_bullets_as_asked_or_the_sentinel() -> None:
    root = memory_grammar(3).splitlines()[0]
    assert root.count("bullet") == 3 and root.count("bullet?") == 2
    assert '"NO_NEW_MEMORIES"' in root
    with pytest.raises(ValueError, match="at least 1"):
        memory_grammar(0)


def test_consolidated_blocks_may_name_only_the_blocks_sent() -> None:
    rules = dict(line.split(" ::= ", 1) for line in consolidation_grammar(3).splitlines())
    assert rules["source"] == '"1" | "2" | "3"'
    assert rules["block"].startswith('"<memory sources=\\"" source ("," source)*')
    assert "NO_NEW_MEMORIES" not in consolidation_grammar(3)
    with pytest.raises(ValueError, match="at least 1"):
        consolidation_grammar(0)


def test_a_json_answer_is_held_to_its_schema() -> None:
    pytest.importorskip("llama_cpp")
    grammar = answer_grammar(CITY)
    assert grammar is not None
    assert '\\"city\\"' in grammar and '\\"country\\"' in grammar


@pytest.mark.parametrize(
    "answer_format",
    [NewMemories(8), ConsolidatedMemories(12), CITY],
    ids=lambda answer_format: type(answer_format).__name__,
)
def test_every_grammar_compiles_in_llama_cpp(
    answer_format: NewMemories | ConsolidatedMemories | JsonAnswer,
) -> None:
    llama_cpp = pytest.importorskip("llama_cpp")
    llama_cpp.LlamaGrammar.from_string(answer_grammar(answer_format), verbose=False)
