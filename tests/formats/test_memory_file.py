"""The CharMemory memory file: exact round trips, safe building, edits, ids, migration."""

from __future__ import annotations

import dataclasses
import re
import time
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from charmemory.errors import FormatError, NotFoundError
from charmemory.formats.block_dates import (
    format_block_date,
    parse_block_date,
)
from charmemory.formats.memory_file import (
    TAG_LOOKALIKE,
    Bullet,
    BulletAddress,
    FreeText,
    MemoryBlock,
    MemoryFile,
    RawLine,
    append_block,
    append_blocks,
    append_bullets,
    build_block,
    clean_memory_text,
    delete_block,
    delete_bullet,
    parse_memory_file,
    replace_bullet,
    stray_tag_lines,
)
from charmemory.formats.memory_ids import (
    find_bullet,
    list_bullets,
)
from charmemory.formats.memory_legacy import detect_layout, migrate_legacy
from charmemory.formats.unprintable import without_unprintable

SAMPLE = """\
# Seraphina — memories

Notes I typed by hand: keep the amulet thread going.

<memory chat="Seraphina - 2026-02-15@10h00m00s123ms" date="2026-02-15 10:42">
- Seraphina healed the user's wounds in the Eldoria forest.
- The user promised to return
  the silver amulet before the winter solstice.
</memory>

<memory chat="A &amp; B &quot;hi&quot; &lt;3&gt;" date="2026-02-16" topic="trust" source="manual">
Session recap, written by hand:
- 🌸 Seraphina taught the user the word 森 (forest) and laughed.

- The user admitted being afraid of the dark.
</memory>

## Scratch
<memory chat="imported" date="2025-12-01">
</memory>
<memory chat="Seraphina - 2026-02-20@18h00m00s000ms" date="2026-02-20 18:30">
- Seraphina gave the user a sprig of lavender.
</memory>"""

# SillyTavern's CharMemory extension reads blocks with this pattern (not line-anchored).
REFERENCE_BLOCK = re.compile(r"<memory\b([^>]*)>([\s\S]*?)</memory>", re.IGNORECASE)


def crlf(text: str) -> str:
    return text.replace("\n", "\r\n")


@pytest.fixture
def tokyo_time() -> Iterator[None]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TZ", "JST-9")
        time.tzset()
        yield
    time.tzset()


# ---- reading -----------------------------------------------------------------


@pytest.mark.parametrize("text", [SAMPLE, crlf(SAMPLE)], ids=["lf", "crlf"])
def test_sample_file_renders_back_byte_for_byte(text: str) -> None:
    assert parse_memory_file(text).render() == text


def test_sample_file_blocks_attributes_and_bullets() -> None:
    memory = parse_memory_file(SAMPLE)

    assert memory.block_count == 4
    assert memory.bullet_count == 5
    first, second, empty, last = memory.blocks
    assert first.chat == "Seraphina - 2026-02-15@10h00m00s123ms"
    assert first.date == "2026-02-15 10:42"
    assert [b.text for b in first.bullets] == [
        "Seraphina healed the user's wounds in the Eldoria forest.",
        "The user promised to return the silver amulet before the winter solstice.",
    ]
    assert second.attributes == (
        ("chat", 'A & B "hi" <3>'),
        ("date", "2026-02-16"),
        ("topic", "trust"),
        ("source", "manual"),
    )
    assert second.entries[0] == RawLine("Session recap, written by hand:\n")
    assert (
        second.bullets[0].text == "🌸 Seraphina taught the user the word 森 (forest) and laughed."
    )
    assert empty.bullets == () and empty.chat == "imported"
    assert last.bullets[0].text == "Seraphina gave the user a sprig of lavender."
    assert [type(s) for s in memory.segments] == [
        FreeText,
        MemoryBlock,
        FreeText,
        MemoryBlock,
        FreeText,
        MemoryBlock,
        MemoryBlock,
    ]
    assert memory.segments[4] == FreeText("\n## Scratch\n")


def test_crlf_file_reads_like_its_lf_twin_and_keeps_crlf() -> None:
    memory = parse_memory_file(crlf(SAMPLE))

    assert [b.text for b in memory.blocks[1].bullets] == [
        b.text for b in parse_memory_file(SAMPLE).blocks[1].bullets
    ]
    assert memory.newline == "\r\n"
    assert memory.blocks[0].newline == "\r\n"


def test_indented_lines_wrap_onto_a_bullet_and_every_other_line_stays_as_typed() -> None:
    text = (
        '<memory chat="c" date="d">\n'
        "intro line\n"
        "- first part\n"
        "    and indented\n"
        "continued without indent\n"
        "* a starred line\n"
        "\n"
        "  after a blank line\n"
        "\n"
        "\n"
        "   - second, indented marker\n"
        "</memory>\n"
    )
    block = parse_memory_file(text).blocks[0]

    assert block.entries == (
        RawLine("intro line\n"),
        Bullet("first part and indented"),
        RawLine("continued without indent\n"),
        Bullet("a starred line"),
        RawLine("\n"),
        RawLine("  after a blank line\n"),
        RawLine("\n"),
        RawLine("\n"),
        Bullet("second, indented marker"),
    )
    assert [line.raw for line in block.notes] == [
        "intro line\n",
        "continued without indent\n",
        "  after a blank line\n",
    ]
    assert parse_memory_file(text).render() == text


def test_a_bullet_line_with_nothing_printable_is_a_line_of_text() -> None:
    text = '<memory chat="c">\n- \x00\u202e\n- kept\n</memory>\n'
    block = parse_memory_file(text).blocks[0]

    assert [b.text for b in block.bullets] == ["kept"]
    assert parse_memory_file(text).render() == text


def test_deleting_a_bullet_keeps_the_notes_around_it_where_they_were() -> None:
    text = (
        '<memory chat="c" date="d">\n'
        "- first\n"
        "- second\n"
        "\n"
        "  Note to self: ask about the amulet.\n"
        "</memory>\n"
    )
    memory = parse_memory_file(text)

    after = delete_bullet(memory, BulletAddress(0, 1))

    assert after.render() == text.replace("- second\n", "")
    assert [b.text for b in after.blocks[0].bullets] == ["first"]
    assert [n.raw for n in after.blocks[0].notes] == ["  Note to self: ask about the amulet.\n"]
    emptied = delete_bullet(after, BulletAddress(0, 0))
    assert emptied.blocks[0].bullets == ()
    assert [n.raw for n in emptied.blocks[0].notes] == ["  Note to self: ask about the amulet.\n"]


def test_tag_text_inside_a_line_is_not_structure() -> None:
    text = '<memory chat="c">\n- she whispered </memory> and <memory x="y"> twice\n</memory>\n'
    memory = parse_memory_file(text)

    assert memory.block_count == 1
    assert memory.blocks[0].bullets[0].text.startswith("she whispered")
    assert memory.render() == text


def test_tag_lines_are_case_and_space_tolerant() -> None:
    text = "  <MEMORY chat='single quoted' date=bare >  \n- a\n\t</Memory >\n"
    block = parse_memory_file(text).blocks[0]

    assert block.attributes == (("chat", "single quoted"), ("date", "bare"))
    assert [b.text for b in block.bullets] == ["a"]


def test_unescaped_quote_written_by_other_tools_still_reads_as_a_block() -> None:
    text = '<memory chat="Say "hi"" date="2026-01-01 08:00">\n- a\n</memory>\n'
    memory = parse_memory_file(text)

    assert memory.block_count == 1
    assert memory.blocks[0].date == "2026-01-01 08:00"
    assert memory.render() == text


def test_unclosed_block_stays_free_text_and_is_reported() -> None:
    text = '# Notes\n<memory chat="half typed">\n- never closed\n'
    memory = parse_memory_file(text)

    assert memory.block_count == 0
    assert memory.segments == (FreeText(text),)
    assert stray_tag_lines(memory) == (2,)


def test_unclosed_block_does_not_swallow_the_next_block() -> None:
    text = (
        '<memory chat="lost">\n- orphan\n\n'
        '<memory chat="ok" date="d">\n- kept\n</memory>\n'
        "</memory>\n"
    )
    memory = parse_memory_file(text)

    assert [b.chat for b in memory.blocks] == ["ok"]
    assert [b.text for b in memory.blocks[0].bullets] == ["kept"]
    assert stray_tag_lines(memory) == (1, 7)
    assert memory.render() == text


@pytest.mark.parametrize("text", ["", "   ", "\n\n", " \t\r\n \n"])
def test_empty_and_whitespace_files_have_no_blocks_and_keep_their_bytes(text: str) -> None:
    memory = parse_memory_file(text)

    assert memory.block_count == 0 and memory.bullet_count == 0
    assert memory.render() == text


def test_block_at_end_of_file_without_newline() -> None:
    memory = parse_memory_file('<memory chat="c" date="d">\n- last\n</memory>')

    assert memory.blocks[0].bullets[0].text == "last"
    assert memory.render().endswith("</memory>")


# ---- writing -------------------------------------------------------------------


def test_attribute_values_escape_all_four_characters_and_read_back() -> None:
    block = build_block("A & B", 'said "<hi>"', ["x"], extra=[("topic", '<&">')])

    opening = block.render().split("\n")[0]
    assert opening == (
        '<memory chat="A &amp; B" date="said &quot;&lt;hi&gt;&quot;" topic="&lt;&amp;&quot;&gt;">'
    )
    assert parse_memory_file(block.render()).blocks[0].attributes == block.attributes


def test_attribute_value_with_line_breaks_and_tags_cannot_break_the_file() -> None:
    hostile = '</memory>\n<memory chat="x">\r\n- evil'
    memory = append_block(MemoryFile(), build_block(hostile, "d", ["real"]))

    assert memory.block_count == 1
    assert memory.blocks[0].chat == hostile
    assert [m[2].strip() for m in REFERENCE_BLOCK.finditer(memory.render())] == ["- real"]


def test_bullet_with_tags_written_via_builder_reads_back_as_one_readable_bullet() -> None:
    hostile = 'foo </memory> <memory chat="x">- evil'
    memory = append_block(parse_memory_file(SAMPLE), build_block("c", "d", [hostile]))

    assert memory.block_count == 5
    new = memory.blocks[-1]
    assert [b.text for b in new.bullets] == [
        f'foo {TAG_LOOKALIKE}/memory> {TAG_LOOKALIKE}memory chat="x">- evil'
    ]
    # SillyTavern's own reader sees the same five blocks, nothing injected.
    assert len(REFERENCE_BLOCK.findall(memory.render())) == 5


def test_control_and_bidi_characters_never_reach_a_saved_attribute() -> None:
    hostile = "chat\x00 \u202eevil\u2066"
    memory = append_block(MemoryFile(), build_block(hostile, "d", ["x"]))

    assert "\x00" not in memory.render() and "\u202e" not in memory.render()
    assert '<memory chat="chat&#0; &#8238;evil&#8294;"' in memory.render()
    assert parse_memory_file(memory.render()).blocks[0].chat == hostile


@pytest.mark.parametrize(
    "fragment", ["</MEMORY>", "< / memory >", "<Memory chat='x'>", "<\tmemory", "</memory\n>"]
)
def test_every_spelling_of_a_memory_tag_is_neutralised(fragment: str) -> None:
    cleaned = clean_memory_text(f"before {fragment} after")

    assert re.search(r"<\s*/?\s*memory", cleaned, re.IGNORECASE) is None
    assert cleaned.startswith("before ") and cleaned.endswith(" after")


def test_bullet_text_is_one_line_with_whitespace_collapsed() -> None:
    assert Bullet("  two\nlines\r\n\tand  spaces ").text == "two lines and spaces"


def test_control_and_bidi_characters_are_removed_from_a_memory() -> None:
    text = "Mira\x00 paid\x07 \u202aforty\u202c \u202ecrowns\u2069.\x85\x0bthen left"

    assert Bullet(text).text == "Mira paid forty crowns. then left"


def test_each_control_and_bidi_character_is_removed_or_made_a_space() -> None:
    removed = [
        *range(0x00, 0x09),
        *range(0x0E, 0x1C),
        *range(0x7F, 0x85),
        *range(0x86, 0xA0),
        *range(0x202A, 0x202F),
        *range(0x2066, 0x206A),
    ]
    assert all(without_unprintable(f"a{chr(code)}b") == "ab" for code in removed)
    spaced = [0x0B, 0x0C, *range(0x1C, 0x20), 0x85]
    assert all(without_unprintable(f"a{chr(code)}b") == "a b" for code in spaced)
    assert without_unprintable("a\tb\nc \u00e9 \u6771") == "a\tb\nc \u00e9 \u6771"


@pytest.mark.parametrize("text", ["", "   ", "\n\t\u3000", "\x00\u202e"])
def test_empty_memory_text_is_refused(text: str) -> None:
    with pytest.raises(FormatError, match="empty"):
        build_block("c", "d", [text])


def test_repeated_or_invalid_attribute_names_are_refused() -> None:
    with pytest.raises(FormatError, match="'chat' given twice"):
        build_block("c", "d", [], extra=[("chat", "other")])
    with pytest.raises(FormatError, match="attribute name"):
        build_block("c", "d", [], extra=[('bad"name', "v")])


def test_append_block_to_empty_file_is_just_the_block() -> None:
    memory = append_block(MemoryFile(), build_block("c", "2026-02-15 10:42", ["a", "b"]))

    assert memory.render() == '<memory chat="c" date="2026-02-15 10:42">\n- a\n- b\n</memory>\n'


@pytest.mark.parametrize(
    ("before", "separator"),
    [
        ("# Notes", "\n\n"),
        ("# Notes\n", "\n"),
        ("# Notes\n\n", ""),
        ('<memory chat="a">\n- x\n</memory>', "\n\n"),
        ("   ", "\n"),
    ],
)
def test_append_block_leaves_one_blank_line_before_it(before: str, separator: str) -> None:
    block = build_block("new", "d", ["fresh"])
    memory = append_block(parse_memory_file(before), block)

    assert memory.render() == before + separator + block.render()
    assert memory.blocks[-1].bullets[0].text == "fresh"


def test_append_blocks_in_a_crlf_file_writes_crlf() -> None:
    memory = append_blocks(
        parse_memory_file(crlf(SAMPLE)), [build_block("a", "d", ["x"]), build_block("b", "d", [])]
    )

    assert memory.render() == crlf(
        SAMPLE + '\n\n<memory chat="a" date="d">\n- x\n</memory>\n\n'
        '<memory chat="b" date="d">\n</memory>\n'
    )


def test_appended_bullets_follow_the_last_bullet_and_every_other_line_stays() -> None:
    text = (
        "<memory chat='c' date='d'>\r\nIntro.\r\n- first\r\n  wrapped\r\n"
        "\r\nA note.\r\n</memory>\r\n"
    )

    grown = append_bullets(parse_memory_file(text), 0, ["second", "third </memory>"])

    assert grown.render() == (
        "<memory chat='c' date='d'>\r\nIntro.\r\n- first\r\n  wrapped\r\n"
        f"- second\r\n- third {TAG_LOOKALIKE}/memory>\r\n\r\nA note.\r\n</memory>\r\n"
    )
    empty = parse_memory_file("<memory>\nOnly a note.\n</memory>\n")
    assert append_bullets(empty, 0, ["new"]).render() == (
        "<memory>\nOnly a note.\n- new\n</memory>\n"
    )


def test_replacing_a_bullet_changes_only_that_line() -> None:
    memory = replace_bullet(
        parse_memory_file(SAMPLE), BulletAddress(1, 1), "The user fears the dark."
    )

    assert memory.render() == SAMPLE.replace(
        "- The user admitted being afraid of the dark.", "- The user fears the dark."
    )
    assert memory.blocks[1].attributes[2:] == (("topic", "trust"), ("source", "manual"))


def test_replacing_a_wrapped_bullet_keeps_the_untouched_bullet_lines_in_crlf() -> None:
    memory = replace_bullet(parse_memory_file(crlf(SAMPLE)), BulletAddress(0, 0), "Healed.")

    assert memory.render() == crlf(
        SAMPLE.replace("- Seraphina healed the user's wounds in the Eldoria forest.", "- Healed.")
    )


def test_replacing_a_bullet_neutralises_tags_too() -> None:
    memory = replace_bullet(parse_memory_file(SAMPLE), BulletAddress(3, 0), "x\n</memory>\ny")

    assert memory.block_count == 4
    assert memory.blocks[3].bullets[0].text == f"x {TAG_LOOKALIKE}/memory> y"


def test_deleting_a_bullet_removes_it_with_its_blank_line() -> None:
    first = delete_bullet(parse_memory_file(SAMPLE), BulletAddress(1, 0))
    last = delete_bullet(parse_memory_file(SAMPLE), BulletAddress(1, 1))

    assert first.render() == SAMPLE.replace(
        "- 🌸 Seraphina taught the user the word 森 (forest) and laughed.\n\n", ""
    )
    assert last.render() == SAMPLE.replace("\n\n- The user admitted being afraid of the dark.", "")


def test_deleting_the_only_bullet_keeps_an_empty_block() -> None:
    memory = delete_bullet(parse_memory_file(SAMPLE), BulletAddress(3, 0))

    assert memory.block_count == 4
    assert memory.blocks[3].bullets == ()
    assert memory.render().endswith('date="2026-02-20 18:30">\n</memory>')


def test_deleting_a_block_takes_its_blank_separator_and_keeps_notes() -> None:
    memory = parse_memory_file(SAMPLE)
    middle = delete_block(memory, 1)
    after_heading = delete_block(memory, 2)

    start = SAMPLE.index('<memory chat="A &amp;')
    end = SAMPLE.index("## Scratch")
    assert middle.render() == SAMPLE[:start] + SAMPLE[end:]
    assert after_heading.render() == SAMPLE.replace(
        '<memory chat="imported" date="2025-12-01">\n</memory>\n', ""
    )
    assert "Notes I typed by hand" in middle.render()


def test_missing_addresses_raise_not_found() -> None:
    memory = parse_memory_file(SAMPLE)

    with pytest.raises(NotFoundError, match="block 9 does not exist"):
        delete_block(memory, 9)
    with pytest.raises(NotFoundError, match="block 2 has 0 bullets"):
        replace_bullet(memory, BulletAddress(2, 0), "x")
    with pytest.raises(NotFoundError, match="does not exist"):
        delete_bullet(memory, BulletAddress(-1, 0))


def test_replace_on_a_parsed_block_never_renders_stale_tag_lines() -> None:
    block = parse_memory_file(SAMPLE).blocks[0]
    renamed = dataclasses.replace(block, attributes=(("chat", "renamed"),))

    assert renamed.render().startswith('<memory chat="renamed">\n')


def test_segments_that_would_not_read_back_are_refused() -> None:
    block = build_block("c", "d", ["x"])

    with pytest.raises(ValueError, match="final newline"):
        MemoryFile((FreeText("no newline"), block))
    with pytest.raises(ValueError, match="hold a memory block"):
        MemoryFile((FreeText(block.render()),))
    with pytest.raises(ValueError, match="wrap onto it"):
        MemoryBlock((), (Bullet("x"), RawLine("  indented note\n")))
    with pytest.raises(ValueError, match="not a raw line"):
        RawLine("- looks like a bullet\n")


# ---- listing and ids ---------------------------------------------------------------


def test_list_bullets_gives_addresses_ids_and_blocks_in_file_order() -> None:
    refs = list_bullets(parse_memory_file(SAMPLE))

    assert [r.address for r in refs] == [
        BulletAddress(0, 0),
        BulletAddress(0, 1),
        BulletAddress(1, 0),
        BulletAddress(1, 1),
        BulletAddress(3, 0),
    ]
    assert refs[2].block.attribute("topic") == "trust"
    assert all(re.fullmatch(r"[0-9a-f]{12}", r.memory_id) for r in refs)
    assert len({r.memory_id for r in refs}) == len(refs)


def test_ids_survive_edits_elsewhere_and_follow_content() -> None:
    memory = parse_memory_file(SAMPLE)
    before = {r.text: r.memory_id for r in list_bullets(memory)}
    edited = delete_block(replace_bullet(memory, BulletAddress(0, 0), "Changed."), 2)
    after = {r.text: r.memory_id for r in list_bullets(edited)}

    assert "Changed." in after and after["Changed."] not in before.values()
    unchanged = set(before) - {"Seraphina healed the user's wounds in the Eldoria forest."}
    assert {t: after[t] for t in unchanged} == {t: before[t] for t in unchanged}


def test_same_text_in_other_blocks_or_repeated_gets_distinct_ids() -> None:
    memory = append_blocks(
        MemoryFile(),
        [build_block("a", "d", ["same", "same"]), build_block("b", "d", ["same"])],
    )
    ids = [r.memory_id for r in list_bullets(memory)]

    assert len(set(ids)) == 3
    assert list_bullets(delete_bullet(memory, BulletAddress(0, 1)))[0].memory_id == ids[0]


def test_ids_ignore_attribute_order_and_line_wrapping() -> None:
    one = parse_memory_file('<memory chat="c" date="d">\n- a long\n  memory\n</memory>\n')
    two = parse_memory_file('<memory date="d" chat="c">\n- a long memory\n</memory>\n')

    assert list_bullets(one)[0].memory_id == list_bullets(two)[0].memory_id


def test_ids_are_the_same_as_in_every_earlier_release() -> None:
    # Ids are stored in history, previews and the index: their recipe never changes.
    memory = parse_memory_file(
        '<memory date="2026-02-15 10:42" chat="Élara - 2026-02-15@10h00m00s123ms">\n'
        "- Élara fears deep water — since Rowan drowned.\n- same\n- same\n</memory>\n"
    )

    ids = [r.memory_id for r in list_bullets(memory)]

    assert ids == ["208dfbbae8a7", "45f4678bef4b", "d6b8a6631a73"]


def test_find_bullet_by_id() -> None:
    memory = parse_memory_file(SAMPLE)
    wanted = list_bullets(memory)[3]

    assert find_bullet(memory, wanted.memory_id) == wanted
    with pytest.raises(NotFoundError, match="no memory with id 'nope'"):
        find_bullet(memory, "nope")


# ---- dates ------------------------------------------------------------------------


def test_format_block_date_is_local_minutes(tokyo_time: None) -> None:
    assert format_block_date(datetime(2026, 2, 15, 10, 42, 59)) == "2026-02-15 10:42"
    assert format_block_date(datetime(2026, 2, 15, 10, 42, tzinfo=UTC)) == "2026-02-15 19:42"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-02-15 10:42", datetime(2026, 2, 15, 10, 42)),
        (" 2026-02-15T10:42:07 ", datetime(2026, 2, 15, 10, 42, 7)),
        ("2026-02-15T01:42:00Z", datetime(2026, 2, 15, 10, 42)),
        ("2026-02-15", datetime(2026, 2, 15)),
        ("2/15/2026, 10:42:00 PM", datetime(2026, 2, 15, 22, 42)),
        ("unknown", None),
        ("", None),
        ("2026-13-40", None),
    ],
)
def test_parse_block_date_is_lenient(
    tokyo_time: None, text: str, expected: datetime | None
) -> None:
    assert parse_block_date(text) == expected


def test_block_date_round_trips(tokyo_time: None) -> None:
    moment = datetime(2031, 7, 4, 23, 59)
    assert parse_block_date(format_block_date(moment)) == moment


# ---- legacy layouts ----------------------------------------------------------------

LEGACY_SECTIONS = """\
# Seraphina's memories

## Memory 1
_Extracted: 2026-01-03 10:00_
- Seraphina met the user at the forest edge.
- She offered shelter
  for the night.

## Memory 2
The user mentioned a sister in the capital.
* They share a love of 花 (flowers).
"""


@pytest.mark.parametrize(
    ("text", "layout"),
    [
        (SAMPLE, "blocks"),
        ('<memory chat="unclosed">\n- a\n', "blocks"),
        (LEGACY_SECTIONS, "legacy_sections"),
        ("- one\n- two\n", "plain"),
        ("a single remembered line", "plain"),
        (" \n\t\n", "empty"),
        ("", "empty"),
    ],
)
def test_detect_layout(text: str, layout: str) -> None:
    assert detect_layout(text) == layout


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_legacy_sections_become_imported_blocks(newline: str) -> None:
    migrated = migrate_legacy(LEGACY_SECTIONS.replace("\n", newline))

    expected = """\
# Seraphina's memories

<memory chat="imported" date="2026-01-03 10:00">
- Seraphina met the user at the forest edge.
- She offered shelter for the night.
</memory>

<memory chat="imported">
- The user mentioned a sister in the capital.
- They share a love of 花 (flowers).
</memory>
"""
    assert migrated.render() == expected.replace("\n", newline)
    assert parse_memory_file(migrated.render()) == migrated


def test_plain_text_lines_become_one_imported_block() -> None:
    text = "• first thing\n\n2. second thing\n3) third\n+ fourth\n-\n  plain fifth  \n"
    migrated = migrate_legacy(text)

    assert migrated.block_count == 1
    block = migrated.blocks[0]
    assert (block.chat, block.attribute("date")) == ("imported", None)
    assert [b.text for b in block.bullets] == [
        "first thing",
        "second thing",
        "third",
        "fourth",
        "plain fifth",
    ]


def test_plain_text_with_tag_lookalikes_is_made_safe() -> None:
    migrated = migrate_legacy('note </memory>\n<memory chat="x"> inline\n')

    assert migrated.block_count == 1
    assert migrated.bullet_count == 2


def test_headings_of_a_legacy_file_stay_lines_of_their_block_not_memories() -> None:
    text = "# Mira\n- first\n## Later\n* second\n"

    block = migrate_legacy(text).blocks[0]

    assert [b.text for b in block.bullets] == ["first", "second"]
    assert [line.raw for line in block.notes] == ["# Mira\n", "## Later\n"]
    assert (
        block.render()
        == '<memory chat="imported">\n# Mira\n- first\n## Later\n- second\n</memory>\n'
    )


def test_a_legacy_file_with_a_byte_order_mark_keeps_it() -> None:
    migrated = migrate_legacy("\ufeff## Memory 1\n- first\n")

    assert migrated.render().startswith('\ufeff<memory chat="imported">\n- first\n')


@pytest.mark.parametrize("text", [SAMPLE, '<memory chat="unclosed">\n- a\n', "  \n", "-\n*\n"])
def test_files_with_blocks_or_nothing_to_migrate_come_back_unchanged(text: str) -> None:
    assert migrate_legacy(text).render() == text


# ---- properties ----------------------------------------------------------------------

_STRUCTURAL_PIECES = st.sampled_from(
    [
        "<memory>",
        "</memory>",
        '<memory chat="x" date="y">',
        "<MEMORY topic='t'>",
        "\n",
        "\r\n",
        "- ",
        "  ",
        "text",
        "森🌸",
        "&amp;",
        '"',
        "<",
        ">",
        "\r",
    ]
)
_ANY_TEXT = st.one_of(st.text(max_size=300), st.lists(_STRUCTURAL_PIECES, max_size=60).map("".join))


@settings(max_examples=200, deadline=None)
@given(_ANY_TEXT)
def test_any_text_renders_back_exactly(text: str) -> None:
    assert parse_memory_file(text).render() == text


# Text that holds something printable: what a memory may be made of.
_MEMORY_TEXT = st.text(min_size=1, max_size=40).filter(lambda t: without_unprintable(t).strip())
_WORD_ALPHABET = st.characters(
    blacklist_categories=("Cs", "Cc", "Zs", "Zl", "Zp"), blacklist_characters="-*<"
)
_WORDS = st.lists(st.text(_WORD_ALPHABET, min_size=1, max_size=8), min_size=1, max_size=6)
_ATTRIBUTE_NAMES = st.from_regex(r"[a-z][a-z0-9_-]{0,6}", fullmatch=True)


@st.composite
def _documents(draw: st.DrawFn) -> tuple[str, list[tuple[tuple[tuple[str, str], ...], list[str]]]]:
    """A file with free text, blocks, wrapped bullets and notes, and what it holds."""
    lines: list[str] = []
    expected = []
    for _ in range(draw(st.integers(0, 4))):
        for words in draw(st.lists(st.one_of(_WORDS, st.just([])), max_size=3)):
            lines.append(draw(st.sampled_from(["", "# ", "  "])) + " ".join(words))
        names = draw(st.lists(_ATTRIBUTE_NAMES, unique=True, max_size=4))
        attributes = tuple((name, draw(st.text(max_size=12))) for name in names)
        lines.append(MemoryBlock(attributes).render().split("\n")[0])
        lines.extend(" ".join(words) for words in draw(st.lists(_WORDS, max_size=2)))
        bullets = []
        for words in draw(st.lists(_WORDS, max_size=4)):
            cut = draw(st.integers(1, len(words)))
            lines.append("- " + " ".join(words[:cut]))
            if cut < len(words):
                lines.append(draw(st.sampled_from(["  ", "\t"])) + " ".join(words[cut:]))
            lines.extend([""] * draw(st.integers(0, 1)))
            lines.extend(" ".join(words) for words in draw(st.lists(_WORDS, max_size=1)))
            bullets.append(" ".join(words))
        lines.append("</memory>")
        expected.append((attributes, bullets))
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    ending = draw(st.sampled_from(["", newline]))
    return newline.join(lines) + (ending if lines else ""), expected


@settings(max_examples=150, deadline=None)
@given(_documents())
def test_generated_documents_read_back_what_was_written(document: tuple) -> None:
    text, expected = document
    memory = parse_memory_file(text)

    assert memory.render() == text
    assert [(b.attributes, [x.text for x in b.bullets]) for b in memory.blocks] == expected
    assert parse_memory_file(memory.render()) == memory


@settings(max_examples=150, deadline=None)
@given(_documents(), st.data())
def test_editing_one_bullet_leaves_every_other_segment_identical(
    document: tuple, data: st.DataObject
) -> None:
    memory = parse_memory_file(document[0])
    refs = list_bullets(memory)
    if not refs:
        return
    ref = data.draw(st.sampled_from(refs))
    edited = replace_bullet(memory, ref.address, data.draw(_MEMORY_TEXT))

    position = [i for i, s in enumerate(memory.segments) if isinstance(s, MemoryBlock)][
        ref.address.block
    ]
    before = [s.render() if isinstance(s, MemoryBlock) else s.text for s in memory.segments]
    after = [s.render() if isinstance(s, MemoryBlock) else s.text for s in edited.segments]
    assert len(after) == len(before)
    assert after[:position] == before[:position]
    assert after[position + 1 :] == before[position + 1 :]


@settings(max_examples=150, deadline=None)
@given(_ANY_TEXT, st.lists(_MEMORY_TEXT, max_size=4), st.text())
def test_appended_blocks_from_untrusted_text_always_read_back_intact(
    existing: str, bullets: list[str], chat: str
) -> None:
    before = parse_memory_file(existing)
    after = append_block(before, build_block(chat, "d", bullets))

    assert after.render().startswith(existing)
    assert after.block_count == before.block_count + 1
    assert after.blocks[-1].chat == chat
    assert [b.text for b in after.blocks[-1].bullets] == [clean_memory_text(b) for b in bullets]


# ---- byte order mark ------------------------------------------------------------------

BOM_FILE = '\ufeff<memory chat="c" date="d">\n- first\n- second\n</memory>\n'


def test_a_byte_order_mark_is_read_apart_and_written_back() -> None:
    memory = parse_memory_file(BOM_FILE)

    assert memory.bom and memory.block_count == 1
    assert memory.blocks[0].bullets[0].text == "first"
    assert memory.render() == BOM_FILE


@pytest.mark.parametrize(
    "edit",
    [
        lambda m: append_block(m, build_block("c", "d", ["third"])),
        lambda m: replace_bullet(m, BulletAddress(0, 0), "changed"),
        lambda m: delete_bullet(m, BulletAddress(0, 1)),
        lambda m: delete_block(m, 0),
    ],
)
def test_every_edit_keeps_the_byte_order_mark(edit) -> None:
    assert edit(parse_memory_file(BOM_FILE)).render().startswith("\ufeff")


@pytest.mark.parametrize(
    ("note", "kept_blank"), [("  Indented note.\n", True), ("Note at the margin.\n", False)]
)
def test_deleting_a_bullet_never_lets_a_note_wrap_onto_the_bullet_above(
    note: str, kept_blank: bool
) -> None:
    text = f'<memory chat="c">\n- first\n- second\n\n{note}</memory>\n'

    after = delete_bullet(parse_memory_file(text), BulletAddress(0, 1))

    blank = "\n" if kept_blank else ""
    assert after.render() == f'<memory chat="c">\n- first\n{blank}{note}</memory>\n'
    assert [b.text for b in after.blocks[0].bullets] == ["first"]
