from __future__ import annotations

import json
from pathlib import Path

import pytest

from charmemory.errors import FormatError
from charmemory.formats.group import (
    Group,
    GroupJoin,
    looks_like_group,
    parse_group,
    render_group,
)

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "groups" / "1764533703221.json"


def test_a_group_sillytavern_wrote_renders_back_to_the_same_bytes() -> None:
    text = FIXTURE.read_text(encoding="utf-8")
    group = parse_group(text, source=FIXTURE.name)
    assert render_group(group) == text
    assert group.id == "1764533703221"
    assert group.members == ("default_Seraphina.png", "Mira.png")
    assert group.chat_id == "2026-11-30@20h15m03s221ms"
    assert group.chats == ("2026-11-30@20h15m03s221ms",)
    assert group.activation_strategy == 0 and not group.allow_self_responses


def test_a_change_keeps_every_other_key_where_it_was() -> None:
    group = parse_group(FIXTURE.read_text(encoding="utf-8"))
    group.set("disabled_members", ["Mira.png"])
    group.record_join("2026-11-30@20h15m03s221ms", "Abel.png", GroupJoin(4, "abc", "d"))
    written = json.loads(render_group(group))
    original = json.loads(FIXTURE.read_text(encoding="utf-8"))
    assert list(written)[: len(original)] == list(original)  # order kept, ours appended
    assert written["date_added"] == 1764533703221.4 and written["past_metadata"] == {}
    assert group.disabled_members == ("Mira.png",)
    again = parse_group(render_group(group))
    assert again.joins("2026-11-30@20h15m03s221ms") == {"Abel.png": GroupJoin(4, "abc", "d")}
    assert again.joins("another chat") == {}


def test_a_new_group_has_sillytaverns_keys_in_its_order() -> None:
    group = Group.new("17", "Crew", ["Mira.png", "Abel.png"], "2026-01-01@10h00m00s000ms")
    assert list(group.data) == [
        "id",
        "name",
        "members",
        "avatar_url",
        "allow_self_responses",
        "activation_strategy",
        "generation_mode",
        "disabled_members",
        "chat_metadata",
        "fav",
        "chat_id",
        "chats",
        "auto_mode_delay",
        "generation_mode_join_prefix",
        "generation_mode_join_suffix",
    ]
    assert render_group(group).startswith(
        '{\n    "id": "17",\n    "name": "Crew",\n    "members": [\n'
    )


@pytest.mark.parametrize(
    "text",
    ['["a"]', '{"name": "x", "members": []}', '{"id": "1", "members": "Mira.png"}', "{"],
)
def test_what_is_not_a_group_is_refused(text: str) -> None:
    with pytest.raises(FormatError):
        parse_group(text, source="g.json")


def test_malformed_joins_are_ignored_not_fatal() -> None:
    group = Group.new("1", "g", [], "c")
    group.set(
        "charmemory", {"joins": {"c": {"A.png": {"at": -1}, "B.png": "x", "C.png": {"at": 3}}}}
    )
    assert group.joins("c") == {"C.png": GroupJoin(3)}


def test_groups_are_told_from_cards_and_lorebooks() -> None:
    assert looks_like_group({"id": "1", "members": [], "chats": []})
    assert not looks_like_group({"name": "Mira", "data": {}})
    assert not looks_like_group({"entries": {}})
