"""Commands that set up a workspace and show what is in it."""

from __future__ import annotations

import typer

from charmemory.adapters.workspace import Workspace
from charmemory.cli.application import app, state


@app.command()
def init() -> None:
    """Create a workspace (or complete one); existing files are left alone."""
    ws = Workspace.create(state.workspace_dir)
    typer.echo(f"workspace ready at {ws.root}")
