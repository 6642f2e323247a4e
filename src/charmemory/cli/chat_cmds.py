"""Chatting from the command line: one turn (`say`), the interactive chat, and chat edits."""

from __future__ import annotations

import asyncio
import json
import signal
import sys
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer
from rich.console import Console

from charmemory.cli.application import app, state
from charmemory.composition import freeze_long_lived_objects
from charmemory.core.chat.commands import help_text, is_command, parse_command
from charmemory.errors import CharMemoryError

if TYPE_CHECKING:
    from charmemory.composition import App
    from charmemory.ports import StreamDelta
    from charmemory.services.chat import Kind, OnDelta, Turn


CharacterArg = Annotated[str, typer.Argument(help="Character name or card file name.")]
ChatOption = Annotated[
    str | None, typer.Option("--chat", help="Chat id (file name without .jsonl); default: latest.")
]
NewOption = Annotated[bool, typer.Option("--new", help="Start a new chat (with the greeting).")]
JsonFlag = Annotated[bool, typer.Option("--json", help="Machine-readable output.")]
T = TypeVar("T")


def turn_json(turn: Turn) -> dict[str, Any]:
    return {
        "chat": turn.chat,
        "index": turn.index,
        "reply": turn.reply,
        "memories": [
            {"id": m["id"], "text": m["text"], "score": m["score"]} for m in turn.memories
        ],
        "world_info": [
            {"book": e["book"], "uid": e["uid"], "comment": e["comment"], "why": e["why"]}
            for e in turn.world_info
        ],
        "extraction": turn.extraction,
        **({"extraction_members": turn.extraction_members} if turn.extraction_members else {}),
    }


def streamed(console: Console) -> Callable[[StreamDelta], None]:
    def show(delta: StreamDelta) -> None:
        if delta.text:
            console.print(delta.text, end="", markup=False, highlight=False, soft_wrap=True)

    return show


async def with_stop(run: Callable[[asyncio.Event], Awaitable[T]]) -> T:
    """Run one generation; Ctrl-C stops it and keeps what streamed so far."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGINT, stop.set)
    try:
        return await run(stop)
    finally:
        loop.remove_signal_handler(signal.SIGINT)


@app.command()
def say(
    character: CharacterArg,
    text: Annotated[str, typer.Argument(help="What you say (- reads standard input).")],
    chat: ChatOption = None,
    new: NewOption = False,
    as_json: JsonFlag = False,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Show the prompt that would be sent; send nothing.")
    ] = False,
) -> None:
    """One turn: send a message, print the reply (extraction may then run, as in a chat)."""
    said = sys.stdin.read() if text == "-" else text
    chats = state.app().chat
    if dry_run:
        shown = asyncio.run(chats.preview(character, said, chat, new=new))
        if as_json:
            typer.echo(json.dumps(shown, ensure_ascii=False, indent=2))
        else:
            for message in shown["messages"]:
                typer.echo(f"--- {message['role']} ---\n{message['content']}")
        return
    _print_turn(
        lambda on_delta, stop: chats.send(
            character, said, chat, new=new, on_delta=on_delta, stop=stop
        ),
        as_json,
    )


def _print_turn(
    turn_of: Callable[[OnDelta | None, asyncio.Event], Awaitable[Turn]], as_json: bool
) -> None:
    """Run one generation (streamed to the terminal unless --json) and report on it."""
    chats = state.app().chat
    console = Console()

    async def run() -> tuple[Turn, list[str]]:
        turn = await with_stop(lambda stop: turn_of(None if as_json else streamed(console), stop))
        return turn, await chats.extractions_finished()

    turn, failures = asyncio.run(run())
    if as_json:
        typer.echo(json.dumps(turn_json(turn), ensure_ascii=False, indent=2))
    else:
        typer.echo("" if turn.reply.endswith("\n") else "\n", nl=False)
        _report_extraction(turn)
    for failure in failures:
        typer.secho(f"warning: {failure}", fg=typer.colors.YELLOW, err=True)


def _report_extraction(turn: Turn) -> None:
    if turn.stopped:
        typer.secho("(stopped; what came so far is kept)", err=True)
    if turn.extraction == "started":
        typer.echo("(memories extracted from the new messages)", err=True)


def _regenerated(character: str, chat: str | None, kind: Kind, as_json: bool) -> None:
    chats = state.app().chat
    _print_turn(
        lambda on_delta, stop: chats.generate(
            character, chat, kind=kind, on_delta=on_delta, stop=stop
        ),
        as_json,
    )


@app.command()
def swipe(character: CharacterArg, chat: ChatOption = None, as_json: JsonFlag = False) -> None:
    """A new alternative of the last reply (kept as a swipe)."""
    _regenerated(character, chat, "swipe", as_json)


@app.command("continue")
def continue_(character: CharacterArg, chat: ChatOption = None, as_json: JsonFlag = False) -> None:
    """Continue the last reply."""
    _regenerated(character, chat, "continue", as_json)


@app.command()
def regenerate(character: CharacterArg, chat: ChatOption = None, as_json: JsonFlag = False) -> None:
    """Replace the last reply with a new one."""
    _regenerated(character, chat, "regenerate", as_json)


@app.command("delete-messages")
def delete_messages(
    character: CharacterArg,
    last: Annotated[int, typer.Option("--last", help="How many messages from the end.")],
    chat: ChatOption = None,
) -> None:
    """Delete the last N messages of a chat."""
    deleted = asyncio.run(state.app().chat.delete_last(character, last, chat))
    typer.echo(f"deleted {deleted} message{'s' if deleted != 1 else ''}")


@app.command()
def branch(
    character: CharacterArg,
    at: Annotated[int, typer.Option("--at", help="The last message the branch keeps.")],
    chat: ChatOption = None,
) -> None:
    """A new chat holding messages 0..AT, pointing back to this one."""
    name = asyncio.run(state.app().chat.branch(character, at, chat))
    typer.echo(f"branch: {name}")
    for source, copy in state.app().book_branching.copies(character, name):
        typer.echo(f"memory book {source} copied as {copy}")


persona_app = typer.Typer(help="Who you play in chats.", no_args_is_help=True)
app.add_typer(persona_app, name="persona")


@persona_app.command("set")
def persona_set(
    name: Annotated[str, typer.Argument(help="Your name in chats ({{user}}).")],
    description: Annotated[
        str | None, typer.Option("--description", help="Your persona's description.")
    ] = None,
) -> None:
    """Set the persona's name (and description)."""
    settings = state.app().settings
    settings.set("persona.name", name)
    if description is not None:
        settings.set("persona.description", description)
    typer.echo(f"persona: {name}")


# -- the interactive chat -----------------------------------------------------------------


@app.command("chat")
def chat_command(character: CharacterArg, chat: ChatOption = None, new: NewOption = False) -> None:
    """Chat with a character in the terminal; /help lists the commands, Ctrl-D leaves."""
    app_ = state.app()
    ref = app_.chat.chat_ref(character, chat, new=new)
    freeze_long_lived_objects()
    app_.freeze_after_first_reply()  # what the first reply loads stays too
    asyncio.run(_session(app_, ref.character.name, ref.id, Console()))


async def _session(app_: App, character: str, chat_id: str, console: Console) -> None:
    chats = app_.chat
    loaded = chats.open_chat(character, chat_id)
    for message in loaded.chat.messages[-6:]:
        if not message.is_hidden:
            console.print(f"[bold]{message.name}[/bold]: ", end="")
            console.print(message.mes, markup=False, highlight=False)
    console.print(f"[dim]{chats.status_line(character, chat_id)} · /help for commands[/dim]")
    while True:
        try:
            text = await asyncio.to_thread(console.input, "[bold]> [/bold]")
        except EOFError:
            console.print()
            await chats.extractions_finished()
            return
        if not text.strip():
            continue
        try:
            await _said(app_, character, chat_id, text, console)
        except CharMemoryError as error:
            console.print(f"[red]error:[/red] {error}", highlight=False)
        for failure in chats.extraction_failures():
            console.print(f"[yellow]warning:[/yellow] {failure}", highlight=False)
        console.print(f"[dim]{chats.status_line(character, chat_id)}[/dim]")


async def _said(app_: App, character: str, chat_id: str, text: str, console: Console) -> None:
    """A message or a command typed in the chat."""
    chats = app_.chat
    if not is_command(text):
        await _reply(
            console,
            character,
            lambda stop: chats.send(
                character, text, chat_id, on_delta=streamed(console), stop=stop
            ),
        )
        return
    if text.strip().lower() == "/help":
        console.print(help_text(), markup=False, highlight=False)
        return
    command = parse_command(text)
    if command.name == "continue":
        await _reply(
            console,
            character,
            lambda stop: app_.chat_commands.continue_reply(
                character, chat_id, on_delta=streamed(console), stop=stop
            ),
        )
        return
    console.print(await app_.chat_commands.run(character, chat_id, command), highlight=False)


async def _reply(
    console: Console, character: str, run: Callable[[asyncio.Event], Awaitable[Turn]]
) -> None:
    console.print(f"[bold]{character}[/bold]: ", end="")
    turn = await with_stop(run)
    console.print()
    if turn.stopped:
        console.print("[dim](stopped; what came so far is kept)[/dim]")
