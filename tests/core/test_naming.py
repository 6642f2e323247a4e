import pytest

from charmemory.core.naming import MAX_NAME_BYTES, checked_file_name, memory_file_name, sanitize
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
