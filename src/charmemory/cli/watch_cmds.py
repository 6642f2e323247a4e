"""`charmemory watch`: automatic extraction for chats that other programs write."""

from __future__ import annotations

import asyncio
import signal
from datetime import datetime
from typing import TYPE_CHECKING, Annotated

import typer

from charmemory.cli.application import app, state
from charmemory.cli.extraction_cmds import ModelOption, ProviderOption
from charmemory.services.chat_watch import DEFAULT_INTERVAL_SECONDS

if TYPE_CHECKING:
    from charmemory.services.chat_watch import ChatWatcher, Triggered


@app.command()
def watch(
    character: Annotated[
        str | None, typer.Argument(help="Only this character's chats (default: every chat).")
    ] = None,
    interval: Annotated[
        float, typer.Option(help="Seconds between looks at the chat files.", min=0.1)
    ] = DEFAULT_INTERVAL_SECONDS,
    provider: ProviderOption = None,
    model: ModelOption = None,
) -> None:
    """Follow the workspace's chats; when one grows, run the automatic trigger for it.

    Interval and cooldown apply as in a chat; each extraction prints one line.
    Ctrl-C stops (after the current call).
    """
    watcher = state.app({"provider": provider, "model": model}).chat_watcher
    asyncio.run(_watch(watcher, character, interval))


async def _watch(watcher: ChatWatcher, character: str | None, interval: float) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    try:
        seen = watcher.stamps(character)
        watched = len(watcher.characters(character))
        typer.echo(
            f"watching {len(seen)} chats of {watched} character{'s' * (watched != 1)} "
            f"every {interval:g} s; Ctrl-C stops"
        )
        await watcher.run(
            character, interval=interval, stop=stop, on_trigger=_print_triggered, seen=seen
        )
    finally:
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(signum)
    typer.echo("stopped")


def _print_triggered(triggered: Triggered) -> None:
    """One line per extraction (or failure); a chat the trigger skips prints nothing."""
    now = datetime.now().strftime("%H:%M:%S")
    where = f"{triggered.character} / {triggered.chat}"
    if triggered.error:
        typer.secho(f"{now} {where}: failed: {triggered.error}", fg=typer.colors.RED, err=True)
        return
    report = triggered.report
    if report is None or not triggered.extracted:
        return
    line = f"{now} {where}: {report.saved} memories saved"
    if report.chunks:
        line += f" from messages {report.chunks[0].first}-{report.chunks[-1].last}"
    left_out = sum(len(chunk.left_out) for chunk in report.chunks)
    if left_out:
        line += f", {left_out} left out (see `charmemory log --verbose`)"
    typer.echo(line + ("; stopped" if report.stopped else ""))
