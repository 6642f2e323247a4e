import pytest

from charmemory.core.consolidation_plan import SourceBlock
from charmemory.core.consolidation_prompt import (
    DEFAULT_PROMPTS,
    STRATEGIES,
    answer_allowance,
    call_tokens,
    check_context_budget,
    check_strategy,
    consolidation_messages,
)
from charmemory.errors import ConfigError
from charmemory.formats.memory_file import (
    parse_memory_file,
)

CHAT = 'Mira - 2026-02-15@10h00m00s123ms "storm"'
CHUNK = [
    SourceBlock(3, CHAT, "2026-02-15 10:42", ("Mira owns a compass.",)),
    SourceBlock(5, "pinned", "2026-03-01 09:00", ("Alex sings.", "Alex fears <memory> tags.")),
]


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_each_strategy_prompt_names_the_character(strategy: str) -> None:
    [(role, system), (_, user)] = consolidation_messages(DEFAULT_PROMPTS[strategy], "Mira", CHUNK)
    assert role == "system" and "Mira" in system and "{{" not in system
    assert "sources" in user


def test_a_prompt_written_for_the_charmemory_extension_names_the_character() -> None:
    [(_, system), _] = consolidation_messages(
        "Merge {{charName}}'s and {{ CHAR }}'s.", "Mira", CHUNK
    )
    assert system == "Merge Mira's and Mira's."


def test_the_memories_are_sent_as_numbered_blocks_the_answer_refers_to() -> None:
    [_, (_, user)] = consolidation_messages("Merge {{ char }}'s memories.", "Mira", CHUNK)
    sent = parse_memory_file(user).blocks
    assert [(b.attribute("id"), b.chat, b.date) for b in sent[:2]] == [
        ("1", CHAT, "2026-02-15 10:42"),
        ("2", "pinned", "2026-03-01 09:00"),
    ]
    assert [b.text for b in sent[1].bullets] == ["Alex sings.", "Alex fears \uff1cmemory> tags."]


def test_a_call_costs_its_prompt_and_the_room_for_an_answer_as_long_as_the_memories() -> None:
    messages = consolidation_messages(DEFAULT_PROMPTS["balanced"], "Mira", CHUNK)
    prompt_chars = sum(len(content) for _, content in messages)
    assert answer_allowance(CHUNK) * 4 >= len("".join(t for b in CHUNK for t in b.bullets))
    assert call_tokens(messages, CHUNK) >= prompt_chars / 4 + answer_allowance(CHUNK)


def test_strategies_budgets_and_empty_prompts_are_checked() -> None:
    assert check_strategy("aggressive") == "aggressive"
    with pytest.raises(ConfigError, match="conservative, balanced, aggressive"):
        check_strategy("reckless")
    assert check_context_budget("4000") == 4000
    with pytest.raises(ConfigError, match="at least"):
        check_context_budget(10)
    with pytest.raises(ConfigError, match="number of tokens"):
        check_context_budget("lots")
    with pytest.raises(ConfigError, match="empty"):
        consolidation_messages("  ", "Mira", CHUNK)
