"""The server-drawn pictures: what they show, and that text in them stays text."""

from __future__ import annotations

import re

from charmemory.ports import ActivityEntry
from charmemory.web.charts import (
    TimelineBlock,
    budget_bar,
    initials_avatar,
    memory_timeline,
    score_bars,
    token_breakdown,
)
from charmemory.web.history import diff_lines
from charmemory.web.stats import extraction_under_way

HOSTILE = "<script>alert(1)</script>"


def widths(svg: str, css: str) -> list[float]:
    return [float(w) for w in re.findall(rf'class="bar {css}[^"]*"[^>]*width="([\d.]+)"', svg)]


def test_score_bars_scale_bm25_against_the_best_and_the_vector_part_as_a_cosine() -> None:
    svg = score_bars(0.5, 3.0, 6.0, 0.25)
    assert widths(svg, "score") == [55.0]  # half of the 110-pixel bar
    assert widths(svg, "bm25") == [55.0]
    assert widths(svg, "vector") == [27.5]
    assert widths(score_bars(0.5, None, 6.0, 0.25), "bm25") == [0.0]


def test_a_budget_used_past_its_limit_is_marked() -> None:
    assert 'class="bar budget"' in budget_bar(50, 100, "World Info")
    assert 'class="bar budget over"' in budget_bar(150, 100, "World Info")


def test_the_token_breakdown_lists_each_section_largest_first_and_escapes_names() -> None:
    svg = token_breakdown({"chatHistory": 300, HOSTILE: 100, "empty": 0}, 400)
    assert svg.index("chatHistory 300") < svg.index("&lt;/script&gt; 100")
    assert "<script>" not in svg and "&lt;script&gt;" in svg
    assert "empty" not in svg
    assert re.findall(r'class="slice s0" x="0.0" y="0" width="([\d.]+)"', svg) == ["360.0"]


def test_the_timeline_puts_blocks_in_lanes_by_chat_and_spans_for_date_ranges() -> None:
    blocks = [
        TimelineBlock(0, "chat A", "2026-02-15 10:42", 3),
        TimelineBlock(1, HOSTILE, "2026-02-16 08:00 – 2026-03-01 09:00", 5),
        TimelineBlock(2, "chat A", "not a date", 1),
    ]
    svg = memory_timeline(blocks)
    assert svg.count('class="dot"') == 2  # the block without a readable date is left out
    assert svg.count('class="span"') == 1
    assert 'href="#block-0"' in svg and 'href="#block-1"' in svg
    assert "<script>" not in svg
    assert memory_timeline([]) == ""


def test_an_avatar_shows_initials_and_escapes_them() -> None:
    assert ">AB<" in initials_avatar("Ann Brook")
    assert "&lt;" in initials_avatar("<b> x")


def test_diff_lines_know_what_each_line_is() -> None:
    lines = diff_lines("--- a v1\n+++ a v2\n@@ -1 +1 @@\n-old\n+new\n same")
    assert [line.kind for line in lines] == ["head", "head", "hunk", "del", "add", "same"]


def entry(number: int, kind: str, message: str, chat: str = "c") -> ActivityEntry:
    return ActivityEntry(number, "2026-01-01T00:00:00", "info", kind, "Mira", chat, message, None)


def test_an_extraction_is_under_way_from_its_call_until_its_outcome() -> None:
    call = entry(2, "extract.call", "messages 3-8 sent to custom/m")
    assert extraction_under_way([entry(1, "extract.collect", "6 messages"), call], "c") == (
        "messages 3-8 sent to custom/m"
    )
    saved = entry(3, "extract.saved", "messages 3-8: 2 memories saved")
    assert extraction_under_way([call, saved], "c") == ""
    assert extraction_under_way([call], "another chat") == ""
    nothing = entry(4, "extract.collect", "0 messages to extract in 0 calls")
    assert extraction_under_way([nothing], "c") == ""
