import pytest

from charmemory.core.naming import checked_file_name, memory_file_name, sanitize
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
