"""A page of a chat's messages reads as the same slice of the whole chat."""

from __future__ import annotations

import json

import pytest

from charmemory.errors import FormatError
from charmemory.formats.chat import parse_chat, parse_message_page


def chat_text(count: int, *, header: bool = True, blank_lines: bool = False) -> str:
    lines = [json.dumps({"chat_metadata": {"note": "no mes here"}, "user_name": "unused"})]
    if not header:
        lines = []
    for index in range(count):
        lines.append(json.dumps({"name": "Mira", "is_user": index % 2 == 1, "mes": f"m{index}"}))
        if blank_lines and index % 3 == 0:
            lines.append("   ")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("header", [True, False])
@pytest.mark.parametrize("blank_lines", [True, False])
@pytest.mark.parametrize(("before", "count"), [(None, 4), (None, 50), (5, 3), (2, 10), (0, 5)])
def test_a_page_is_the_slice_of_the_whole_chat(
    header: bool, blank_lines: bool, before: int | None, count: int
) -> None:
    text = chat_text(11, header=header, blank_lines=blank_lines)
    whole = parse_chat(text).messages
    page = parse_message_page(text, before=before, count=count)
    end = len(whole) if before is None else before
    start = max(0, end - count)
    assert page.total == 11
    assert page.first == start
    assert [m.mes for m in page.messages] == [m.mes for m in whole[start:end]]
    assert page.header == parse_chat(text).header


def test_a_header_that_mentions_mes_is_still_a_header() -> None:
    text = json.dumps({"chat_metadata": {"mes": "a note"}}) + "\n" + chat_text(2, header=False)
    assert parse_message_page(text, before=None, count=5).total == 2


def test_only_the_lines_shown_are_decoded() -> None:
    damaged = chat_text(3).replace('{"name": "Mira", "is_user": true, "mes": "m1"}', "{oops")
    assert [m.mes for m in parse_message_page(damaged, before=None, count=1).messages] == ["m2"]
    with pytest.raises(FormatError):
        parse_message_page(damaged, before=None, count=3)
