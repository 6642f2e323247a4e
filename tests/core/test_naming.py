import re

import pytest

from charmemory.core.naming import (
    MAX_NAME_BYTES,
    checked_file_name,
    memory_file_name,
    sanitize,
    sharing_a_stem,
)
from charmemory.errors import UnsafePathError


def test_names_follow_the_reference_extension() -> None:
    assert memory_file_name("Seraphina") == "Seraphina-memories.md"
    assert memory_file_name("Dr. Zoë K'tal") == "Dr__Zo__K_tal-memories.md"
    assert (
        memory_file_name("Seraphina", chat_id="Seraphina - 2026-02-15@10h00m00s123ms")
        == "Seraphina-chatSeraphina_-_2026-02-15_10h00m00s123ms-memories.md"
    )


@pytest.mark.parametrize("name", ["../../etc/passwd", "/abs.md", "a/b.md", "..", ".hidden", "  "])
def test_no_name_or_override_escapes(name: str) -> None:
    assert "/" not in sanitize(name) and ".." not in sanitize(name).replace("_", "")
    with pytest.raises(UnsafePathError):
        memory_file_name("x", override=name)


def test_override_gets_markdown_suffix() -> None:
    assert memory_file_name("x", override="my notes") == "my notes.md"
    assert checked_file_name("book.json") == "book.json"


@pytest.mark.parametrize(
    "names", [["Ann B", "Ann_B"], ["a/b", "a\\b"], ["Ann", "ann"], ["Ann B", "Ann_B", "Ann?B"]]
)
def test_names_that_sanitise_alike_never_share_a_file(names: list[str]) -> None:
    files = [memory_file_name(name, names=names) for name in names]

    assert len({file.casefold() for file in files}) == len(names)
    assert all(re.fullmatch(r"[\w-]+-[0-9a-f]{6}-memories\.md", file) for file in files)
    # The same names give the same files, whatever order they are listed in.
    assert files == [memory_file_name(name, names=reversed(names)) for name in names]


def test_a_name_no_other_shares_keeps_the_plain_file_name() -> None:
    assert memory_file_name("Ann B", names=["Ann B", "Bob", "AnnB"]) == "Ann_B-memories.md"
    assert sharing_a_stem("Ann B", ["Ann B", "Ann_B", "ann b", "Bob"]) == ["Ann_B", "ann b"]


def test_per_chat_files_of_names_that_sanitise_alike_stay_apart() -> None:
    names = ["Ann B", "Ann_B"]
    one, two = (memory_file_name(name, chat_id="c1", names=names) for name in names)

    assert one != two and one.endswith("-chatc1-memories.md")


LONG = "Captain " + "Mira Vance the Unbowed of the Northern Reach " * 7  # 323 characters


def test_a_long_name_is_shortened_the_same_way_every_time_with_a_hash() -> None:
    name = memory_file_name(LONG)
    assert len(name.encode()) <= MAX_NAME_BYTES and name.endswith("-memories.md")
    assert name.startswith("Captain_Mira_Vance_the_Unbowed")
    assert memory_file_name(LONG) == name
    assert memory_file_name(LONG + "!") != name  # names that differ only at the end stay apart
    assert memory_file_name("Mira") == "Mira-memories.md"  # short names are untouched


def test_a_per_chat_file_of_a_long_name_fits() -> None:
    chat = "Captain " + "x" * 110 + " - 2026-02-15@10h00m00s123ms"
    for character in ("C" * 120, LONG):
        name = memory_file_name(character, chat_id=chat)
        assert len(name.encode()) <= MAX_NAME_BYTES and name.endswith("-memories.md")
        assert name != memory_file_name(character, chat_id=chat + "1")


def test_an_override_too_long_for_a_file_name_is_refused() -> None:
    with pytest.raises(UnsafePathError, match="too long for a file name"):
        checked_file_name("n" * 300)
    with pytest.raises(UnsafePathError, match="too long"):
        memory_file_name("x", override="é" * 120)  # 240 bytes, and ".md" after them
    assert checked_file_name("n" * (MAX_NAME_BYTES - 3), default_suffix=".md").endswith(".md")


def test_a_long_override_per_chat_keeps_its_suffix_and_whole_letters() -> None:
    name = memory_file_name("x", chat_id="c" * 200, override="é" * 110 + ".md")
    assert len(name.encode()) <= MAX_NAME_BYTES and name.endswith(".md")
    assert name.startswith("é" * 110) and "\ufffd" not in name
