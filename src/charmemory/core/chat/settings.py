"""Settings of the chat engine and of the persona the user plays."""

from __future__ import annotations

from charmemory.core.settings.spec import Setting

_WORKSPACE = frozenset({"workspace"})

SETTINGS: tuple[Setting, ...] = (
    Setting(
        "chat.diagnostics_kept",
        "int",
        50,
        "Generations kept per chat for diagnose",
        low=1,
        high=10000,
    ),
    Setting("persona.name", "text", "User", "Your name in chats ({{user}})", scopes=_WORKSPACE),
    Setting(
        "persona.description",
        "text",
        "",
        "Your persona's description, given to the character",
        scopes=_WORKSPACE,
    ),
    Setting(
        "persona.lorebook",
        "text",
        None,
        "A lorebook that follows your persona into every chat",
        blank_is_unset=True,
        scopes=_WORKSPACE,
    ),
)
