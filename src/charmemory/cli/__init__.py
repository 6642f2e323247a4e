"""The `charmemory` command: a thin shell over the services."""

from __future__ import annotations

import sys

from charmemory.cli import (  # noqa: F401  (modules register their commands)
    book_cmds,
    chat_cmds,
    demo_cmds,
    diagnose_cmds,
    extraction_cmds,
    group_cmds,
    memory_cmds,
    model_cmds,
    profile_cmds,
    prompt_cmds,
    provider_cmds,
    retrieval_cmds,
    scene_cmds,
    serve_cmds,
    settings_cmds,
    watch_cmds,
    workspace_cmds,
)
from charmemory.cli.application import app, run

__all__ = ["app", "main"]


def main() -> None:
    sys.exit(run())
