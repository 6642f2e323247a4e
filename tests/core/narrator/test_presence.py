"""The presence grid's data: each scene of the omniscient book, in order, and the members
whose books hold its copy."""

from __future__ import annotations

from charmemory.core.books.answer import SceneAnswer
from charmemory.core.books.entry import EntrySettings
from charmemory.core.books.layout import SceneWriting, place_scene
from charmemory.core.books.scenes import SceneRange, compile_scene
from charmemory.core.books.titles import TitleValues
from charmemory.core.narrator.presence import presence
from charmemory.core.narrator.scenes import narrator_targets
from charmemory.formats.lorebook import Lorebook
from tests.core.narrator.test_scenes import CONFIG, chat

BOOKS = ("Omni", "Alice Book", "Bob Book", "Clara Book")


def write_scenes(*casts: list[str]) -> dict[str, Lorebook]:
    """One scene memory per cast given, in order, written as narrator mode writes them."""
    books = {name: Lorebook() for name in BOOKS}
    source = chat(*casts)
    for number, cast in enumerate(casts):
        scene = compile_scene(
            source, SceneRange(2 * number, 2 * number + 1), chat_id="c", character="N", user="A"
        )
        targets = narrator_targets("Omni", CONFIG, cast, label="c")
        answer = SceneAnswer(f"Scene {number}", "- It happened.", ())
        writing = SceneWriting(scene, answer, "[000] - {{title}}", EntrySettings(), TitleValues())
        place_scene(books, targets, writing)
    return books


def test_each_scene_marks_the_members_whose_books_hold_its_copy() -> None:
    books = write_scenes(["a", "c"], [], ["b"])
    entries = {name: list(book.entries.values()) for name, book in books.items()}
    grid = presence(CONFIG, "Omni", entries["Omni"], entries)
    assert [m.name for m in grid.members] == ["Alice", "Bob", "Clara"]  # retired kept
    assert [scene.title for scene in grid.scenes] == [
        "001 - Scene 0",
        "002 - Scene 1",
        "003 - Scene 2",
    ]
    assert [scene.uid for scene in grid.scenes] == [0, 1, 2]
    assert [dict(scene.copies) for scene in grid.scenes] == [{"a": 0, "c": 0}, {}, {"b": 0}]


def test_a_copy_of_another_omniscient_book_or_a_plain_entry_counts_for_nothing() -> None:
    books = write_scenes(["a"])
    books["Bob Book"].add("Bob's own note", ["note"])
    entries = {name: list(book.entries.values()) for name, book in books.items()}
    elsewhere = presence(CONFIG, "Other Omni", entries["Omni"], entries)
    assert [dict(scene.copies) for scene in elsewhere.scenes] == [{}]
    mine = presence(CONFIG, "Omni", [*entries["Omni"], *entries["Bob Book"]], entries)
    assert [scene.title for scene in mine.scenes] == ["001 - Scene 0"]
