"""The scene bar above a chat's messages: the scene marked for a memory book, and the
book its memories go to (chosen there, as the lorebook mode reads it)."""

from __future__ import annotations

from dataclasses import dataclass

from charmemory.composition import App
from charmemory.core.books import chat_state
from charmemory.core.books.markers import SceneMarkers, markers_of
from charmemory.formats.chat import ChatHeader


@dataclass(frozen=True)
class SceneBar:
    url: str  # the chat's, /chat/<character>/<chat>
    markers: SceneMarkers
    book: str | None  # where the chat's scene memories go now
    books: tuple[str, ...]  # the workspace's lorebooks, to choose from
    mode: str  # books.lorebook_mode

    @property
    def manual(self) -> bool:
        return self.mode == "manual"


def scene_bar_view(app: App, character: str, url: str, header: ChatHeader) -> SceneBar:
    mode = app.books.settings(character).lorebook_mode
    bindings = chat_state.bindings_of(header)
    return SceneBar(
        url,
        markers_of(header),
        bindings.manual_book if mode == "manual" else bindings.chat_book,
        tuple(app.books.store.names()),
        mode,
    )
