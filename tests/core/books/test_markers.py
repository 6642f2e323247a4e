"""Scene markers: kept where STMB keeps them, never a backwards range, toggled off again."""

from __future__ import annotations

import pytest

from charmemory.core.books.markers import SceneMarkers, markers_of, set_markers
from charmemory.core.books.scenes import SceneRange
from charmemory.formats.chat import ChatHeader


def test_both_markers_make_the_scene_and_the_messages_know_their_place() -> None:
    markers = SceneMarkers().marked(3, "start").marked(6, "end")
    assert markers.range == SceneRange(3, 6)
    assert [markers.place(i) for i in range(2, 8)] == ["", "start", "inside", "inside", "end", ""]
    assert SceneMarkers(4, 4).place(4) == "only"
    assert SceneMarkers(start=4).range is None and SceneMarkers(start=4).place(5) == ""


@pytest.mark.parametrize(
    ("before", "index", "edge", "after"),
    [
        (SceneMarkers(2, 5), 7, "start", SceneMarkers(7, None)),  # start past the end
        (SceneMarkers(2, 5), 1, "end", SceneMarkers(None, 1)),  # end before the start
        (SceneMarkers(2, 5), 4, "start", SceneMarkers(4, 5)),
        (SceneMarkers(2, 5), 5, "start", SceneMarkers(5, 5)),  # a one-message scene
        (SceneMarkers(2, 5), 2, "start", SceneMarkers(None, 5)),  # again: unmarked
        (SceneMarkers(2, 5), 5, "end", SceneMarkers(2, None)),
        (SceneMarkers(None, 5), 8, "start", SceneMarkers(8, None)),
    ],
)
def test_marking(before: SceneMarkers, index: int, edge: str, after: SceneMarkers) -> None:
    assert before.marked(index, edge) == after  # type: ignore[arg-type]


def test_markers_live_in_stmbs_state_beside_its_other_keys() -> None:
    header = ChatHeader({"chat_metadata": {"STMemoryBooks": {"highestMemoryProcessed": 9}}})
    set_markers(header, SceneMarkers(10, 14))
    state = header.chat_metadata["STMemoryBooks"]
    assert state == {"highestMemoryProcessed": 9, "sceneStart": 10, "sceneEnd": 14}
    assert markers_of(header) == SceneMarkers(10, 14)
    set_markers(header, SceneMarkers())
    assert header.chat_metadata["STMemoryBooks"] == {"highestMemoryProcessed": 9}


def test_markers_that_are_not_message_ids_are_no_markers() -> None:
    state = {"sceneStart": True, "sceneEnd": "4"}
    assert markers_of(ChatHeader({"chat_metadata": {"STMemoryBooks": state}})) == SceneMarkers()
    stmb_null = {"sceneStart": 0, "sceneEnd": None}
    header = ChatHeader({"chat_metadata": {"STMemoryBooks": stmb_null}})
    assert markers_of(header) == SceneMarkers(0)
