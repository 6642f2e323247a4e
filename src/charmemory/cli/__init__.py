"""The `charmemory` command: a thin shell over the services.

A command's module is imported when that command runs (`cli/command_modules.py`).
"""

from __future__ import annotations

import sys

from charmemory.cli.application import app, run

__all__ = ["app", "main", "run"]


def main() -> None:
    sys.exit(run())
