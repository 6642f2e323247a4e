"""Commands that set up a workspace and show what is in it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from charmemory.adapters.library import Library
from charmemory.adapters.memory_files import MemoryFiles
from charmemory.adapters.workspace import Workspace
from charmemory.cli.application import app, state
from charmemory.formats.memory_file import list_bullets, stray_tag_warning

memories_app = typer.Typer(help="Browse a character's memories.", no_args_is_help=True)
app.add_typer(memories_app, name="memories")


@app.command()
def init() -> None:
    """Create a workspace (or complete one); existing files are left alone."""
    ws = Workspace.create(state.workspace_dir)
    typer.echo(f"workspace ready at {ws.root}")


@app.command("import")
def import_files(
    files: Annotated[
        list[Path],
        typer.Argument(
            help="Cards (.png/.json), chats (.jsonl), lorebooks (.json), memory files (.md)."
        ),
    ],
    character: Annotated[
        str | None, typer.Option(help="Whose chat this is, when the file does not say.")
    ] = None,
) -> None:
    """Copy SillyTavern files into the workspace, each into its place."""
    library = Library(state.workspace())
    # Cards first, so chats that follow on the same command line find their character.
    ordered = sorted(files, key=lambda p: p.suffix.lower() != ".png" and not _is_card_json(p))
    for path in ordered:
        done = library.import_file(path, character=character)
        where = done.target.relative_to(state.workspace().root)
        note = "already there" if done.unchanged else "imported"
        typer.echo(f"{note}: {done.kind} {path.name} -> {where}")


def _is_card_json(path: Path) -> bool:
    if path.suffix.lower() != ".json":
        return False
    try:
        return "entries" not in json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, TypeError):
        return False


@app.command()
def characters() -> None:
    """List the characters in the workspace."""
    library = Library(state.workspace())
    found = library.characters()
    for character in found:
        chats = len(library.chats(character))
        typer.echo(
            f"{character.name}\t{chats} chat{'s' if chats != 1 else ''}\t{character.card_path.name}"
        )
    for path, problem in library.unreadable_cards():
        typer.secho(f"skipped {path.name}: {problem}", err=True, fg=typer.colors.YELLOW)
    if not found:
        typer.echo("no characters yet; add one with `charmemory import CARD.png`")


@app.command()
def chats(
    character: Annotated[str, typer.Argument(help="Character name or card file name.")],
) -> None:
    """List a character's chats, oldest first."""
    library = Library(state.workspace())
    who = library.character(character)
    refs = library.chats(who)
    for ref in refs:
        loaded = library.load_chat(ref)
        typer.echo(f"{ref.id}\t{len(loaded.chat.messages)} messages")
    if not refs:
        typer.echo(f"{who.name} has no chats yet")


@memories_app.command("show")
def memories_show(
    character: Annotated[str, typer.Argument(help="Character name or card file name.")],
    chat: Annotated[
        str | None, typer.Option(help="The chat, for characters with per-chat memory files.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
) -> None:
    """Show a character's memories, block by block."""
    ws = state.workspace()
    who = Library(ws).character(character)
    files = MemoryFiles(ws)
    loaded = files.load(files.path_for(who.name, chat_id=chat))
    bullets = list_bullets(loaded.file)
    if as_json:
        typer.echo(
            json.dumps(
                {
                    "file": files.relative(loaded.path),
                    "exists": loaded.exists,
                    "blocks": [
                        {
                            "chat": block.chat,
                            "date": block.date,
                            "memories": [
                                {"id": ref.memory_id, "text": ref.text}
                                for ref in bullets
                                if ref.address.block == index
                            ],
                        }
                        for index, block in enumerate(loaded.file.blocks)
                    ],
                },
                ensure_ascii=False,
                indent=2,
            )
        )
        return
    if not loaded.exists:
        typer.echo(f"{who.name} has no memories yet ({files.relative(loaded.path)})")
        return
    typer.echo(
        f"{files.relative(loaded.path)}: {loaded.file.bullet_count} memories in "
        f"{loaded.file.block_count} blocks"
    )
    if warning := stray_tag_warning(loaded.file):
        typer.secho(f"warning: {warning}", fg=typer.colors.YELLOW, err=True)
    for index, block in enumerate(loaded.file.blocks):
        typer.echo(f"\n[{block.chat or '?'}]  {block.date or ''}")
        for ref in bullets:
            if ref.address.block == index:
                typer.echo(f"  {ref.memory_id}  - {ref.text}")
