"""Scene markers: where a person marked a scene's first and last message in a chat.

STMB keeps them in the chat's state as `sceneStart` and `sceneEnd` (message ids),
so a chat marked here shows the same markers in SillyTavern and back. A scene may
be a single message (start and end on it). Marking a start after the end (or an
end before the start) drops the other marker rather than make a backwards range;
marking the same message again takes its marker away.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

from charmemory.core.books import chat_state
from charmemory.core.books.scenes import SceneRange
from charmemory.formats.chat import ChatHeader

SCENE_START = "sceneStart"
SCENE_END = "sceneEnd"
Edge = Literal["start", "end"]
Place = Literal["start", "end", "only", "inside", ""]


@dataclass(frozen=True)
class SceneMarkers:
    start: int | None = None
    end: int | None = None

    @property
    def range(self) -> SceneRange | None:
        """The marked scene, once both ends are marked."""
        if self.start is None or self.end is None:
            return None
        return SceneRange(self.start, self.end)

    def marked(self, index: int, edge: Edge) -> SceneMarkers:
        """The markers after marking message ``index`` as the scene's ``edge``."""
        if edge == "start":
            start = None if self.start == index else index
            end = self.end if self.end is None or start is None or self.end >= start else None
            return replace(self, start=start, end=end)
        end = None if self.end == index else index
        start = self.start if self.start is None or end is None or self.start <= end else None
        return replace(self, start=start, end=end)

    def place(self, index: int) -> Place:
        """Where message ``index`` is in the marked scene (`""`: outside it)."""
        if index == self.start and index == self.end:
            return "only"
        if index == self.start:
            return "start"
        if index == self.end:
            return "end"
        found = self.range
        if found is not None and found.first < index < found.last:
            return "inside"
        return ""


def markers_of(header: ChatHeader) -> SceneMarkers:
    state = chat_state.state_of(header)
    return SceneMarkers(_message_id(state.get(SCENE_START)), _message_id(state.get(SCENE_END)))


def set_markers(header: ChatHeader, markers: SceneMarkers) -> None:
    """Write the markers into the chat's state (an absent marker is removed)."""
    chat_state.update_state(header, **{SCENE_START: markers.start, SCENE_END: markers.end})


def _message_id(value: object) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        return None
    return value
