import pytest

from charmemory.core.message_cleaning import RenderedMessage
from charmemory.core.prompt_budget import (
    CHARS_PER_TOKEN,
    fit_messages,
    fit_text,
    section_budget,
    tokens_of,
)
from charmemory.errors import ConfigError


def said(index: int, text: str) -> RenderedMessage:
    return RenderedMessage(index, "Mira" if index % 2 else "Alex", text)


def test_the_parts_share_what_the_response_and_template_leave() -> None:
    budget = section_budget(
        context_size=32_768, response_tokens=1000, template_tokens=1500, memories_budget=1500
    )
    assert budget.available == int(32_768 * 0.9) - 2500
    assert budget.card == budget.available // 4
    assert budget.memories == 1500  # its own setting, under its share
    small = section_budget(
        context_size=4096, response_tokens=1000, template_tokens=1500, memories_budget=1500
    )
    assert small.memories == small.available // 4 < 1500


def test_a_context_too_small_for_the_chat_names_the_settings() -> None:
    with pytest.raises(ConfigError, match=r"model\.context_size.*max_response_tokens"):
        section_budget(
            context_size=2048, response_tokens=1000, template_tokens=1500, memories_budget=1500
        )


def test_messages_that_fit_are_sent_whole() -> None:
    messages = [said(i, f"Line {i}.") for i in range(20)]
    assert fit_messages(messages, 1000) == (messages, [])


def test_only_the_longest_messages_are_cut_each_with_a_marker() -> None:
    huge = "word " * 400_000  # 2 MB
    messages = [said(0, "Short line."), said(1, huge), said(2, "x" * 3000), said(3, "Also short.")]

    fitted, cuts = fit_messages(messages, 1000)

    assert tokens_of(fitted) <= 1000
    assert [m.text for m in fitted][0::3] == ["Short line.", "Also short."]
    assert [cut.what for cut in cuts] == ["message 1", "message 2"]
    assert cuts[0].chars == len(huge) and cuts[0].kept == len(fitted[1].text)
    left_out = len(huge) - len(fitted[1].text.split(" [… ")[0])
    assert fitted[1].text.endswith(
        f"[… {left_out:,} more characters not sent: too long for the prompt]"
    )
    # Cut to one common length (give or take a word), so the budget is used, not wasted.
    assert abs(len(fitted[1].text) - len(fitted[2].text)) < 90
    assert tokens_of(fitted) > 1000 - 2 * 10


def test_too_many_messages_for_the_context_is_an_error() -> None:
    messages = [said(i, "y" * 5000) for i in range(200)]
    with pytest.raises(ConfigError, match=r"messages_per_call.*model\.context_size"):
        fit_messages(messages, 5000)


def test_a_long_card_is_cut_to_its_share() -> None:
    card = "Description:\n" + "Mira sails. " * 2_000_000  # 24 MB
    kept, cut = fit_text(card, 2000, "the character card")
    assert cut is not None and cut.chars == len(card)
    assert len(kept) <= 2000 * CHARS_PER_TOKEN and kept.startswith("Description:\nMira sails.")
    assert fit_text("Short card.", 2000, "the character card") == ("Short card.", None)
