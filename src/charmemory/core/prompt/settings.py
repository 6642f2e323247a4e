"""The prompt's settings: SillyTavern's default Chat Completion preset, and the context size.

The prompt texts and formats are SillyTavern's defaults (public/scripts/openai.js).
The context size defaults to the embedded model's context window; the response
length to SillyTavern's default. The per-message token overheads are OpenAI's
chat format (3 tokens a message, 1 more for a name, 3 to prime the reply),
which SillyTavern's Chat Completion counting also uses.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from charmemory.core.prompt.authors_note import AuthorsNote
from charmemory.core.settings.spec import Kind, Setting

DEFAULT_MAIN_PROMPT = (
    "Write {{char}}'s next reply in a fictional chat between {{charIfNotGroup}} and {{user}}."
)
# How a chat message names its speaker: never, SillyTavern's default (only a
# message sent as someone else than the user or the character), or always.
NamesBehavior = Literal["none", "default", "content"]


@dataclass(frozen=True)
class PromptSettings:
    context_size: int = 8192  # tokens the model reads, response included
    response_length: int = 300  # tokens reserved for the answer
    main_prompt: str = DEFAULT_MAIN_PROMPT
    post_history_instructions: str = ""
    forbid_card_overrides: bool = False  # ignore the card's system prompt and post-history text
    squash_system_messages: bool = False  # merge consecutive unnamed system messages
    world_info_format: str = "{0}"  # wraps each World Info section; {0} is the text
    personality_format: str = "[{{char}}'s personality: {{personality}}]"
    scenario_format: str = "[Circumstances and context of the dialogue: {{scenario}}]"
    new_chat_prompt: str = "[Start a new Chat]"
    new_group_chat_prompt: str = "[Start a new group chat. Group members: {{group}}]"
    group_nudge_prompt: str = "[Write the next reply only as {{char}}.]"
    new_example_chat_prompt: str = "[Example Chat]"
    names_behavior: NamesBehavior = "default"
    pin_examples: bool = False  # keep the dialogue examples even when chat history must go
    tokens_per_message: int = 3
    tokens_per_name: int = 1
    reply_priming_tokens: int = 3
    # The Author's Note where the chat's metadata says nothing.
    authors_note: AuthorsNote = field(default_factory=AuthorsNote)

    @property
    def prompt_budget(self) -> int:
        """The tokens the prompt may use: the context less the response."""
        return self.context_size - self.response_length


DEFAULT_PROMPT_SETTINGS = PromptSettings()


def _setting(name: str, kind: Kind, help: str, **rules: Any) -> Setting:
    default = getattr(DEFAULT_PROMPT_SETTINGS, name)
    return Setting(f"prompt.{name}", kind, default, help, **rules)


SETTINGS: tuple[Setting, ...] = (
    _setting("main_prompt", "text", "The main prompt (the card's system prompt replaces it)"),
    _setting("post_history_instructions", "text", "Instructions after the chat history"),
    _setting("forbid_card_overrides", "bool", "Ignore the card's system prompt and instructions"),
    _setting("squash_system_messages", "bool", "Merge consecutive system messages"),
    _setting(
        "names_behavior",
        "choice",
        "How messages name their speaker",
        choices=("none", "default", "content"),
    ),
    _setting("pin_examples", "bool", "Keep dialogue examples when the history must shrink"),
)


def prompt_settings(
    values: Mapping[str, Any], *, context_size: int, response_length: int
) -> PromptSettings:
    """The settings from values by full name (`prompt.main_prompt`), for a model's context."""
    chosen = {s.short: values[s.name] for s in SETTINGS if values.get(s.name) is not None}
    return replace(
        DEFAULT_PROMPT_SETTINGS,
        context_size=context_size,
        response_length=response_length,
        **chosen,
    )
