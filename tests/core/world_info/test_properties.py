"""Invariants of the engine over generated lorebooks and chats."""

from __future__ import annotations

from collections import Counter

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from charmemory.core.injection import approximate_tokens
from tests.support.lore import entry, scan

WORDS = ["oak", "storm", "river", "sword", "moon", "tower", "wolf", "ember"]
GROUPS = ["", "", "", "weather", "beasts", "weather, beasts"]

KEYS = [*WORDS, "oak storm", "/riv\\w+/i", "/Moon/", "tow", "wolf,"]
sentences = st.lists(st.sampled_from([*WORDS, "Moon", "wolf,"]), min_size=1, max_size=6).map(
    " ".join
)


@st.composite
def lore_entries(draw: st.DrawFn, uid: int):
    return entry(
        uid,
        draw(st.lists(st.sampled_from(KEYS), max_size=2)),
        draw(sentences),
        keysecondary=draw(st.lists(st.sampled_from(WORDS), max_size=2)),
        selectiveLogic=draw(st.integers(0, 3)),
        constant=draw(st.booleans()),
        disable=draw(st.booleans()),
        order=draw(st.integers(0, 5)),
        position=draw(st.integers(0, 7)),
        probability=draw(st.sampled_from([0, 30, 100])),
        group=draw(st.sampled_from(GROUPS)),
        groupOverride=draw(st.booleans()),
        groupWeight=draw(st.integers(1, 100)),
        ignoreBudget=draw(st.booleans()),
        preventRecursion=draw(st.booleans()),
        excludeRecursion=draw(st.booleans()),
        delayUntilRecursion=draw(st.sampled_from([0, 0, 1, 2])),
        useGroupScoring=draw(st.sampled_from([None, True])),
    )


@st.composite
def scans(draw: st.DrawFn):
    count = draw(st.integers(0, 12))
    entries = [draw(lore_entries(uid)) for uid in range(count)]
    chat = draw(st.lists(sentences, max_size=6))
    options = {
        "scan_depth": draw(st.integers(0, 4)),
        "recursive": draw(st.booleans()),
        "max_recursion_steps": draw(st.integers(0, 3)),
        "min_activations": draw(st.integers(0, 3)),
        "max_context": draw(st.integers(20, 400)),
        "seed": draw(st.integers(0, 2**16)),
    }
    return entries, chat, options


PROPERTY = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@PROPERTY
@given(scans())
def test_the_budget_holds_except_for_entries_that_ignore_it(case):
    entries, chat, options = case

    result = scan(entries, chat, **options)

    counted = "".join(
        f"{item.content}\n" for item in result.activated if not item.entry.ignore_budget
    )
    assert not counted or approximate_tokens(counted) < result.budget


@PROPERTY
@given(scans())
def test_a_disabled_entry_never_activates(case):
    entries, chat, options = case

    result = scan(entries, chat, **options)

    assert not [item for item in result.activated if item.entry.disable]
    disabled = {e.uid for e in entries if e.disable}
    assert all(x.reason.value == "disabled" for x in result.explanations() if x.uid in disabled)


@PROPERTY
@given(scans())
def test_at_most_one_entry_per_inclusion_group(case):
    entries, chat, options = case

    result = scan(entries, chat, **options)

    members = Counter(name for item in result.activated for name in item.entry.group_names)
    assert all(count == 1 for count in members.values())


@PROPERTY
@given(scans())
def test_the_same_inputs_and_seed_give_the_same_activation(case):
    entries, chat, options = case

    first, second = scan(entries, chat, **options), scan(entries, chat, **options)

    assert [(a.entry.key, a.content, a.text) for a in first.activated] == [
        (a.entry.key, a.content, a.text) for a in second.activated
    ]
    assert first.placement == second.placement
    assert first.explanations() == second.explanations()


@PROPERTY
@given(scans())
def test_every_candidate_is_explained_and_only_activated_ones_say_so(case):
    entries, chat, options = case

    result = scan(entries, chat, **options)

    explained = result.explanations()
    assert [x.uid for x in explained] == [item.entry.uid for item in result.candidates.entries]
    assert {x.uid for x in explained if x.activated} == {a.entry.uid for a in result.activated}


KEY_PARTS = ["oak", "Oak", "storm", "c++", "e-mail", "dr.", "x.y", "moon river", "riv", "tow"]
REGEXES = ["/\\boak\\w*/i", "/Storm/", "/r(iv|ow)er/", "/\\x01Wren:[^\\x01]*moon/i", "/to?wer/"]


@PROPERTY
@given(
    keys=st.lists(
        st.lists(st.sampled_from(KEY_PARTS + REGEXES), min_size=1, max_size=3), max_size=15
    ),
    chat=st.lists(
        st.lists(
            st.sampled_from([*WORDS, "Oak,", "c++", "e-mail", "dr.", "x.yz", "River"]), max_size=8
        ).map(" ".join),
        max_size=4,
    ),
    case_sensitive=st.booleans(),
    whole_words=st.booleans(),
)
def test_the_indexes_find_exactly_the_entries_whose_keys_match(
    keys, chat, case_sensitive, whole_words
):
    from charmemory.core.world_info.haystack import Haystack
    from charmemory.core.world_info.keys import compile_key

    entries = [entry(uid, entry_keys, "x") for uid, entry_keys in enumerate(keys)]
    result = scan(
        entries,
        chat,
        recursive=False,
        case_sensitive=case_sensitive,
        match_whole_words=whole_words,
        scan_depth=4,
        max_context=10**6,
    )

    lines = [f"Wren: {line}".strip() for line in reversed(chat)]
    text = Haystack("\x01" + "\n\x01".join(lines)) if lines else Haystack("")
    expected = [
        uid
        for uid, entry_keys in enumerate(keys)
        if any(
            (matcher := compile_key(key, case_sensitive=case_sensitive, whole_words=whole_words))
            is not None
            and matcher.matches(text)
            for key in entry_keys
        )
    ]
    assert sorted(item.entry.uid for item in result.activated) == expected


def unindexed(candidates):
    """The same candidates with every entry checked key by key on every pass."""
    plain = candidates.with_extra("unused", [])
    plain.word_index, plain.gram_index = {}, {}
    plain.slow = list(range(len(plain)))
    return plain


@PROPERTY
@given(scans(), st.booleans(), st.booleans())
def test_the_indexes_and_incremental_passes_change_no_decision(case, case_sensitive, whole_words):
    import random

    from charmemory.core.world_info import ScanContext, WorldInfoSettings, activate_world_info
    from tests.support.lore import candidates_of, messages

    entries, chat, options = case
    settings = WorldInfoSettings(
        scan_depth=options["scan_depth"],
        recursive=options["recursive"],
        max_recursion_steps=options["max_recursion_steps"],
        min_activations=options["min_activations"],
        case_sensitive=case_sensitive,
        match_whole_words=whole_words,
    )
    indexed = candidates_of(*entries, settings=settings)
    context = ScanContext(messages=messages(*chat))

    def run(candidates):
        return activate_world_info(
            candidates,
            context,
            max_context=options["max_context"],
            rng=random.Random(options["seed"]),
            settings=settings,
        )

    fast, slow = run(indexed), run(unindexed(indexed))
    assert [(a.entry.key, a.text, a.step) for a in fast.activated] == [
        (a.entry.key, a.text, a.step) for a in slow.activated
    ]
    assert fast.explanations() == slow.explanations()
