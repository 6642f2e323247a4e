import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from charmemory.adapters.llm.reasoning import ThinkSplitter, field_reasoning, split_think


def test_split_think() -> None:
    assert split_think("<think>plan</think>answer") == ("answer", "plan")
    assert split_think("a<think>1</think>b<think>2</think>c") == ("abc", "12")
    assert split_think("<think>cut off mid-thou") == ("", "cut off mid-thou")
    assert split_think("plan</think>answer") == ("answer", "plan")
    assert split_think("no tags at all") == ("no tags at all", "")


def test_reasoning_fields() -> None:
    assert field_reasoning({"reasoning_content": "a", "reasoning": "b"}) == "a"
    assert field_reasoning({"reasoning_content": "", "reasoning": "b"}) == "b"
    assert field_reasoning({"reasoning": {"effort": "high"}}) == ""


def feed_all(chunks: list[str]) -> tuple[str, str]:
    splitter = ThinkSplitter()
    answer, reasoning = "", ""
    for chunk in chunks:
        a, r = splitter.feed(chunk)
        answer, reasoning = answer + a, reasoning + r
    a, r = splitter.finish()
    return answer + a, reasoning + r


pieces = st.lists(st.sampled_from(["<think>", "</think>", "<", "th", "ink>", "x", " ", "<t"]))


@settings(max_examples=200)
@given(pieces, st.lists(st.integers(0, 40), max_size=8))
def test_chunking_never_changes_the_split(parts: list[str], cuts: list[int]) -> None:
    text = "".join(parts)
    if "</think>" in text and (
        "<think>" not in text or text.index("</think>") < text.index("<think>")
    ):
        text = "<think>" + text  # a lone closing tag is only resolved once the text is whole
    bounds = sorted({min(c, len(text)) for c in cuts} | {0, len(text)})
    chunks = [text[a:b] for a, b in itertools.pairwise(bounds)]
    assert feed_all(chunks) == split_think(text)
    answer, reasoning = split_think(text)
    assert len(answer) + len(reasoning) <= len(text)
