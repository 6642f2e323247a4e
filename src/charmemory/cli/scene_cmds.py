"""`charmemory scene`: turn a range of a chat into memory-book entries, or catch a chat up."""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import subprocess
import tempfile
from pathlib import Path
from typing import Annotated, Any

import typer

from charmemory.cli.application import app, state
from charmemory.core.books.answer import SceneAnswer
from charmemory.core.books.scenes import parse_range
from charmemory.errors import CharMemoryError
from charmemory.services.scenes import SavedScene, ScenePlan

CATCH_UP = "catch-up"


def answer_text(answer: SceneAnswer) -> str:
    """An answer as a person edits it: title and keywords, a line, then the content."""
    return f"Title: {answer.title}\nKeywords: {', '.join(answer.keywords)}\n---\n{answer.content}\n"


def edited_answer(text: str) -> SceneAnswer:
    head, separator, content = text.partition("\n---\n")
    if not separator:
        raise CharMemoryError("the edited memory lost its '---' line; nothing was saved")
    fields = dict(line.split(":", 1) for line in head.splitlines() if ":" in line)
    title = fields.get("Title", "").strip()
    keywords = [word.strip() for word in fields.get("Keywords", "").split(",") if word.strip()]
    if not title or not content.strip():
        raise CharMemoryError("the edited memory needs a title and content; nothing was saved")
    return SceneAnswer(title, content.strip(), tuple(keywords))


def choose(show: list[str]) -> str:
    """Ask accept / edit / retry / cancel after showing a preview; the answer's first letter."""
    for line in show:
        typer.echo(line)
    while True:
        answer = str(typer.prompt("[a]ccept, [e]dit, [r]etry or [c]ancel", default="a"))
        letter = answer.strip().lower()[:1]
        if letter in ("a", "e", "r", "c"):
            return letter


def edit_in_editor(text: str) -> str:
    """``text`` as changed in $VISUAL or $EDITOR (vi without either)."""
    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "memory.txt"
        path.write_text(text, encoding="utf-8")
        done = subprocess.run([*shlex.split(editor), str(path)], check=False)
        if done.returncode != 0:
            raise CharMemoryError(f"the editor ({editor}) failed; nothing was saved")
        return path.read_text(encoding="utf-8")


def plan_lines(plan: ScenePlan) -> list[str]:
    lines = [
        f"scene {plan.scene.range} of {plan.chat.id} ({plan.scene.message_count} messages"
        + (f", {plan.scene.hidden_skipped} hidden left out" if plan.scene.hidden_skipped else "")
        + ")",
        "into "
        + ", ".join(plan.targets.books)
        + (f" (new book {plan.new_book})" if plan.new_book else ""),
        f"title: {plan.answer.title}",
        f"keywords: {', '.join(plan.answer.keywords)}",
        *plan.answer.content.splitlines(),
    ]
    for book, own in plan.copy_answers.items():
        lines += [f"-- {book}'s copy: {own.title}", *own.content.splitlines()]
    return lines


def saved_json(saved: SavedScene) -> dict[str, Any]:
    plan = saved.plan
    return {
        "chat": plan.chat.id,
        "range": str(plan.scene.range),
        "entries": [
            {
                "book": entry.book,
                "uid": entry.uid,
                "title": entry.title,
                "canonical": entry.canonical,
                "inclusion_group": entry.inclusion_group or None,
            }
            for entry in saved.entries
        ],
        "content": plan.answer.content,
        "keywords": list(plan.answer.keywords),
        "hidden": saved.hidden,
    }


def report_saved(saved: SavedScene) -> None:
    for entry in saved.entries:
        role = "" if len(saved.entries) == 1 else (" (canonical)" if entry.canonical else " (copy)")
        typer.echo(f"{entry.book}#{entry.uid} {entry.title}{role}")
    if saved.hidden:
        typer.echo(f"hid messages {saved.hidden[0]}-{saved.hidden[-1]}")


@app.command()
def scene(
    character: Annotated[
        str, typer.Argument(help="Character name, or `catch-up` followed by the character.")
    ],
    messages: Annotated[
        str | None, typer.Argument(help="The message range A-B (inclusive).", show_default=False)
    ] = None,
    chat: Annotated[
        str | None, typer.Option("--chat", help="Chat id; default: the character's latest.")
    ] = None,
    book: Annotated[str | None, typer.Option("--book", help="Write to this book.")] = None,
    preview: Annotated[
        bool, typer.Option("--preview", help="Show the memory; save nothing.")
    ] = False,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Save without asking.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
    participants: Annotated[
        list[str] | None,
        typer.Option("--participants", help="Who was in the scene (repeat; multi-book chats)."),
    ] = None,
    everyone: Annotated[
        bool, typer.Option("--everyone", help="Every member took part (multi-book chats).")
    ] = False,
    profile: Annotated[str | None, typer.Option("--profile", help="The profile to use.")] = None,
    reference: Annotated[
        list[str] | None,
        typer.Option("--reference", help="BOOK#UID of an entry shown to the model (repeat)."),
    ] = None,
    interval: Annotated[
        int | None, typer.Option("--interval", help="Catch-up: messages per memory.")
    ] = None,
) -> None:
    """Write the memory of messages A-B into the chat's memory book(s).

    `charmemory scene catch-up CHARACTER` writes memories for everything since the
    last one, in ranges of books.auto_interval messages (or --interval).
    """
    if character == CATCH_UP:
        if messages is None:
            raise typer.BadParameter("name the character: charmemory scene catch-up CHARACTER")
        _catch_up(messages, chat, interval)
        return
    if messages is None:
        raise typer.BadParameter("give the message range A-B")
    scenes = state.app().scenes
    chosen = [] if everyone else participants
    references = [_reference(text) for text in reference or []]
    ask = not (preview or yes) and state.app().books.settings(character).preview

    async def run() -> SavedScene | ScenePlan | None:
        while True:
            plan = await scenes.prepare(
                character,
                parse_range(messages),
                chat,
                book=book,
                participants=chosen,
                profile=profile,
                references=references,
            )
            if preview:
                return plan
            if not ask:
                return scenes.save(plan)
            answer = choose(plan_lines(plan))
            if answer == "r":
                continue
            if answer == "c":
                return None
            if answer == "e":
                new = edited_answer(edit_in_editor(answer_text(plan.answer)))
                plan = plan.edited(new.title, new.content, new.keywords)
            return scenes.save(plan)

    outcome = asyncio.run(run())
    if outcome is None:
        typer.echo("nothing was saved")
    elif isinstance(outcome, ScenePlan):
        if as_json:
            shown = {
                "chat": outcome.chat.id,
                "range": str(outcome.scene.range),
                "books": outcome.targets.books,
                "title": outcome.answer.title,
                "content": outcome.answer.content,
                "keywords": list(outcome.answer.keywords),
            }
            typer.echo(json.dumps(shown, ensure_ascii=False, indent=2))
        else:
            for line in plan_lines(outcome):
                typer.echo(line)
            typer.echo("(preview: nothing was saved)")
    elif as_json:
        typer.echo(json.dumps(saved_json(outcome), ensure_ascii=False, indent=2))
    else:
        report_saved(outcome)


def _reference(text: str) -> tuple[str, int]:
    book, _, uid = text.rpartition("#")
    if not book or not uid.isdigit():
        raise typer.BadParameter(f"{text!r} is not BOOK#UID")
    return book, int(uid)


def _catch_up(character: str, chat: str | None, interval: int | None) -> None:
    scenes = state.app().scenes
    report = asyncio.run(scenes.catch_up(character, chat, interval=interval, on_saved=report_saved))
    typer.echo(f"{len(report.saved)} scene memories saved")
    if report.error is not None:
        left = ", ".join(str(r) for r in report.remaining)
        raise CharMemoryError(f"catch-up stopped at {report.error} (still to do: {left})")
