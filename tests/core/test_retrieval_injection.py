from charmemory.core.injection import (
    InjectionEntry,
    InjectionSettings,
    approximate_tokens,
    build_injection,
)


def entry(n: int, text: str, block: int) -> InjectionEntry:
    return InjectionEntry(f"m{n}", text, ("Elara.md", block, 0), date=f"day {block}")


LATE = entry(1, "Elara learned to swim at last.", 5)
EARLY = entry(2, "Elara's brother drowned.", 1)


def test_default_injection_is_sillytaverns_data_bank_prompt_in_file_order() -> None:
    injection = build_injection([LATE, EARLY])
    assert injection.text == (
        "Related information:\n- Elara's brother drowned.\n- Elara learned to swim at last."
    )
    assert injection.included == ("m2", "m1")
    assert (injection.position, injection.depth, injection.role) == ("in_prompt", 4, "system")
    assert injection.tokens == approximate_tokens(injection.text)


def test_the_budget_keeps_the_most_relevant_that_fit() -> None:
    long = entry(3, "x" * 400, 2)
    settings = InjectionSettings(token_budget=30)
    injection = build_injection([LATE, long, EARLY], settings)
    assert injection.included == ("m2", "m1")
    assert injection.over_budget == ("m3",)
    assert injection.tokens <= 30


def test_templates_and_relevance_order() -> None:
    settings = InjectionSettings(
        template="Memories:\n{{text}}\n---",
        item_template="[{{date}}] {{text}}",
        order="relevance",
        position="in_chat",
        depth=2,
        role="user",
    )
    injection = build_injection([LATE, EARLY], settings)
    assert injection.text == (
        "Memories:\n[day 5] Elara learned to swim at last.\n[day 1] Elara's brother drowned.\n---"
    )
    assert (injection.position, injection.depth, injection.role) == ("in_chat", 2, "user")


def test_nothing_retrieved_injects_nothing() -> None:
    injection = build_injection([])
    assert (injection.text, injection.included, injection.tokens) == ("", (), 0)
    assert build_injection([entry(1, "x" * 4000, 1)]).text == ""


def test_token_estimate_is_a_quarter_of_the_characters_rounded_up() -> None:
    assert [approximate_tokens(t) for t in ("", "abc", "abcd", "abcde")] == [0, 1, 1, 2]
