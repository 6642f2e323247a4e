"""The cast of a narrator chat: STMB's shape, its rules, and normalising what a chat holds."""

import pytest

from charmemory.core.narrator.cast import (
    CastError,
    NarratorConfig,
    add_member,
    book_issues,
    find_member,
    read_config,
    set_active,
    set_retired,
)
from charmemory.errors import NotFoundError


def cast(*names: str, omniscient: str = "Omni") -> NarratorConfig:
    config = NarratorConfig(enabled=True)
    for name in names:
        config = add_member(
            config, name, f"{name} Book", member_id=f"id-{name}", omniscient=omniscient
        )
    return config


def test_the_shape_stmb_keeps_in_chat_metadata() -> None:
    config = set_active(cast("Alice", "Bob"), ["id-Bob"])
    assert config.to_dict() == {
        "version": 1,
        "enabled": True,
        "members": [
            {
                "id": "id-Alice",
                "avatar": "",
                "name": "Alice",
                "lorebookName": "Alice Book",
                "retired": False,
            },
            {
                "id": "id-Bob",
                "avatar": "",
                "name": "Bob",
                "lorebookName": "Bob Book",
                "retired": False,
            },
        ],
        "activeCastIds": ["id-Bob"],
    }
    assert read_config(config.to_dict()).config == config
    assert read_config(config.to_dict()).dropped == ()


def test_names_are_unique_ignoring_case_and_accents() -> None:
    config = cast("Zoë")
    for taken in ("zoe", "ZOË", " Zoe "):
        with pytest.raises(CastError, match="already has Zoë"):
            add_member(config, taken, "Other", member_id="x", omniscient="Omni")
    assert find_member(config, "ZOE").id == "id-Zoë"


def test_each_member_has_a_book_of_their_own_never_the_omniscient_one() -> None:
    config = cast("Alice")
    with pytest.raises(CastError, match="already Alice's memory book"):
        add_member(config, "Bob", "Alice Book", member_id="x", omniscient="Omni")
    with pytest.raises(CastError, match="is the omniscient book"):
        add_member(config, "Bob", "Omni", member_id="x", omniscient="Omni")
    with pytest.raises(CastError, match="needs a name"):
        add_member(config, "  ", "B", member_id="x", omniscient="Omni")


def test_retiring_keeps_the_id_name_and_book_taken_and_can_be_undone() -> None:
    config = set_active(cast("Alice", "Bob"), ["id-Alice", "id-Bob"])
    retired = set_retired(config, "id-Alice", True)
    assert retired.active_ids == ("id-Bob",)
    assert [m.id for m in retired.current] == ["id-Bob"]
    with pytest.raises(CastError, match="retired: restore them instead"):
        add_member(retired, "alice", "New Book", member_id="x", omniscient="Omni")
    with pytest.raises(CastError, match="already Alice's memory book \\(retired"):
        add_member(retired, "Clara", "Alice Book", member_id="x", omniscient="Omni")
    assert set_active(retired, ["id-Alice"]).active_ids == ()  # cannot be chosen
    restored = set_retired(retired, "id-Alice", False)
    assert restored.member("id-Alice") == config.member("id-Alice")
    assert restored.active_ids == ("id-Bob",)  # restoring does not make them active


def test_an_empty_active_cast_is_valid_and_ids_are_deduplicated() -> None:
    config = cast("Alice", "Bob")
    assert set_active(config, []).active_members == ()
    assert set_active(config, ["id-Bob", "id-Bob", "nobody", "id-Alice"]).active_ids == (
        "id-Bob",
        "id-Alice",
    )


def test_reading_malformed_data_normalises_it_and_says_what_was_dropped() -> None:
    raw = {
        "version": 0,
        "enabled": "yes",  # only true is true
        "members": [
            {"id": "a", "name": " Alice ", "lorebookName": "Alice Book", "avatar": None},
            "Bob",
            {"id": "", "name": "Nameless id", "lorebookName": "X"},
            {"id": "c", "name": "Clara"},
            {"id": "a", "name": "Alice again", "lorebookName": "Other"},
            {"id": 7, "name": "Dora", "lorebookName": "Dora Book", "retired": True},
        ],
        "activeCastIds": ["a", "a", "7", "ghost", 3],
    }
    read = read_config(raw)
    assert [(m.id, m.name, m.book, m.retired) for m in read.config.members] == [
        ("a", "Alice", "Alice Book", False),
        ("7", "Dora", "Dora Book", True),
    ]
    assert read.config.enabled is False
    assert read.config.active_ids == ("a",)
    assert read.dropped == (
        "cast member 2 is not an object",
        "cast member 'Nameless id' has no id",
        "cast member 'Clara' has no book",
        "cast member 'Alice again' repeats the id a",
        "active cast id 7 names no current member",
        "active cast id ghost names no current member",
        "active cast id 3 names no current member",
    )
    assert read_config(None).config == NarratorConfig()
    assert read_config({"members": "nope"}).dropped == ()


def test_book_issues_cover_retired_members_too() -> None:
    config = read_config(
        {
            "members": [
                {"id": "a", "name": "Alice", "lorebookName": "Shared"},
                {"id": "b", "name": "Bob", "lorebookName": "Shared", "retired": True},
                {"id": "c", "name": "Clara", "lorebookName": "Omni"},
                {"id": "d", "name": "Dora", "lorebookName": "Gone", "retired": True},
            ]
        }
    ).config
    issues = [str(issue) for issue in book_issues(config, "Omni", ["Shared", "Omni"])]
    assert issues == [
        "Bob (retired) shares the memory book 'Shared' with Alice",
        "Clara uses the omniscient book 'Omni'",
        "the memory book 'Gone' of Dora (retired) does not exist",
    ]


def test_a_member_is_found_by_name_or_id() -> None:
    config = cast("Alice")
    assert find_member(config, "id-Alice").name == "Alice"
    with pytest.raises(NotFoundError, match="no cast member named 'Bob'; the cast: Alice"):
        find_member(config, "Bob")
