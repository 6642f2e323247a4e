"""Marking a chat's scene for a memory book: the markers are written into the chat."""

from __future__ import annotations

from charmemory.core.books.markers import Edge, SceneMarkers, markers_of, set_markers
from charmemory.errors import NotFoundError
from charmemory.services.books import BookService


class SceneMarking:
    def __init__(self, books: BookService):
        self._books = books

    def markers(self, character_name: str, chat_id: str | None = None) -> SceneMarkers:
        _, loaded = self._books.chat(character_name, chat_id)
        return markers_of(loaded.chat.header)

    def mark(
        self, character_name: str, index: int, edge: Edge, chat_id: str | None = None
    ) -> SceneMarkers:
        """Mark message ``index`` as the scene's start or end (again: unmark it)."""
        return self._change(character_name, chat_id, index=index, edge=edge)

    def clear(self, character_name: str, chat_id: str | None = None) -> SceneMarkers:
        return self._change(character_name, chat_id, index=None, edge="start")

    def _change(
        self, character_name: str, chat_id: str | None, *, index: int | None, edge: Edge
    ) -> SceneMarkers:
        library = self._books.library
        ref = library.chat(library.character(character_name), chat_id)
        with self._books.transactions.open([], ref, cause="scene marker") as write:
            chat = write.chat().chat
            if index is None:
                markers = SceneMarkers()
            elif 0 <= index < len(chat.messages):
                markers = markers_of(chat.header).marked(index, edge)
            else:
                raise NotFoundError(f"{ref.id} has no message {index}")
            set_markers(chat.header, markers)
            write.save_chat(chat)
        return markers
