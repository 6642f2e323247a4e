"""The prompt's settings: SillyTavern's default Chat Completion preset, and the context size.

The prompt texts and formats are SillyTavern's defaults (public/scripts/openai.js).
The context size defaults to the embedded model's context window; the response
length to SillyTavern's default. The per-message token overheads are OpenAI's
chat format (3 tokens a message, 1 more for a name, 3 to prime the reply),
which SillyTavern's Chat Completion counting also uses.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from charmemory.core.prompt.authors_note import AuthorsNote

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
