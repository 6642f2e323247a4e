"""`charmemory narrator`, `charmemory cast` and `charmemory doctor`: narrator mode in a chat."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from charmemory.cli.application import app, state
from charmemory.core.narrator.cast import CastMember
from charmemory.services.narrator import NarratorState

narrator_app = typer.Typer(
    help="Narrator mode: one card voicing a declared cast, each member with a memory book.",
    no_args_is_help=True,
)
cast_app = typer.Typer(help="The cast of a narrator chat.", no_args_is_help=True)
app.add_typer(narrator_app, name="narrator")
app.add_typer(cast_app, name="cast")

CharacterArg = Annotated[str, typer.Argument(help="The narrator card's character name.")]
NameArg = Annotated[str, typer.Argument(help="The cast member's name.")]
ChatOption = Annotated[
    str | None, typer.Option("--chat", help="Chat id (file name without .jsonl); default: latest.")
]


def status_lines(found: NarratorState) -> list[str]:
    config = found.config
    lines = [f"chat: {found.ref.id}"]
    if found.active:
        lines.append("narrator mode: active")
    else:
        lines.append("narrator mode: not active (" + "; ".join(found.activation.reasons) + ")")
    lines.append(f"omniscient book: {found.omniscient or 'none'}")
    active = set(config.active_ids)
    members = [_member_line(m, m.id in active) for m in config.members]
    lines.append("cast: " + (", ".join(members) if members else "nobody yet"))
    lines += [f"dropped while reading the cast: {line}" for line in found.dropped]
    return lines


def _member_line(member: CastMember, active: bool) -> str:
    marks = [mark for mark, on in (("active", active), ("retired", member.retired)) if on]
    return f"{member.name} [{member.book}]" + (f" ({', '.join(marks)})" if marks else "")


@narrator_app.command("enable")
def narrator_enable(
    character: CharacterArg,
    chat: ChatOption = None,
    omniscient: Annotated[
        str | None,
        typer.Option(
            "--omniscient",
            help="The omniscient memory book: chosen as the chat's manual book, manual mode on.",
        ),
    ] = None,
) -> None:
    """Turn narrator mode on for a chat."""
    for line in status_lines(state.app().narrator.enable(character, chat, omniscient=omniscient)):
        typer.echo(line)


@narrator_app.command("disable")
def narrator_disable(character: CharacterArg, chat: ChatOption = None) -> None:
    """Turn narrator mode off for a chat (its cast is kept)."""
    for line in status_lines(state.app().narrator.disable(character, chat)):
        typer.echo(line)


@narrator_app.command("status")
def narrator_status(character: CharacterArg, chat: ChatOption = None) -> None:
    """Whether narrator mode is active in a chat (and why not), its book and its cast."""
    for line in status_lines(state.app().narrator.state(character, chat)):
        typer.echo(line)


@cast_app.command("add")
def cast_add(
    character: CharacterArg,
    name: NameArg,
    book: Annotated[str, typer.Option("--book", help="The member's own memory book.")],
    chat: ChatOption = None,
) -> None:
    """Declare a cast member, with a memory book of their own."""
    member = state.app().narrator.add(character, name, book, chat)
    typer.echo(f"{member.name} joined the cast with the memory book {member.book} ({member.id})")


@cast_app.command("retire")
def cast_retire(character: CharacterArg, name: NameArg, chat: ChatOption = None) -> None:
    """Take a member out of the cast; their id and book stay theirs (restore brings them back)."""
    member = state.app().narrator.retire(character, name, chat)
    typer.echo(f"{member.name} is retired (their book {member.book} stays theirs)")


@cast_app.command("restore")
def cast_restore(character: CharacterArg, name: NameArg, chat: ChatOption = None) -> None:
    """Bring a retired member back into the cast."""
    member = state.app().narrator.restore(character, name, chat)
    typer.echo(f"{member.name} is back in the cast")


@cast_app.command("list")
def cast_list(
    character: CharacterArg,
    chat: ChatOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
) -> None:
    """The cast: each member's id, name, book, and whether retired or active."""
    config = state.app().narrator.state(character, chat).config
    active = set(config.active_ids)
    if as_json:
        rows = [
            {
                "id": m.id,
                "name": m.name,
                "book": m.book,
                "retired": m.retired,
                "active": m.id in active,
            }
            for m in config.members
        ]
        typer.echo(json.dumps(rows, ensure_ascii=False, indent=2))
        return
    if not config.members:
        typer.echo("nobody in the cast yet (charmemory cast add CHARACTER NAME --book BOOK)")
    for member in config.members:
        typer.echo(f"{_member_line(member, member.id in active)}  {member.id}")


@cast_app.command("active")
def cast_active(
    character: CharacterArg,
    names: Annotated[
        list[str] | None, typer.Argument(help="Who is active from now on.", show_default=False)
    ] = None,
    none: Annotated[bool, typer.Option("--none", help="Nobody is active.")] = False,
    chat: ChatOption = None,
) -> None:
    """Show the active cast, or choose it for the next generations (--none: nobody)."""
    narrator = state.app().narrator
    if names and none:
        raise typer.BadParameter("give names or --none, not both")
    if names or none:
        members = narrator.set_active(character, names or [], chat)
    else:
        members = narrator.state(character, chat).config.active_members
    typer.echo("active cast: " + (", ".join(m.name for m in members) or "nobody"))


@app.command()
def doctor(
    character: CharacterArg,
    chat: ChatOption = None,
    member: Annotated[
        str | None, typer.Option("--member", help="Explain this member's book (with --message).")
    ] = None,
    message: Annotated[
        int | None, typer.Option("--message", help="The reply whose generation to explain.")
    ] = None,
) -> None:
    """Check a narrator chat; with --member and --message, explain why that member's book
    was or was not in the generation of that message."""
    if (member is None) != (message is None):
        raise typer.BadParameter("--member and --message go together")
    application = state.app()
    if member is not None and message is not None:
        for line in application.narrator_doctor.explain(character, member, message, chat):
            typer.echo(line)
        return
    checkup = application.narrator_doctor.check(character, chat)
    typer.echo(f"chat: {checkup.ref.id}")
    for finding in checkup.findings:
        typer.echo(str(finding))
    if not checkup.healthy:
        raise typer.Exit(1)
