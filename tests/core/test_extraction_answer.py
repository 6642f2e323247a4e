import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from charmemory.core.extraction_answer import (
    MIXED,
    NO_BULLETS,
    OVER_CAP,
    REFUSAL,
    SPEECH,
    TOO_LONG,
    TRUNCATED,
    ParsedAnswer,
    answer_in_reasoning,
    merge_blocks,
    parse_answer,
)
from charmemory.core.message_cleaning import TAG_LOOKALIKE

MEMORY_TAG = re.compile(r"<\s*/?\s*memory", re.IGNORECASE)


def parse(text: str, *, max_bullets: int = 8, finish_reason: str | None = "stop") -> ParsedAnswer:
    return parse_answer(text, max_bullets=max_bullets, finish_reason=finish_reason)


def test_a_well_formed_answer() -> None:
    answer = parse(
        "<memory>\n"
        "- Alex revealed that Alex grew up in Porto.\n"
        "- Seraphina promised to teach Alex archery.\n"
        "</memory>"
    )
    assert answer.blocks == [
        ["Alex revealed that Alex grew up in Porto.", "Seraphina promised to teach Alex archery."]
    ]
    assert answer.warnings == []
    assert answer.nothing_new is False


def test_a_chatty_large_model_answer() -> None:
    answer = parse(
        "Sure! Here are the memories I extracted from the conversation:\n\n"
        "<memory>\n- Alex adopted a cat named Pip.\n- Alex quit the bakery job.\n</memory>\n\n"
        "Let me know if you'd like me to adjust anything!"
    )
    assert answer.bullets == ["Alex adopted a cat named Pip.", "Alex quit the bakery job."]
    assert answer.warnings == []


@pytest.mark.parametrize("language", ["xml", "markdown", "", "html"])
def test_fenced_output(language: str) -> None:
    answer = parse(f"```{language}\n<memory>\n- Alex moved to Lyon.\n</memory>\n```")
    assert answer.bullets == ["Alex moved to Lyon."]
    assert answer.warnings == []


def test_model_written_attributes_are_ignored() -> None:
    answer = parse(
        '<memory chat="made up" date="1999-01-01" importance="high">\n- Alex left.\n</memory>'
    )
    assert answer.blocks == [["Alex left."]]


@pytest.mark.parametrize(
    "answer",
    [
        "* Alex moved to Lyon.\n* Seraphina lost her bow.",
        "• Alex moved to Lyon.\n• Seraphina lost her bow.",
        "+ Alex moved to Lyon.\n+ Seraphina lost her bow.",
        "1. Alex moved to Lyon.\n2. Seraphina lost her bow.",
        "1) Alex moved to Lyon.\n2) Seraphina lost her bow.",
        "Memories:\n\n  - Alex moved to Lyon.\n  - Seraphina lost her bow.",
        "<memory>\n1. Alex moved to Lyon.\n2. Seraphina lost her bow.\n</memory>",
        "<memory>\nAlex moved to Lyon.\nSeraphina lost her bow.\n</memory>",
        "<memory>- Alex moved to Lyon.\n- Seraphina lost her bow.</memory>",
        "<MEMORY>\n- Alex moved to Lyon.\n- Seraphina lost her bow.\n</Memory>",
    ],
)
def test_other_list_styles_and_bullets_without_a_block(answer: str) -> None:
    parsed = parse(answer)
    assert parsed.bullets == ["Alex moved to Lyon.", "Seraphina lost her bow."]
    assert parsed.warnings == []


def test_headings_inside_a_block_are_not_memories() -> None:
    answer = parse(
        "<memory>\n### New memories\n**Key events:**\n- Alex moved to Lyon.\n\n"
        "- Seraphina lost her bow.\n</memory>"
    )
    assert answer.bullets == ["Alex moved to Lyon.", "Seraphina lost her bow."]


def test_an_indented_line_continues_its_bullet() -> None:
    answer = parse("<memory>\n- Alex moved to Lyon after\n  losing the Porto flat.\n</memory>")
    assert answer.bullets == ["Alex moved to Lyon after losing the Porto flat."]


@pytest.mark.parametrize(
    "answer",
    [
        "NO_NEW_MEMORIES",
        "**NO_NEW_MEMORIES**",
        "__NO_NEW_MEMORIES__",
        "`NO_NEW_MEMORIES`",
        "NO_NEW_MEMORIES.",
        '"NO_NEW_MEMORIES"',
        "no_new_memories",
        "No new memories.",
        "  NO_NEW_MEMORIES  \n",
        "<memory>\nNO_NEW_MEMORIES\n</memory>",
        "<memory>\n- NO_NEW_MEMORIES\n</memory>",
        "```\nNO_NEW_MEMORIES\n```",
        "After reviewing the messages, nothing here is new.\n\n**NO_NEW_MEMORIES**",
        "<think>Nothing new happened.</think>\nNO_NEW_MEMORIES",
    ],
)
def test_the_sentinel_in_its_many_dresses(answer: str) -> None:
    parsed = parse(answer)
    assert parsed.nothing_new is True
    assert parsed.blocks == []
    assert parsed.warnings == []


def test_bullets_win_over_a_stray_sentinel() -> None:
    parsed = parse("<memory>\n- Alex moved to Lyon.\n</memory>\nNO_NEW_MEMORIES otherwise.")
    assert parsed.bullets == ["Alex moved to Lyon."]
    assert parsed.nothing_new is False
    assert parsed.has_warning(MIXED)


@pytest.mark.parametrize(
    "answer",
    [
        "I'm sorry, but I can't help with that.",
        "I’m sorry, but I can’t continue with this request.",
        "I cannot assist with extracting details from this kind of content.",
        "As an AI developed to follow content policies, I won't summarise this scene.",
        "I apologise, but this conversation goes against my guidelines.",
    ],
)
def test_refusals_give_no_bullets_and_say_why(answer: str) -> None:
    parsed = parse(answer)
    assert parsed.blocks == []
    assert parsed.nothing_new is False
    assert parsed.has_warning(REFUSAL)
    assert answer[:20] in parsed.warnings[0]


def test_prose_without_bullets_is_reported() -> None:
    parsed = parse("The conversation covered the weather and a walk in the park. Nothing else.")
    assert parsed.blocks == []
    assert parsed.has_warning(NO_BULLETS)
    assert not parsed.has_warning(REFUSAL)


def test_an_empty_answer_is_reported() -> None:
    parsed = parse("   \n")
    assert parsed.warnings == ["no bullets: the answer was empty"]


def test_reasoning_is_never_read_as_memories() -> None:
    parsed = parse(
        "<think>\nThe user wants memories.\n- Maybe: Alex likes tea?\n</think>\n\n"
        "<memory>\n- Alex moved to Lyon.\n</memory>"
    )
    assert parsed.bullets == ["Alex moved to Lyon."]


def test_reasoning_whose_opening_tag_was_in_the_template() -> None:
    parsed = parse(
        "Okay, let me list candidates:\n- Alex likes tea\n- weather talk\n</think>\n\n"
        "<memory>\n- Alex moved to Lyon.\n</memory>"
    )
    assert parsed.bullets == ["Alex moved to Lyon."]


def test_an_empty_reasoning_block_before_the_answer() -> None:
    parsed = parse("<think>\n\n</think>\n\n<memory>\n- Alex moved to Lyon.\n</memory>")
    assert parsed.bullets == ["Alex moved to Lyon."]


def test_an_answer_cut_off_while_reasoning() -> None:
    parsed = parse("<thinking>\nFirst, - Alex moved to", finish_reason="length")
    assert parsed.blocks == []
    assert parsed.has_warning(TRUNCATED)
    assert "reasoning" in parsed.warnings[0]


def test_a_truncated_answer_drops_the_bullet_cut_mid_sentence() -> None:
    parsed = parse(
        "<memory>\n- Alex moved to Lyon.\n- Seraphina lost her bow in the riv",
        finish_reason="length",
    )
    assert parsed.bullets == ["Alex moved to Lyon."]
    assert parsed.has_warning(TRUNCATED)
    assert "length limit" in parsed.warnings[0]


def test_an_unclosed_block_counts_as_truncated_even_without_a_finish_reason() -> None:
    parsed = parse("<memory>\n- Alex moved to Lyon.\n- Seraphina lost her", finish_reason=None)
    assert parsed.bullets == ["Alex moved to Lyon."]
    assert parsed.has_warning(TRUNCATED)
    assert "never closed" in parsed.warnings[0]


def test_a_complete_last_bullet_in_an_unclosed_block_is_kept() -> None:
    parsed = parse("<memory>\n- Alex moved to Lyon.\n- Seraphina lost her bow.\n</mem")
    assert parsed.bullets == ["Alex moved to Lyon.", "Seraphina lost her bow."]
    assert parsed.has_warning(TRUNCATED)


def test_complete_blocks_survive_a_cut_in_a_later_block() -> None:
    parsed = parse(
        "<memory>\n- Alex moved to Lyon.\n</memory>\n<memory>\n- Pip ran aw",
        finish_reason="length",
    )
    assert parsed.blocks == [["Alex moved to Lyon."]]


def test_a_length_stop_after_the_block_closed_keeps_every_bullet() -> None:
    parsed = parse("<memory>\n- Alex moved to Lyon\n</memory>\n\nNote: I", finish_reason="length")
    assert parsed.bullets == ["Alex moved to Lyon"]
    assert parsed.has_warning(TRUNCATED)


def test_bullets_without_a_block_cut_by_the_length_limit() -> None:
    parsed = parse("1. Alex moved to Lyon.\n2. Seraphina lost", finish_reason="length")
    assert parsed.bullets == ["Alex moved to Lyon."]


def test_the_bullet_cap_keeps_the_first_ones() -> None:
    text = "<memory>\n" + "\n".join(f"- Fact number {n}." for n in range(1, 13)) + "\n</memory>"
    parsed = parse(text, max_bullets=8)
    assert parsed.bullets == [f"Fact number {n}." for n in range(1, 9)]
    assert parsed.warnings == ["over cap: the model wrote 12 bullets; kept the first 8"]
    assert parsed.has_warning(OVER_CAP)


def test_a_bullet_over_the_length_limit_is_cut_at_a_word_and_marked() -> None:
    page = "Alex talked about the weather " * 200_000  # six megabytes on one line
    parsed = parse_answer(
        f"<memory>\n- Mira owns a compass.\n- {page}\n</memory>",
        max_bullets=8,
        max_bullet_chars=120,
    )

    kept, cut = parsed.bullets
    assert kept == "Mira owns a compass."
    assert len(cut) <= 120 and cut.endswith(" […]")
    assert cut.startswith("Alex talked about the weather Alex") and "  " not in cut
    assert parsed.has_warning(TOO_LONG)
    assert "up to 5999999 characters" in parsed.warnings[0]
    assert "extraction.max_bullet_chars" in parsed.warnings[0]


def test_control_and_bidi_characters_never_reach_a_bullet() -> None:
    parsed = parse("<memory>\n- Mira\x00 paid \u202eforty\x1b[31m crowns.\n</memory>")

    assert parsed.bullets == ["Mira paid forty[31m crowns."]


def test_the_cap_counts_across_blocks() -> None:
    parsed = parse(
        "<memory>\n- A1.\n- A2.\n</memory>\n<memory>\n- B1.\n- B2.\n</memory>", max_bullets=3
    )
    assert parsed.blocks == [["A1.", "A2."], ["B1."]]


def test_bullets_that_speak_to_someone_are_left_out() -> None:
    parsed = parse(
        "<memory>\n"
        "- Mira owes four hundred crowns to Madame Venn.\n"
        "- Alex is short a navigator. How would you feel about keeping the charts?\n"
        '- Mira promised Alex: "I will find your brother, whatever it costs."\n'
        "- Your secret is safe with Mira.\n"
        "- Youssef the smith repaired the YOUNG captain's sword.\n"
        "- Alex left Mira a thank-you note.\n"
        "</memory>"
    )

    assert parsed.bullets == [
        "Mira owes four hundred crowns to Madame Venn.",
        'Mira promised Alex: "I will find your brother, whatever it costs."',
        "Youssef the smith repaired the YOUNG captain's sword.",
        "Alex left Mira a thank-you note.",
    ]
    assert parsed.has_warning(SPEECH) and not parsed.nothing_new
    assert "left out 2 bullet(s)" in parsed.warnings[0]


def test_speech_does_not_count_against_the_cap() -> None:
    parsed = parse(
        "<memory>\n- You look tired.\n- Fact one.\n- Fact two.\n</memory>", max_bullets=2
    )
    assert parsed.bullets == ["Fact one.", "Fact two."]
    assert not parsed.has_warning(OVER_CAP)


def test_an_answer_of_only_speech_holds_nothing_new() -> None:
    parsed = parse("<memory>\n- You're the one who found that letter.\n</memory>")

    assert parsed.bullets == [] and parsed.nothing_new
    assert [w.split(":")[0] for w in parsed.warnings] == [SPEECH]


def test_memory_tags_inside_a_bullet_are_made_inert() -> None:
    parsed = parse("<memory>\n- Alex wrote <memory> and </memory> on a note, as a joke.\n</memory>")
    assert parsed.bullets == [
        f"Alex wrote {TAG_LOOKALIKE}memory> and {TAG_LOOKALIKE}/memory> on a note, as a joke."
    ]


def test_bullets_of_only_punctuation_are_dropped() -> None:
    assert parse("<memory>\n- ...\n- Alex left.\n-  \n</memory>").bullets == ["Alex left."]


def test_merging_chunks_makes_one_block_in_order() -> None:
    first = parse("<memory>\n- A1.\n- A2.\n</memory>")
    second = parse("NO_NEW_MEMORIES")
    third = parse("- C1.")
    assert merge_blocks([first, second, third]) == ["A1.", "A2.", "C1."]


def test_a_cap_below_one_is_a_programming_error() -> None:
    with pytest.raises(ValueError):
        parse_answer("- x.", max_bullets=0)


_pieces = st.sampled_from(
    [
        *["<memory>", "</memory>", "<memory chat='x'>", "< /memory >", "- ", "* ", "1. ", "\n"],
        *["Alex left.", "NO_NEW_MEMORIES", "<think>", "</think>", "```xml", "```", "<", "memory"],
        *["I'm sorry", " ", "</mem", "word"],
    ]
)


@settings(max_examples=200)
@given(
    text=st.one_of(st.lists(_pieces, max_size=25).map("".join), st.text(max_size=80)),
    cap=st.integers(1, 10),
    finish=st.sampled_from([None, "stop", "length"]),
)
def test_any_answer_yields_safe_single_line_bullets_within_the_cap(
    text: str, cap: int, finish: str | None
) -> None:
    parsed = parse_answer(text, max_bullets=cap, finish_reason=finish)
    assert len(parsed.bullets) <= cap
    assert all(block for block in parsed.blocks)
    for bullet in parsed.bullets:
        assert bullet == bullet.strip() and bullet
        assert "\n" not in bullet
        assert not MEMORY_TAG.search(bullet)
    assert not (parsed.nothing_new and parsed.blocks)


@pytest.mark.parametrize(
    ("reasoning", "answer"),
    [
        (
            "The chat says Mira lost her ship. Draft:\n<memory>\n- Mira lost a ship.\n</memory>\n"
            "Better with the name.\n\n<memory>\n- Mira lost the Kestrel.\n\n- Alex saw it.\n"
            "</memory>\n",
            "<memory>\n- Mira lost the Kestrel.\n\n- Alex saw it.\n</memory>",
        ),
        ("Only small talk here.\nNO_NEW_MEMORIES", "NO_NEW_MEMORIES"),
        ("Nothing worth keeping, so:\n**NO_NEW_MEMORIES**\n", "NO_NEW_MEMORIES"),
    ],
)
def test_an_answer_that_ends_the_reasoning_is_found(reasoning: str, answer: str) -> None:
    assert answer_in_reasoning(reasoning) == answer


@pytest.mark.parametrize(
    "reasoning",
    [
        "",
        "Let me think about what Mira would remember.",
        # A draft followed by more thinking.
        "<memory>\n- Mira lost the Kestrel.\n</memory>\nHmm, is that new? Let me check.",
        # Unclosed, or not a block of bullets.
        "<memory>\n- Mira lost the Kestrel.\n",
        "<memory>\n- Mira lost the Kestrel.\nAlso Alex was there.\n</memory>",
        "<memory>\n</memory>",
        "I could write <memory>\n- Mira lost the Kestrel.\n</memory>",
        "Maybe NO_NEW_MEMORIES, but the ship matters.",
    ],
)
def test_drafts_in_the_reasoning_are_never_an_answer(reasoning: str) -> None:
    assert answer_in_reasoning(reasoning) is None
