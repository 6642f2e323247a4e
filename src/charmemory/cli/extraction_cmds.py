"""Commands that extract memories and manage extraction: extract, batch, status, pin, log."""

from __future__ import annotations

import asyncio
import json
import shlex
import signal
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from itertools import accumulate
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn
from rich.progress import Progress as RichProgress

from charmemory.cli.application import app, state
from charmemory.core.extraction_answer import OVER_CAP, SPEECH, TRUNCATED
from charmemory.core.triggers import why_not
from charmemory.errors import ConfigError, NotFoundError
from charmemory.services.extraction_report import no_progress

if TYPE_CHECKING:
    from charmemory.services.extraction import ExtractionService
    from charmemory.services.extraction_admin import BatchOutcome, ExtractionAdmin
    from charmemory.services.extraction_report import ChunkOutcome, ExtractionReport, Progress


PROGRESS_COLUMNS = (
    TextColumn("{task.description}"),
    BarColumn(),
    MofNCompleteColumn(),
    TextColumn("calls"),
    TimeElapsedColumn(),
)

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
        if outcome.left_out:
            _print_left_out(report, outcome)
    if not report.planned_messages:
        who = shlex.quote(report.character)
        typer.echo(
            "no unprocessed messages; to read messages again: "
            f"`charmemory extract {who} --range FIRST-LAST --force`, or "
            f"`charmemory reset {who}` to start every chat over (memories are kept)"
        )
    elif report.stopped:
        typer.echo(f"stopped; progress saved ({len(report.chunks)}/{report.planned_chunks} calls)")
    typer.echo(f"memory file: {report.memory_file}")


LEFT_OUT_BECAUSE = {
    OVER_CAP: "over the bullet cap, extraction.max_bullets",
    SPEECH: 'speaks to someone ("you") instead of stating a fact',
    TRUNCATED: "cut off by the length limit, extraction.max_response_tokens",
}


def _print_left_out(report: ExtractionReport, outcome: ChunkOutcome) -> None:
    """Bullets the model wrote that were not saved, and how to have those messages read again."""
    typer.secho(
        f"  left out {len(outcome.left_out)} (also in `charmemory log --verbose`):",
        fg=typer.colors.YELLOW,
    )
    for item in outcome.left_out:
        typer.echo(f"  x {item.text}  [{LEFT_OUT_BECAUSE.get(item.reason, item.reason)}]")
    span = f"{outcome.first}-{outcome.last}"
    again = shlex.join(
        ["charmemory", "extract", report.character, "--chat", report.chat, "--range", span]
    )
    again += " --force"
    typer.echo(f"  these messages count as extracted; to extract them again: {again}")


@app.command()
def extract(
    character: CharacterArg,
    chat: ChatOption = None,
    up_to: Annotated[
        int | None, typer.Option("--up-to", help="Extract Here: stop after this message index.")
    ] = None,
    range_: Annotated[
        str | None,
        typer.Option("--range", help="Messages FIRST-LAST (processed ones need --force)."),
    ] = None,
    force: Annotated[bool, typer.Option(help="Allow --range over processed messages.")] = False,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Build prompts, call nothing.")
    ] = False,
    print_prompt: Annotated[bool, typer.Option("--print-prompt", help="Show the prompts.")] = False,
    auto: Annotated[
        bool,
        typer.Option(
            "--auto",
            help="Only what the automatic trigger would do now (interval and cooldown apply).",
        ),
    ] = False,
    provider: ProviderOption = None,
    model: ModelOption = None,
) -> None:
    """Extract memories from a chat's unprocessed messages (Extract Now / Extract Here).

    With --auto it runs only when the automatic trigger would fire now, so it can
    run from cron or a hook; otherwise it says why not (exit code 0).
    """
    if auto:
        if up_to is not None or range_ is not None or dry_run or print_prompt:
            raise ConfigError("--auto does what the automatic trigger does; it takes no other mode")
        _extract_auto(character, chat, provider, model)
        return
    forced = _parse_range(range_) if range_ is not None else None
    dry = dry_run or print_prompt
    with call_progress("building prompts" if dry else "extracting") as advance:
        report = asyncio.run(
            _service(provider, model).extract(
                character,
                chat,
                up_to=up_to,
                forced_range=forced,
                force=force,
                dry_run=dry,
                progress=advance,
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


@contextmanager
def call_progress(label: str, console: Console | None = None) -> Iterator[Progress]:
    """A bar of the run's calls (prompts, in a dry run) on standard error, gone when done.

    A long chat is thousands of calls: without it a run says nothing for minutes.
    """
    console = console or Console(stderr=True)
    if not console.is_terminal:  # a log file or a pipe gets no bar
        yield no_progress
        return
    bar = RichProgress(*PROGRESS_COLUMNS, console=console, transient=True)
    task = bar.add_task(label, total=None)

    def advance(report: ExtractionReport, done: int, total: int) -> None:
        bar.update(task, total=total, completed=done, refresh=True)

    with bar:
        yield advance


def _extract_auto(
    character: str, chat: str | None, provider: str | None, model: str | None
) -> None:
    report = asyncio.run(_service(provider, model).on_character_message(character, chat))
    if report.chosen_because:
        typer.echo(f"chat: {report.chat} ({report.chosen_because}; --chat picks another)")
    assert report.decision is not None
    if not report.decision.run:
        typer.echo(f"skipped: {why_not(report.decision)}")
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
    """Extract from many chats; Ctrl-C stops after the current call with progress saved.

    A chat whose extraction fails is named at the end (its messages stay
    unprocessed) and the others go on; the exit code is then 1.
    """
    if not chat and not all_chats:
        raise ConfigError("name chats with --chat (repeatable) or pass --all")
    admin = state.app({"provider": provider, "model": model}).extraction_admin
    plan = admin.batch_plan(character, None if all_chats else chat)
    for chat_id, messages, calls in plan.chats:
        typer.echo(f"  {chat_id}: {messages} messages, {calls} calls")
    typer.echo(f"batch: {plan.messages} messages in {plan.calls} LLM calls")
    if plan.calls == 0:
        return
    if not yes and not typer.confirm("run it?", default=True):
        raise typer.Exit(1)
    outcome = asyncio.run(_run_batch(admin, character, [(c, n) for c, _, n in plan.chats if n]))
    for report in outcome.reports:
        for chunk in report.chunks:
            if chunk.left_out:
                typer.echo(f"{report.chat}, messages {chunk.first}-{chunk.last}:")
                _print_left_out(report, chunk)
    typer.echo(f"{outcome.saved} memories saved")
    if outcome.stopped:
        typer.echo("stopped; progress is saved per call, run the batch again to continue")
    if outcome.failed:
        typer.secho(
            f"{len(outcome.failed)} of the chats failed (their messages stay unprocessed; "
            "run the batch again to retry them):",
            fg=typer.colors.RED,
            err=True,
        )
        for failure in outcome.failed:
            typer.secho(f"  {failure.chat}: {failure.error}", err=True)
        raise typer.Exit(1)


async def _run_batch(
    admin: ExtractionAdmin, character: str, chats: list[tuple[str, int]]
) -> BatchOutcome:
    """Chat by chat, call by call, under a progress bar; Ctrl-C stops after the current call."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGINT, stop.set)
    starts = accumulate((calls for _, calls in chats), initial=0)
    calls_before = {chat_id: start for (chat_id, _), start in zip(chats, starts, strict=False)}
    try:
        with RichProgress(*PROGRESS_COLUMNS, transient=False) as bar:
            task = bar.add_task("batch", total=sum(calls for _, calls in chats))

            def advance(report: ExtractionReport, done: int, total: int) -> None:
                # Counted from the chat's start, so a chat that failed halfway is passed over.
                bar.update(
                    task,
                    description=progress_label(report.chat),
                    completed=calls_before[report.chat] + done,
                )

            return await admin.run_batch(
                character, [c for c, _ in chats], progress=advance, stop=stop
            )
    finally:
        loop.remove_signal_handler(signal.SIGINT)


def progress_label(chat_id: str, width: int = 48) -> str:
    """A chat's name that fits `width`, shortened in the middle: its date stays readable."""
    if len(chat_id) <= width:
        return chat_id
    head = width // 3
    return f"{chat_id[:head]}…{chat_id[len(chat_id) - (width - head - 1) :]}"


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
    text: Annotated[
        str | None,
        typer.Argument(help="One memory per line; `-` reads them from standard input."),
    ] = None,
    message: Annotated[
        int | None,
        typer.Option("--message", help="Pin this chat message (its index) instead of text."),
    ] = None,
    chat: ChatOption = None,
) -> None:
    """Save memories directly (no LLM): each line of TEXT, or one chat message, is a bullet."""
    admin = state.app().extraction_admin
    if (text is None) == (message is None):
        raise ConfigError(
            "give the TEXT to pin, `-` to read it from standard input, or --message N"
        )
    if message is not None:
        pinned = asyncio.run(admin.pin_message(character, message, chat=chat))
    else:
        lines = sys.stdin.read() if text == "-" else text
        pinned = asyncio.run(admin.pin(character, lines or "", chat=chat))
    if pinned.chosen_because:
        typer.echo(f"chat: {pinned.chat} ({pinned.chosen_because}; --chat picks another)")
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
    who = _logged_character(character) if character is not None else None
    last = 0
    shown_prompts = False
    while True:
        for entry in activity.entries(character=who, after_id=last, limit=limit):
            where = "/".join(x for x in (entry.character, entry.chat) if x)
            typer.echo(f"{entry.at} {entry.level:<7} {entry.kind:<18} {where}  {entry.message}")
            if verbose and entry.data:
                typer.echo(
                    "    "
                    + json.dumps(entry.data, ensure_ascii=False, indent=2).replace("\n", "\n    ")
                )
                shown_prompts |= bool(VERBOSE_KEYS & entry.data.keys())
            last = entry.id
        if verbose and not shown_prompts:
            typer.echo(
                "no prompts or answers were recorded: they are kept only while "
                "extraction.verbose_log is on (`charmemory settings set extraction.verbose_log "
                "true`, then extract)"
            )
            shown_prompts = True  # said once
        if not follow:
            return
        time.sleep(1.0)


# What an extraction records only with extraction.verbose_log on.
VERBOSE_KEYS = frozenset({"prompt", "response"})


def _logged_character(name: str) -> str:
    """The character's name as the log keeps it; unknown and never logged: an error."""
    try:
        return state.app().library.character(name).name
    except NotFoundError:
        # A character whose card is gone still has its history in the log.
        if state.app().activity.entries(character=name, limit=1):
            return name
        raise
