"""The messages of an assembled prompt, each with the section it came from."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from charmemory.core.world_info.entries import Role

# The sections of SillyTavern's default Chat Completion prompt, in prompt order,
# plus the extension prompts placed around the main prompt or inside the chat.
MAIN_PROMPT = "main_prompt"
WORLD_INFO_BEFORE = "world_info_before"
PERSONA_DESCRIPTION = "persona_description"
CHAR_DESCRIPTION = "char_description"
CHAR_PERSONALITY = "char_personality"
SCENARIO = "scenario"
WORLD_INFO_AFTER = "world_info_after"
DIALOGUE_EXAMPLES = "dialogue_examples"
CHAT_HISTORY = "chat_history"
POST_HISTORY_INSTRUCTIONS = "post_history_instructions"
AUTHORS_NOTE = "authors_note"
MEMORY = "memory"
IN_CHAT_INJECTIONS = "in_chat_injections"
# Markers SillyTavern never merges into the messages around them.
NEW_CHAT = "new_chat"
NEW_EXAMPLE_CHAT = "new_example_chat"
GROUP_NUDGE = "group_nudge"


@dataclass(frozen=True)
class PromptMessage:
    role: Role
    content: str
    sections: tuple[str, ...]  # one, or several once system messages are squashed
    sources: tuple[str, ...] = ()  # finer origins: "chat", "authors_note", "memory", ...
    name: str | None = None  # example_user / example_assistant on dialogue examples
    message_id: int | None = None  # the chat message it carries
    tokens: int = 0

    @property
    def section(self) -> str:
        return self.sections[0]


def squash_system_messages(
    messages: Sequence[PromptMessage], count: Callable[[PromptMessage], int]
) -> list[PromptMessage]:
    """Merge runs of unnamed system messages, as SillyTavern's "Squash system messages".

    The new-chat, new-example-chat and group nudge markers stay apart; empty system messages
    go. A merged message is counted again with `count`.
    """
    squashed: list[PromptMessage] = []
    for message in messages:
        if message.role == "system" and not message.content:
            continue
        if _squashable(message) and squashed and _squashable(squashed[-1]):
            last = squashed[-1]
            merged = replace(
                last,
                content=f"{last.content}\n{message.content}",
                sections=tuple(dict.fromkeys((*last.sections, *message.sections))),
                sources=(*last.sources, *message.sources),
            )
            squashed[-1] = replace(merged, tokens=count(merged))
        else:
            squashed.append(message)
    return squashed


def _squashable(message: PromptMessage) -> bool:
    return (
        message.role == "system"
        and message.name is None
        and not {NEW_CHAT, NEW_EXAMPLE_CHAT, GROUP_NUDGE} & set(message.sources)
    )
