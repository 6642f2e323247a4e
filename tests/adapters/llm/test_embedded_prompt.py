from charmemory.adapters.llm.embedded_prompt import (
    EXAMPLE_ANSWER,
    CompactStyle,
    compact_prompt,
    extraction_request,
    without_example_copies,
)
from charmemory.core.extraction_answer import SENTINEL, parse_answer
from charmemory.core.extraction_prompt import (
    DEFAULT_EXTRACTION_PROMPT,
    PromptValues,
    render_prompt,
)
from charmemory.ports import ChatMessage, NewMemories

CHAT = 'Alex: "My brother Rowan works the salt kilns."\n\nMira: "Then we fly there at dawn."'
WANTED = NewMemories(5, "Mira", "Alex")
# The user's own wording: it neither names the characters in the default prompt's
# sentence nor says "at most N bullets".
REWORDED = """\
@system
Be {{char}}'s diary. Note what matters about {{user}}; {{maxBullets}} notes tops.
@user
<character_card>
{{charCard}}
</character_card>

<chat_messages>
{{recentMessages}}
</chat_messages>
"""


def rendered(
    existing: str = "",
    card: str = "Mira captains the airship Kestrel.",
    template: str = DEFAULT_EXTRACTION_PROMPT,
) -> list:
    values = PromptValues("Mira", "Alex", card, existing, CHAT, max_bullets=5)
    return [
        ChatMessage(role, content)  # type: ignore[arg-type]
        for role, content in render_prompt(template, values)
    ]


def test_the_default_extraction_prompt_is_read_back_into_its_sections() -> None:
    request = extraction_request(rendered(), WANTED)
    assert request is not None
    assert request.card == "Mira captains the airship Kestrel."
    assert request.chat == CHAT
    assert request.existing_memories == ""  # the "(none saved yet)" placeholder
    assert request.max_bullets == 5
    assert (request.char, request.user) == ("Mira", "Alex")


def test_who_is_who_and_how_many_bullets_come_from_the_caller_not_the_wording() -> None:
    request = extraction_request(rendered(template=REWORDED), NewMemories(3, "Mira", "Alex"))
    assert request is not None
    assert (request.char, request.user, request.max_bullets) == ("Mira", "Alex", 3)
    assert (request.card, request.chat) == ("Mira captains the airship Kestrel.", CHAT)
    prompt = compact_prompt(request)
    assert prompt[-1].content.startswith("The character is Mira. The user plays Alex.")
    assert "at most 3 bullets" in prompt[0].content


def test_the_short_prompt_says_who_is_who_and_writes_out_the_card_placeholders() -> None:
    request = extraction_request(
        rendered(card="{{char}} flies the Kestrel; {{ User }} is aboard."), WANTED
    )
    assert request is not None
    final = compact_prompt(request)[-1].content
    assert final.startswith("The character is Mira. The user plays Alex.\n\n<character_card>")
    assert "Mira flies the Kestrel; Alex is aboard." in final


def test_saved_memories_are_carried_into_the_rules_as_prose() -> None:
    existing = "From 2026-02-15 10:42:\n- Alex is afraid of heights.\n- Rowan is missing."
    request = extraction_request(rendered(existing=existing), WANTED)
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
    request = extraction_request(rendered(card=""), WANTED)
    assert request is not None
    prompt = compact_prompt(request, CompactStyle(worked_example=False))
    assert [m.role for m in prompt] == ["system", "user"]
    assert "<existing_memories>" not in prompt[1].content
    assert "(no character card)" in prompt[1].content


def test_a_caller_that_names_nobody_gets_the_short_prompt_without_names() -> None:
    request = extraction_request(
        rendered(card="{{char}} sails.", template=REWORDED), NewMemories(max_bullets=8)
    )
    assert request is not None and (request.char, request.user) == ("", "")
    final = compact_prompt(request)[-1].content
    assert final.startswith("<character_card>\n{{char}} sails.")


def test_a_prompt_without_a_chat_section_has_no_short_form() -> None:
    custom = [ChatMessage("user", f"Summarise this chat or say NO_NEW_MEMORIES.\n{CHAT}")]
    assert extraction_request(custom, WANTED) is None


def test_the_worked_example_answer_is_what_the_parser_reads() -> None:
    parsed = parse_answer(EXAMPLE_ANSWER, max_bullets=8)
    assert len(parsed.bullets) == 3 and not parsed.warnings


def short_prompt(chat: str = CHAT, card: str = "Mira captains the airship Kestrel.") -> list:
    values = PromptValues("Mira", "Alex", card, "", chat, max_bullets=5)
    request = extraction_request(
        [ChatMessage(r, c) for r, c in render_prompt(DEFAULT_EXTRACTION_PROMPT, values)],  # type: ignore[arg-type]
        WANTED,
    )
    assert request is not None
    return compact_prompt(request)


def test_a_memory_copied_from_the_worked_example_is_dropped() -> None:
    answer = (
        "<memory>\n"
        "- Alex's brother Rowan works the salt kilns.\n"
        "- Alex agreed to pay Mira two sacks of barley and to sweep her deck on Sundays.\n"
        "- Mira promised to forge a memorial bell for the harbour by midwinter.\n"
        "- Alex's twin brother Tomas drowned last spring.\n"
        "</memory>"
    )
    kept = without_example_copies(answer, short_prompt())
    assert parse_answer(kept, max_bullets=8).bullets == [
        "Alex's brother Rowan works the salt kilns."
    ]


def test_a_chat_about_the_examples_things_keeps_its_memories() -> None:
    chat = (
        'Alex: "The harbour bell cracked, and my twin sister wants it recast."\n\n'
        'Mira: "I will forge a new bell by midwinter. Pay me in barley, two sacks."'
    )
    answer = (
        "<memory>\n- Mira promised to forge a new harbour bell by midwinter.\n"
        "- Alex will pay Mira two sacks of barley.\n</memory>"
    )
    assert without_example_copies(answer, short_prompt(chat)) == answer


def test_an_answer_that_only_copies_the_example_has_nothing_new() -> None:
    answer = "<memory>\n- Mira promised to forge a memorial bell for the harbour.\n</memory>"
    assert without_example_copies(answer, short_prompt()) == SENTINEL


def test_a_prompt_without_the_worked_example_keeps_every_bullet() -> None:
    answer = "<memory>\n- Mira promised to forge a memorial bell for the harbour.\n</memory>"
    assert without_example_copies(answer, rendered()) == answer
