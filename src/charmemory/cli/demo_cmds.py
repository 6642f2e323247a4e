"""`charmemory demo`: a workspace built from the bundled sample, shown end to end."""

from __future__ import annotations

import tempfile
from importlib import resources
from pathlib import Path

import typer

from charmemory.adapters.library import Library
from charmemory.adapters.workspace import Workspace
from charmemory.cli.application import app, state


@app.command()
def demo() -> None:
    """Build a demo workspace from the bundled sample character and chat, and show it."""
    ws = Workspace.create(state.workspace_dir)
    typer.echo(f"==> demo workspace at {ws.root}")
    library = Library(ws)
    sample = resources.files("charmemory") / "data" / "demo"
    with tempfile.TemporaryDirectory() as tmp:
        files = []
        for item in sorted(sample.iterdir(), key=lambda i: not i.name.endswith(".json")):
            if item.name.endswith((".json", ".jsonl")):
                path = Path(tmp) / item.name
                path.write_bytes(item.read_bytes())
                files.append(path)
        for path in files:
            done = library.import_file(path)
            typer.echo(f"    {'kept' if done.unchanged else 'added'} {done.kind}: {path.name}")
    for character in library.characters():
        typer.echo(f"\n==> {character.name}")
        baseline = character.card.description.strip().splitlines()[0]
        typer.echo(f"    card: {baseline[:160]}")
        for ref in library.chats(character):
            chat = library.load_chat(ref).chat
            shown = [m for m in chat.messages if not m.is_hidden]
            typer.echo(f"    chat {ref.id}: {len(shown)} messages")
            for message in shown[:3]:
                typer.echo(f"      {message.name}: {message.active_text[:100]}")
            typer.echo("      ...")
