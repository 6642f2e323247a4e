"""Invariants of prompt assembly over generated chats and lorebooks."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from charmemory.core.injection import Injection
from charmemory.core.prompt import PromptSettings
from charmemory.core.world_info import LoreSources, NamedBook
from charmemory.errors import ContextTooSmallError
from tests.support.lore import book, entry
from tests.support.prompts import card, chat, prompt

WORDS = ["oak", "storm", "{{char}}", "{{user}}", "{{random::a::b::c}}", "{{roll:1d20}}", "river"]
lines = st.lists(st.sampled_from(WORDS), min_size=1, max_size=8).map(" ".join)


@st.composite
def cases(draw: st.DrawFn):
    speakers = st.sampled_from(["Wren", "Seraphina"])
    history = chat(*draw(st.lists(st.tuples(speakers, lines), max_size=12)))
    lore = book(
        *[
            entry(
                uid,
                draw(st.lists(st.sampled_from(["oak", "storm", "river"]), max_size=2)),
                draw(lines),
                position=draw(st.integers(0, 7)),
                probability=draw(st.sampled_from([50, 100])),
                depth=draw(st.integers(0, 6)),
                group=draw(st.sampled_from(["", "g"])),
            )
            for uid in range(draw(st.integers(0, 6)))
        ]
    )
    memory = Injection(
        draw(lines),
        ("m",),
        (),
        5,
        draw(st.sampled_from(["in_chat", "in_prompt", "before_prompt"])),
        draw(st.integers(0, 6)),
        "system",
    )
    options = PromptSettings(
        context_size=draw(st.integers(150, 900)),
        response_length=50,
        squash_system_messages=draw(st.booleans()),
        pin_examples=draw(st.booleans()),
    )
    a_card = card(
        description=draw(lines),
        mes_example=draw(st.sampled_from(["", "<START>\n{{user}}: hi\n{{char}}: hello"])),
    )
    return (
        a_card,
        history,
        LoreSources(character=(NamedBook("Lore", lore),)),
        memory,
        options,
        draw(st.integers(0, 99)),
    )


PROPERTY = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def build(case):
    a_card, history, sources, memory, options, seed = case
    return prompt(a_card, history, sources=sources, memory=memory, settings=options, seed=seed)


@PROPERTY
@given(cases())
def test_the_same_inputs_and_seed_give_the_same_prompt(case):
    try:
        first = build(case)
    except ContextTooSmallError:
        return
    second = build(case)

    assert first.prompt == second.prompt
    assert first.metadata_updates == second.metadata_updates


@PROPERTY
@given(cases())
def test_the_prompt_fits_the_context_and_keeps_the_newest_messages(case):
    options = case[4]
    try:
        result = build(case)
    except ContextTooSmallError:
        return

    assert result.prompt.tokens <= options.context_size - options.response_length
    kept = [m.message_id for m in result.prompt.messages if m.message_id is not None]
    offered = len(case[1].messages)
    assert kept == list(range(offered - len(kept), offered))
    assert result.prompt.last_in_context_message_id == (kept[0] if kept else None)
