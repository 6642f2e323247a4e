import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from charmemory.core.consolidation_answer import ProposedBlock
from charmemory.core.consolidation_merge import (
    consolidated_file,
    date_bounds,
    date_span,
    merged_attributes,
)
from charmemory.formats.memory_file import (
    build_block,
    parse_memory_file,
)

TEXT = (
    "# Mira\nNotes a person typed.\n\n"
    "<memory chat='one' date='2026-02-15 10:42' cast=\"Mira\">\n"
    "- Mira owns a compass.\n</memory>\n\n"
    '<memory chat="two" date="2026-02-20 08:00">\n- Alex sings.\n</memory>\n\n'
    "Another note.\n\n"
    '<memory chat="one" date="2026-03-01 09:00" cast="Mira">\n'
    "- Mira owns a brass compass.\n- Mira fears deep water.\n</memory>\n"
)


@pytest.mark.parametrize(
    ("dates", "expected"),
    [
        (["2026-02-15 10:42"], "2026-02-15 10:42"),
        (["2026-03-01 09:00", "2026-02-15 10:42"], "2026-02-15 10:42 – 2026-03-01 09:00"),
        (
            ["2026-02-15 10:42 – 2026-02-20 08:00", "2026-01-02 07:00"],
            "2026-01-02 07:00 – 2026-02-20 08:00",
        ),
        (["unknown", "2026-02-15 10:42", ""], "2026-02-15 10:42"),
        (["unknown", "unknown"], "unknown"),
        (["unknown", "someday"], ""),
    ],
)
def test_a_merged_block_spans_the_dates_of_its_sources(dates: list[str], expected: str) -> None:
    assert date_span(dates) == expected


def test_a_date_range_reads_back_as_its_bounds() -> None:
    assert date_bounds("2026-02-15 10:42 – 2026-03-01 09:00") == (
        "2026-02-15 10:42",
        "2026-03-01 09:00",
    )
    assert date_bounds("2026-02-15") == ("2026-02-15", "2026-02-15")


def test_merged_blocks_keep_a_common_chat_and_shared_attributes_only() -> None:
    a = build_block("one", "2026-02-15 10:42", ["x"], extra=[("cast", "Mira"), ("mood", "calm")])
    b = build_block("one", "2026-03-01 09:00", ["y"], extra=[("cast", "Mira")])
    c = build_block("two", "2026-02-20 08:00", ["z"])
    assert merged_attributes([a, b]) == (
        ("chat", "one"),
        ("date", "2026-02-15 10:42 – 2026-03-01 09:00"),
        ("cast", "Mira"),
    )
    assert dict(merged_attributes([a, c]))["chat"] == "consolidated"
    assert merged_attributes([a]) == a.attributes


def test_proposed_blocks_replace_their_sources_and_nothing_else_changes() -> None:
    file = parse_memory_file(TEXT)
    merged = ProposedBlock((0, 2), ("Mira owns a brass compass.", "Mira fears deep water."))
    result = consolidated_file(file, {0, 2}, [merged]).render()
    assert result == (
        "# Mira\nNotes a person typed.\n\n"
        '<memory chat="one" date="2026-02-15 10:42 – 2026-03-01 09:00" cast="Mira">\n'
        "- Mira owns a brass compass.\n- Mira fears deep water.\n</memory>\n\n"
        '<memory chat="two" date="2026-02-20 08:00">\n- Alex sings.\n</memory>\n\n'
        "Another note.\n\n"
    )


def test_a_block_that_comes_back_unchanged_keeps_its_exact_bytes() -> None:
    file = parse_memory_file(TEXT)
    same = ProposedBlock((0,), ("Mira owns a compass.",))
    split = [
        ProposedBlock((2,), ("Mira owns a brass compass.",)),
        ProposedBlock((2,), ("Mira fears deep water.",)),
    ]
    result = consolidated_file(file, {0, 2}, [same, *split]).render()
    assert "<memory chat='one' date='2026-02-15 10:42' cast=\"Mira\">\n" in result
    assert result.endswith(
        '<memory chat="one" date="2026-03-01 09:00" cast="Mira">\n'
        "- Mira owns a brass compass.\n</memory>\n\n"
        '<memory chat="one" date="2026-03-01 09:00" cast="Mira">\n'
        "- Mira fears deep water.\n</memory>\n"
    )


NOTED = (
    '<memory chat="one" date="2026-02-15 10:42">\n'
    "Note to self: the compass was a gift.\n- Mira owns a compass.\n</memory>\n\n"
    '<memory chat="one" date="2026-03-01 09:00">\n'
    "- Mira owns a brass compass.\n\n  Ask about the brass.\n</memory>\n\n"
    '<memory chat="two" date="2026-03-02 09:00">\nTyped by hand.\n- Alex sings.\n</memory>\n'
)


def test_notes_typed_in_merged_blocks_move_into_the_result_as_typed() -> None:
    merged = ProposedBlock((0, 1), ("Mira owns a brass compass.",))

    result = consolidated_file(parse_memory_file(NOTED), {0, 1}, [merged]).render()

    assert result.startswith(
        '<memory chat="one" date="2026-02-15 10:42 – 2026-03-01 09:00">\n'
        "Note to self: the compass was a gift.\n  Ask about the brass.\n"
        "- Mira owns a brass compass.\n</memory>\n"
    )


def test_a_block_whose_memories_all_go_keeps_its_notes() -> None:
    file = parse_memory_file(NOTED)

    result = consolidated_file(file, {1, 2}, [ProposedBlock((1,), ("Mira owns a compass.",))])

    assert [[n.raw for n in b.notes] for b in result.blocks] == [
        ["Note to self: the compass was a gift.\n"],
        ["  Ask about the brass.\n"],
        ["Typed by hand.\n"],
    ]
    assert [[b.text for b in blk.bullets] for blk in result.blocks] == [
        ["Mira owns a compass."],
        ["Mira owns a compass."],
        [],
    ]


def test_windows_line_endings_stay_windows_line_endings() -> None:
    file = parse_memory_file(TEXT.replace("\n", "\r\n"))
    merged = ProposedBlock((0, 1), ("Mira owns a compass.", "Alex sings."))
    result = consolidated_file(file, {0, 1}, [merged]).render()
    assert "\n" not in result.replace("\r\n", "")
    assert parse_memory_file(result).block_count == 2


words = st.sampled_from(["Mira", "owns", "a", "compass", "Alex", "sings", "fog"])
bullet_texts = st.lists(words, min_size=1, max_size=4).map(" ".join)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.lists(bullet_texts, min_size=1, max_size=3), min_size=1, max_size=6), st.data())
def test_notes_and_unselected_blocks_survive_any_consolidation(
    blocks: list[list[str]], data: st.DataObject
) -> None:
    text = "Notes.\n\n" + "\n".join(
        build_block(f"chat {i}", f"2026-02-{10 + i} 10:00", bullets)
        .render()
        .replace("</memory>", f"inner note {i}\n</memory>")
        + f"note {i}\n"
        for i, bullets in enumerate(blocks)
    )
    file = parse_memory_file(text)
    selected = data.draw(st.sets(st.sampled_from(range(len(blocks))), min_size=1))
    proposed = data.draw(
        st.lists(
            st.builds(
                ProposedBlock,
                st.sets(st.sampled_from(sorted(selected)), min_size=1).map(
                    lambda s: tuple(sorted(s))
                ),
                st.lists(bullet_texts, min_size=1, max_size=3).map(tuple),
            ),
            max_size=4,
        )
    )

    result = consolidated_file(file, selected, proposed)

    others = [b.render() for i, b in enumerate(file.blocks) if i not in selected]
    assert [b.render() for b in result.blocks if b.render() in others] == others
    assert all(f"\nnote {i}\n" in result.render() for i in range(len(blocks)))
    assert sorted(n.raw for b in result.blocks for n in b.notes) == sorted(
        f"inner note {i}\n" for i in range(len(blocks))
    )
    expected = [t for i, b in enumerate(blocks) if i not in selected for t in b]
    expected += [t for p in proposed for t in p.bullets]
    assert sorted(b.text for blk in result.blocks for b in blk.bullets) == sorted(expected)
