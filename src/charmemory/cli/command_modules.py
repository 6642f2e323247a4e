"""Which module of the command line registers which command.

Every command is a new process, and what it imports is part of its time: importing
every command's module (and the services each one names) made each command pay for
all of them. `load_commands` imports only the modules of the command named, and all
of them when the command line names none it knows (help, a typo: typer then lists or
suggests every command). tests/cli/test_command_modules.py checks the table is whole.
"""

from __future__ import annotations

import importlib

# module (in charmemory.cli) -> the top-level commands and groups it registers
COMMANDS: dict[str, tuple[str, ...]] = {
    "book_cmds": ("books",),
    "chat_cmds": (
        "branch",
        "chat",
        "continue",
        "delete-messages",
        "persona",
        "regenerate",
        "say",
        "swipe",
    ),
    "demo_cmds": ("demo",),
    "diagnose_cmds": ("diagnose",),
    "extraction_cmds": ("batch", "clear", "extract", "log", "pin", "reset", "status"),
    "group_cmds": ("group",),
    "memory_cmds": ("consolidate", "diff", "history", "memories", "undo"),
    "model_cmds": ("local-models",),
    "narrator_cmds": ("cast", "doctor", "narrator"),
    "profile_cmds": ("profiles",),
    "prompt_cmds": ("prompt",),
    "provider_cmds": ("models", "providers", "secrets", "test-model"),
    "retrieval_cmds": ("index", "inject", "revectorize", "search"),
    "scene_cmds": ("scene",),
    "serve_cmds": ("serve",),
    "settings_cmds": ("settings",),
    "watch_cmds": ("watch",),
    "workspace_cmds": ("characters", "chats", "import", "init", "memories", "repair"),
}


def modules_of(command: str | None) -> list[str]:
    """The modules that register ``command``; every module for None or an unknown name."""
    modules = [module for module, names in COMMANDS.items() if command in names]
    return modules or list(COMMANDS)


def load_commands(command: str | None) -> None:
    """Register ``command`` (see `modules_of`) with the application."""
    for module in modules_of(command):
        importlib.import_module(f"{__package__}.{module}")
