"""The prompt a character answers from, assembled as SillyTavern's default Chat Completion preset.

`build_prompt(PromptRequest(card, chat, persona, memory=injection), candidates, rng=..., now=...)`
activates World Info and assembles the messages: `.prompt.messages` gives each one's role,
content, sections and tokens, `.metadata_updates` what to store in the chat's metadata.
"""

from charmemory.core.prompt.assembly import (
    LAST_IN_CONTEXT_KEY,
    AssembledPrompt,
    GenerationPrompt,
    assemble_prompt,
    build_prompt,
)
from charmemory.core.prompt.authors_note import AuthorsNote, authors_note_from_metadata
from charmemory.core.prompt.macros import MacroContext
from charmemory.core.prompt.messages import PromptMessage
from charmemory.core.prompt.request import (
    DepthPrompt,
    Persona,
    PromptRequest,
    macro_context,
    scan_context,
)
from charmemory.core.prompt.settings import (
    DEFAULT_MAIN_PROMPT,
    DEFAULT_PROMPT_SETTINGS,
    PromptSettings,
)

__all__ = [
    "DEFAULT_MAIN_PROMPT",
    "DEFAULT_PROMPT_SETTINGS",
    "LAST_IN_CONTEXT_KEY",
    "AssembledPrompt",
    "AuthorsNote",
    "DepthPrompt",
    "GenerationPrompt",
    "MacroContext",
    "Persona",
    "PromptMessage",
    "PromptRequest",
    "PromptSettings",
    "assemble_prompt",
    "authors_note_from_metadata",
    "build_prompt",
    "macro_context",
    "scan_context",
]
