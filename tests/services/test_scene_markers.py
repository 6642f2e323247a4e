"""Marking a scene writes the markers into the chat, and nothing else of it."""

from pathlib import Path

import pytest

from charmemory.core.books.markers import SceneMarkers
from charmemory.errors import NotFoundError
from tests.support.books import (
    CHARACTER,
    answering,
    book_app,
    book_workspace,
    chat_header,
    chat_messages,
    speaker_lines,
    write_chat,
)


def test_marks_are_saved_in_the_chat_and_read_back(tmp_path: Path) -> None:
    ws = book_workspace(tmp_path / "ws")
    write_chat(ws, speaker_lines(12), {"world_info": "Book"})
    messages = chat_messages(ws)
    app = book_app(ws, answering())
    assert app.scene_markers.mark(CHARACTER, 4, "start") == SceneMarkers(4, None)
    assert app.scene_markers.mark(CHARACTER, 9, "end") == SceneMarkers(4, 9)
    assert app.scene_markers.markers(CHARACTER) == SceneMarkers(4, 9)
    metadata = chat_header(ws)["chat_metadata"]
    assert metadata["STMemoryBooks"] == {"sceneStart": 4, "sceneEnd": 9}
    assert metadata["world_info"] == "Book"
    assert chat_messages(ws) == messages
    assert app.scene_markers.clear(CHARACTER) == SceneMarkers()
    assert chat_header(ws)["chat_metadata"]["STMemoryBooks"] == {}


def test_a_message_the_chat_does_not_have_cannot_be_marked(tmp_path: Path) -> None:
    ws = book_workspace(tmp_path / "ws")
    write_chat(ws, speaker_lines(3))
    app = book_app(ws, answering())
    with pytest.raises(NotFoundError, match="no message 3"):
        app.scene_markers.mark(CHARACTER, 3, "end")
    assert "STMemoryBooks" not in chat_header(ws)["chat_metadata"]
