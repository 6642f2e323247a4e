import pytest

from charmemory.adapters.llm.embedded_prompt import (
    EXAMPLE_ANSWER,
    asks_for_memories,
    compact_prompt,
    extraction_request,
    memory_grammar,
)
from charmemory.core.extraction_answer import parse_answer
from charmemory.core.extraction_prompt import (
    DEFAULT_EXTRACTION_PROMPT,
    PromptValues,
    render_prompt,
)
from charmemory.ports import ChatMessage

CHAT = 'Alex: "My brother Rowan works the salt kilns."\n\nMira: "Then we fly there at dawn."'


def rendered(existing: str = "", card: str = "Mira captains the airship Kestrel.") -> list:
    values = PromptValues("Mira", "Alex", card, existing, CHAT, max_bullets=5)
    return [
        ChatMessage(role, content)  # type: ignore[arg-type]
        for role, content in render_prompt(DEFAULT_EXTRACTION_PROMPT, values)
    ]


def test_the_default_extraction_prompt_is_read_back_into_its_sections() -> None:
    request = extraction_request(rendered())
    assert request is not None
    assert request.card == "Mira captains the airship Kestrel."
    assert request.chat == CHAT
    assert request.existing_memories == ""  # the "(none saved yet)" placeholder
    assert request.max_bullets == 5
    assert (request.char, request.user) == ("Mira", "Alex")


def test_the_short_prompt_says_who_is_who_and_writes_out_the_card_placeholders() -> None:
    request = extraction_request(rendered(card="{{char}} flies the Kestrel; {{ User }} is aboard."))
    assert request is not None
    final = compact_prompt(request)[-1].content
    assert final.startswith("The character is Mira. The user plays Alex.\n\n<character_card>")
    assert "Mira flies the Kestrel; Alex is aboard." in final


def test_saved_memories_are_carried_into_the_rules_as_prose() -> None:
    existing = "From 2026-02-15 10:42:\n- Alex is afraid of heights.\n- Rowan is missing."
    request = extraction_request(rendered(existing=existing))
    assert request is not None
    prompt = compact_prompt(request)
    assert [m.role for m in prompt] == ["system", "user", "assistant", "user"]
    assert prompt[0].content.endswith(
        "never write these again: Alex is afraid of heights. Rowan is missing."
    )
    # Not as a list beside the chat: a small model copies such a list back.
    final = prompt[-1].content
    assert "afraid of heights" not in final
    assert final.endswith(f"<chat_messages>\n{CHAT}\n</chat_messages>")
    assert "at most 5 bullets" in prompt[0].content


def test_without_the_worked_example_the_prompt_is_rules_then_request() -> None:
    request = extraction_request(rendered(card=""))
    assert request is not None
    prompt = compact_prompt(request, worked_example=False)
    assert [m.role for m in prompt] == ["system", "user"]
    assert "<existing_memories>" not in prompt[1].content
    assert "(no character card)" in prompt[1].content


def test_a_prompt_that_names_nobody_gets_the_short_prompt_without_names() -> None:
    unnamed = [
        ChatMessage("system", "Write memories or NO_NEW_MEMORIES."),
        ChatMessage(
            "user",
            f"<character_card>\n{{{{char}}}} sails.\n</character_card>\n\n"
            f"<chat_messages>\n{CHAT}\n</chat_messages>",
        ),
    ]
    request = extraction_request(unnamed)
    assert request is not None and (request.char, request.user) == ("", "")
    final = compact_prompt(request)[-1].content
    assert final.startswith("<character_card>\n{{char}} sails.")


def test_other_requests_are_left_alone() -> None:
    hello = [ChatMessage("user", "Reply with exactly this text: CHARMEMORY-OK")]
    assert not asks_for_memories(hello)
    assert extraction_request(hello) is None
    # A custom prompt that names the sentinel but has no chat section is sent as written.
    custom = [ChatMessage("user", f"Summarise this chat or say NO_NEW_MEMORIES.\n{CHAT}")]
    assert asks_for_memories(custom)
    assert extraction_request(custom) is None


def test_the_worked_example_answer_is_what_the_parser_reads() -> None:
    parsed = parse_answer(EXAMPLE_ANSWER, max_bullets=8)
    assert len(parsed.bullets) == 3 and not parsed.warnings


def test_the_grammar_allows_as_many_bullets_as_asked() -> None:
    grammar = memory_grammar(3)
    root = grammar.splitlines()[0]
    assert root.count("bullet") == 3 and root.count("bullet?") == 2
    assert '"NO_NEW_MEMORIES"' in root
    with pytest.raises(ValueError, match="at least 1"):
        memory_grammar(0)


def test_the_grammar_compiles_in_llama_cpp() -> None:
    llama_cpp = pytest.importorskip("llama_cpp")
    llama_cpp.LlamaGrammar.from_string(memory_grammar(8), verbose=False)
