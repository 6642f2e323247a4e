"""Commands that extract memories and manage extraction: extract, batch, status, pin, log."""

from __future__ import annotations

import asyncio
import json
import signal
import time
from typing import Annotated

import typer
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
)

from charmemory.cli.application import app, state
from charmemory.errors import ConfigError
from charmemory.services.extraction import ExtractionReport, ExtractionService

CharacterArg = Annotated[str, typer.Argument(help="Character name or card file name.")]
ChatOption = Annotated[
    str | None, typer.Option("--chat", help="Chat id (file name without .jsonl); default: latest.")
]
ProviderOption = Annotated[str | None, typer.Option("--provider", "-p", help="Provider preset.")]
ModelOption = Annotated[str | None, typer.Option("--model", "-m", help="Model id.")]


def _service(provider: str | None = None, model: str | None = None) -> ExtractionService:
    return state.app({"provider": provider, "model": model}).extraction


def _parse_range(text: str) -> tuple[int, int]:
    try:
        first, last = (int(part) for part in text.split("-", 1))
    except ValueError:
        raise ConfigError(
            f"--range wants FIRST-LAST message numbers, e.g. 0-39, not {text!r}"
        ) from None
    return first, last


def _print_report(report: ExtractionReport) -> None:
    for outcome in report.chunks:
        line = f"messages {outcome.first}-{outcome.last}: "
        line += f"{len(outcome.saved)} memories saved" if outcome.saved else "nothing new"
        if outcome.dropped:
            line += f", {len(outcome.dropped)} duplicates dropped"
        typer.echo(line)
        for warning in outcome.warnings:
            typer.secho(f"  warning: {warning}", fg=typer.colors.YELLOW, err=True)
        for text in outcome.saved:
            typer.echo(f"  - {text}")
    if not report.planned_messages:
        typer.echo("no unprocessed messages")
    elif report.stopped:
        typer.echo(f"stopped; progress saved ({len(report.chunks)}/{report.planned_chunks} calls)")
    typer.echo(f"memory file: {report.memory_file}")


@app.command()
def extract(
    character: CharacterArg,
    chat: ChatOption = None,
    up_to: Annotated[
        int | None, typer.Option("--up-to", help="Extract Here: stop after this message index.")
    ] = None,
    range_: Annotated[
        str | None, typer.Option("--range", help="Re-extract messages FIRST-LAST (with --force).")
    ] = None,
    force: Annotated[bool, typer.Option(help="Allow --range over processed messages.")] = False,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Build prompts, call nothing.")
    ] = False,
    print_prompt: Annotated[bool, typer.Option("--print-prompt", help="Show the prompts.")] = False,
    provider: ProviderOption = None,
    model: ModelOption = None,
) -> None:
    """Extract memories from a chat's unprocessed messages (Extract Now / Extract Here)."""
    if range_ is not None and not force:
        raise ConfigError("--range re-extracts processed messages; add --force to confirm")
    forced = _parse_range(range_) if range_ is not None else None
    report = asyncio.run(
        _service(provider, model).extract(
            character, chat, up_to=up_to, forced_range=forced, dry_run=dry_run or print_prompt
        )
    )
    if report.chosen_because:
        typer.echo(f"chat: {report.chat} ({report.chosen_because}; --chat picks another)")
    if dry_run or print_prompt:
        typer.echo(f"{report.planned_messages} messages in {report.planned_chunks} calls")
        for number, prompt in enumerate(report.prompts, start=1):
            if print_prompt:
                for message in prompt:
                    typer.echo(f"--- call {number}, {message.role} ---\n{message.content}")
        return
    _print_report(report)


@app.command()
def batch(
    character: CharacterArg,
    chat: Annotated[
        list[str] | None, typer.Option("--chat", help="A chat to include (repeat).")
    ] = None,
    all_chats: Annotated[bool, typer.Option("--all", help="Every chat of the character.")] = False,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")] = False,
    provider: ProviderOption = None,
    model: ModelOption = None,
) -> None:
    """Extract from many chats; Ctrl-C stops after the current call with progress saved."""
    if not chat and not all_chats:
        raise ConfigError("name chats with --chat (repeatable) or pass --all")
    service = _service(provider, model)
    plan = state.app().extraction_admin.batch_plan(character, None if all_chats else chat)
    for chat_id, messages, calls in plan.chats:
        typer.echo(f"  {chat_id}: {messages} messages, {calls} calls")
    typer.echo(f"batch: {plan.messages} messages in {plan.calls} LLM calls")
    if plan.calls == 0:
        return
    if not yes and not typer.confirm("run it?", default=True):
        raise typer.Exit(1)
    asyncio.run(_run_batch(service, character, [(c, n) for c, _, n in plan.chats if n]))


async def _run_batch(
    service: ExtractionService, character: str, chats: list[tuple[str, int]]
) -> None:
    """Chat by chat, call by call, under a progress bar; Ctrl-C stops after the current call."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGINT, stop.set)
    saved = 0
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("calls"),
        TimeElapsedColumn(),
    )
    try:
        with Progress(*columns, transient=False) as bar:
            task = bar.add_task("batch", total=sum(calls for _, calls in chats))
            for chat_id, _ in chats:
                if stop.is_set():
                    break
                bar.update(task, description=chat_id[:40])

                def advance(report: ExtractionReport, done: int, total: int) -> None:
                    if done:
                        bar.advance(task)

                report = await service.extract(character, chat_id, progress=advance, stop=stop)
                saved += report.saved
                if report.stopped:
                    break
    finally:
        loop.remove_signal_handler(signal.SIGINT)
    typer.echo(f"{saved} memories saved")
    if stop.is_set():
        typer.echo("stopped; progress is saved per call, run the batch again to continue")


@app.command()
def status(character: CharacterArg, chat: ChatOption = None) -> None:
    """What a user watches: memory counts, progress to the next extraction, changed messages."""
    shown = state.app().extraction_admin.status(character, chat)
    typer.echo(f"{shown.character}: {shown.memory_file}")
    typer.echo(f"  {shown.bullets} memories in {shown.blocks} blocks")
    for row in shown.chats:
        typer.echo(f"  {row.chat}")
        if row.problem:
            typer.secho(
                f"    skipped, cannot be read: {row.problem}", err=True, fg=typer.colors.YELLOW
            )
            continue
        typer.echo(
            f"    {row.progress}  {row.readiness}  last extracted: "
            f"{row.last_extracted if row.last_extracted >= 0 else 'none'} of {row.messages}"
        )
        for change in row.changed:
            typer.secho(f"    changed: {change}", fg=typer.colors.YELLOW)


@app.command()
def pin(
    character: CharacterArg,
    text: Annotated[str, typer.Argument(help="One memory per line.")],
    chat: ChatOption = None,
) -> None:
    """Save text as memories directly (no LLM): each line becomes a bullet."""
    pinned = asyncio.run(state.app().extraction_admin.pin(character, text, chat=chat))
    count = len(pinned.memories)
    typer.echo(f"pinned {count} memor{'y' if count == 1 else 'ies'} in {pinned.file}")
    for warning in pinned.warnings:
        typer.secho(f"warning: {warning}", fg=typer.colors.YELLOW, err=True)


@app.command()
def reset(character: CharacterArg) -> None:
    """Forget extraction progress for the character's chats (memories are kept)."""
    state.app().extraction_admin.reset(character)
    typer.echo("extraction state reset; the next extraction reads every chat from the start")


@app.command()
def clear(
    character: CharacterArg,
    yes: Annotated[bool, typer.Option("--yes", help="Confirm deleting every memory.")] = False,
) -> None:
    """Delete the character's memory files and reset extraction (`undo` brings them back)."""
    removed = asyncio.run(state.app().extraction_admin.clear(character, confirmed=yes))
    typer.echo(f"removed {', '.join(removed) if removed else 'nothing (no memory file)'}")


@app.command()
def log(
    character: Annotated[str | None, typer.Option(help="Only this character.")] = None,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Show details.")] = False,
    follow: Annotated[
        bool, typer.Option("--follow", "-f", help="Keep printing new entries.")
    ] = False,
    limit: Annotated[int, typer.Option(help="How many recent entries.")] = 50,
) -> None:
    """The activity log: every step charmemory took."""
    activity = state.app().activity
    last = 0
    while True:
        for entry in activity.entries(character=character, after_id=last, limit=limit):
            where = "/".join(x for x in (entry.character, entry.chat) if x)
            typer.echo(f"{entry.at} {entry.level:<7} {entry.kind:<18} {where}  {entry.message}")
            if verbose and entry.data:
                typer.echo(
                    "    "
                    + json.dumps(entry.data, ensure_ascii=False, indent=2).replace("\n", "\n    ")
                )
            last = entry.id
        if not follow:
            return
        time.sleep(1.0)
