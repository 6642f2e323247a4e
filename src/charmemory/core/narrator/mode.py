"""Whether narrator mode is on for a chat, and where the chat keeps its cast.

Narrator mode is active only when the chat is not a group chat, manual lorebook
mode is on, narrator mode is enabled for the chat, and an omniscient memory book
(the chat's manual book, `STMemoryBooks.manualLorebook`) is selected. Anything
else leaves the chat an ordinary one: no snapshot, no stamps, no cast books.
"""

from __future__ import annotations

from dataclasses import dataclass

from charmemory.core.books import chat_state
from charmemory.core.narrator.cast import NarratorConfig, ReadConfig, read_config
from charmemory.formats.chat import ChatHeader

MODE = "narratorMode"
MANUAL = "manual"


def narrator_of(header: ChatHeader) -> ReadConfig:
    """The chat's cast, normalised (an empty, disabled one when it has none)."""
    return read_config(chat_state.state_of(header).get(MODE))


def write_config(header: ChatHeader, config: NarratorConfig) -> None:
    chat_state.update_state(header, **{MODE: config.to_dict()})


@dataclass(frozen=True)
class Activation:
    config: NarratorConfig
    omniscient: str | None
    reasons: tuple[str, ...]  # why narrator mode is not active (none: it is)

    @property
    def active(self) -> bool:
        return not self.reasons


def activation(header: ChatHeader, *, group_chat: bool, lorebook_mode: str) -> Activation:
    """Narrator mode's state in a chat, with every reason it is not active."""
    config = narrator_of(header).config
    omniscient = chat_state.bindings_of(header).manual_book
    reasons = []
    if group_chat:
        reasons.append("this is a group chat (narrator mode is for one-on-one chats)")
    if lorebook_mode != MANUAL:
        reasons.append(f"manual lorebook mode is off (books.lorebook_mode is {lorebook_mode})")
    if not config.enabled:
        reasons.append("narrator mode is not enabled for this chat")
    if omniscient is None:
        reasons.append("no omniscient memory book is selected")
    return Activation(config, omniscient, tuple(reasons))
