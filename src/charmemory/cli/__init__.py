"""The `charmemory` command: a thin shell over the services."""

from __future__ import annotations

import sys

from charmemory.cli import provider_cmds, workspace_cmds  # noqa: F401  (register commands)
from charmemory.cli.application import app, run

__all__ = ["app", "main"]


def main() -> None:
    sys.exit(run())
