"""Chat text as markdown: formatting shows, nothing from the text runs or loads."""

from __future__ import annotations

import re

import pytest

from charmemory.web.markdown import render_markdown


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("<3 and a < b", "<p>&lt;3 and a &lt; b</p>"),
        ("*waves* **hello**", "<p><em>waves</em> <strong>hello</strong></p>"),
        ("line one\nline two", "<p>line one<br />\nline two</p>"),
        ("</memory> done", "<p>&lt;/memory&gt; done</p>"),
    ],
)
def test_text_reads_as_written_with_its_formatting(text: str, shown: str) -> None:
    assert render_markdown(text).strip() == shown


@pytest.mark.parametrize(
    "hostile",
    [
        "<script>alert(1)</script>",
        '<img src="x" onerror="alert(1)">',
        "[click](javascript:alert(1))",
        "[click](JaVaScRiPt:alert(1))",
        "[click](vbscript:msgbox(1))",
        "[click](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
        '<a href="javascript:alert(1)">click</a>',
        "<iframe src=https://example.com></iframe>",
        "<svg onload=alert(1)>",
    ],
)
def test_nothing_in_a_message_becomes_markup_that_runs(hostile: str) -> None:
    html = render_markdown(hostile).lower()
    assert "<script" not in html and "<img" not in html and "<iframe" not in html
    assert "<svg" not in html
    assert not re.search(r"<[a-z]+[^>]*\son\w+=", html)  # no tag with an event handler
    assert 'href="javascript' not in html and 'href="vbscript' not in html
    assert 'href="data' not in html


def test_images_are_not_fetched_and_links_open_apart() -> None:
    html = render_markdown("![x](https://example.com/t.png) [site](https://example.com)")
    assert "<img" not in html
    link = '<a href="https://example.com" rel="noopener noreferrer nofollow" target="_blank">'
    assert link in html
