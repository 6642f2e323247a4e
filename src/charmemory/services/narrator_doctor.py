"""`charmemory doctor`: a narrator chat's state checked, and one generation explained."""

from __future__ import annotations

from dataclasses import dataclass

from charmemory.core.chat import editing
from charmemory.core.narrator.cast import find_member
from charmemory.core.narrator.doctor import Finding, check, explain
from charmemory.ports import ChatRef, GenerationLog
from charmemory.services.books import BookService
from charmemory.services.narrator import NarratorService

RECORDS_READ = 1000  # generations looked through for the one that wrote a message


@dataclass(frozen=True)
class Checkup:
    ref: ChatRef
    findings: list[Finding]

    @property
    def healthy(self) -> bool:
        return all(finding.ok for finding in self.findings)


class NarratorDoctor:
    def __init__(self, narrator: NarratorService, books: BookService, generations: GenerationLog):
        self._narrator = narrator
        self._books = books
        self._generations = generations

    def check(self, character_name: str, chat_id: str | None = None) -> Checkup:
        character, loaded = self._books.chat(character_name, chat_id)
        state = self._narrator.state_of(loaded.ref, loaded.chat)
        findings = check(
            state.activation,
            group_chat=loaded.ref.group is not None,
            lorebook_mode=self._books.settings(character.name).lorebook_mode,
            books=self._books.store.names(),
            chat=loaded.chat,
            dropped=state.dropped,
        )
        return Checkup(loaded.ref, findings)

    def explain(
        self, character_name: str, member: str, message: int, chat_id: str | None = None
    ) -> list[str]:
        """Why ``member``'s book was or was not in the generation of message ``message``."""
        character, loaded = self._books.chat(character_name, chat_id)
        editing.message_at(loaded.chat, message)
        state = self._narrator.state_of(loaded.ref, loaded.chat)
        records = self._generations.last(character.name, loaded.ref.id, RECORDS_READ)
        record = next((r for r in records if r.message_index == message), None)
        return explain(
            state.activation,
            find_member(state.config, member),
            message,
            loaded.chat,
            books=self._books.store.names(),
            record=None if record is None else record.to_dict(),
        )
