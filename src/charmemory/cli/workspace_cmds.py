"""Commands that set up a workspace and show what is in it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from charmemory.cli.application import app, state
from charmemory.formats.group import looks_like_group

memories_app = typer.Typer(help="Browse a character's memories.", no_args_is_help=True)
app.add_typer(memories_app, name="memories")


@app.command()
def init() -> None:
    """Create a workspace (or complete one); existing files are left alone."""
    typer.echo(f"workspace ready at {state.created_app().root}")


@app.command("import")
def import_files(
    files: Annotated[
        list[Path],
        typer.Argument(
            help="Cards (.png/.json), chats (.jsonl), lorebooks (.json), memory files (.md), "
            "groups (groups/<id>.json) and group chats."
        ),
    ],
    character: Annotated[
        str | None, typer.Option(help="Whose chat this is, when the file does not say.")
    ] = None,
    group: Annotated[
        str | None,
        typer.Option(help="The group a group chat belongs to, when no group lists it."),
    ] = None,
) -> None:
    """Copy SillyTavern files into the workspace, each into its place."""
    app_ = state.app()
    # Cards first, then groups, so the chats that follow find their characters and groups.
    ordered = sorted(files, key=_import_rank)
    for path in ordered:
        done = app_.library.import_file(path, character=character, group=group)
        where = done.target.relative_to(app_.root)
        note = "already there" if done.unchanged else "imported"
        typer.echo(
            f"{note}: {done.kind} {path.name} -> {where}" + (f" ({done.note})" if done.note else "")
        )


def _import_rank(path: Path) -> int:
    """0 for cards, 1 for groups, 2 for the rest (chats, lorebooks, memory files)."""
    suffix = path.suffix.lower()
    if suffix == ".png":
        return 0
    if suffix != ".json":
        return 2
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, TypeError):
        return 2
    if not isinstance(document, dict) or "entries" in document:
        return 2
    return 1 if looks_like_group(document) else 0


@app.command()
def characters() -> None:
    """List the characters in the workspace."""
    library = state.app().library
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
    library = state.app().library
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
    listing = state.app().memories.list(character, chat=chat)
    if as_json:
        typer.echo(
            json.dumps(
                {
                    "file": listing.file,
                    "exists": listing.exists,
                    "chat": listing.chat,
                    "blocks": [
                        {
                            "chat": block.chat,
                            "date": block.date,
                            "memories": [{"id": m.id, "text": m.text} for m in block.memories],
                            "notes": list(block.notes),
                        }
                        for block in listing.blocks
                    ],
                },
                ensure_ascii=False,
                indent=2,
            )
        )
        return
    if listing.chosen_because:
        typer.echo(f"chat: {listing.chat} ({listing.chosen_because}; --chat picks another)")
    if not listing.exists:
        typer.echo(f"{listing.character} has no memories yet ({listing.file})")
        return
    typer.echo(f"{listing.file}: {listing.count} memories in {len(listing.blocks)} blocks")
    for warning in listing.warnings:
        typer.secho(f"warning: {warning}", fg=typer.colors.YELLOW, err=True)
    lines = []
    for block in listing.blocks:
        lines.append(f"\n[{block.chat or '?'}]  {block.date or ''}")
        lines.extend(f"  {memory.id}  - {memory.text}" for memory in block.memories)
        lines.extend(f"  {'(note)':<12}  {note}" for note in block.notes)
    typer.echo("\n".join(lines))
