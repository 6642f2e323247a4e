"""`charmemory books` and `charmemory profiles`: memory books, their entries and versions."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Sequence
from typing import Annotated, Any

import typer

from charmemory.cli.application import app, state
from charmemory.core.books.entry import chat_of, is_memory, link_of, scene_of, tier_of
from charmemory.core.books.tiers import tier_name
from charmemory.formats.lorebook import LorebookEntry

books_app = typer.Typer(
    help="Memory books: lorebooks that hold scene memories.", no_args_is_help=True
)
app.add_typer(books_app, name="books")

BookArg = Annotated[str, typer.Argument(help="The lorebook's name (its file name without .json).")]
CharacterArg = Annotated[str, typer.Argument(help="Character name or card file name.")]
ChatOption = Annotated[
    str | None, typer.Option("--chat", help="Chat id (file name without .jsonl); default: latest.")
]
JsonFlag = Annotated[bool, typer.Option("--json", help="Machine-readable output.")]


@books_app.command("list")
def books_list(as_json: JsonFlag = False) -> None:
    """Every lorebook of the workspace, with how many of its entries are memories."""
    found = state.app().books.summaries()
    if as_json:
        rows = [
            {"name": s.name, "entries": s.entries, "memories": s.memories, "chats": list(s.chats)}
            for s in found
        ]
        typer.echo(json.dumps(rows, ensure_ascii=False, indent=2))
        return
    if not found:
        typer.echo("no lorebooks yet")
    for summary in found:
        chats = f", from {len(summary.chats)} chat(s)" if summary.chats else ""
        typer.echo(f"{summary.name}: {summary.entries} entries, {summary.memories} memories{chats}")


def entry_json(entry: LorebookEntry) -> dict[str, Any]:
    scene = scene_of(entry)
    link = link_of(entry)
    raw = entry.to_dict()
    return {
        "uid": entry.uid,
        "title": entry.comment,
        "content": entry.content,
        "keywords": list(entry.keys),
        "memory": is_memory(entry),
        "tier": tier_name(tier_of(entry)) if is_memory(entry) else None,
        "range": None if scene is None else [scene.first, scene.last],
        "chat": chat_of(entry),
        "disabled": entry.disable,
        "canonical": None if link is None else link.canonical,
        "inclusion_group": None if link is None else link.inclusion_group,
        "canonical_book": None if link is None else link.canonical_book,
        "canonical_uid": None if link is None else link.canonical_uid,
        "constant": bool(raw.get("constant")),
        "vectorized": bool(raw.get("vectorized")),
        "order": raw.get("order"),
    }


def entry_line(entry: LorebookEntry) -> str:
    """`#3 001 - The Harbour [memory 0-9, link]`: an entry as one line."""
    marks = []
    if is_memory(entry):
        tier = tier_of(entry)
        scene = scene_of(entry)
        marks.append(
            tier_name(tier) if tier else "memory" + (f" {scene}" if scene is not None else "")
        )
        link = link_of(entry)
        if link is not None:
            marks.append("canonical" if link.canonical else f"copy of {link.canonical_book}")
    if entry.disable:
        marks.append("disabled")
    shown = f" [{', '.join(marks)}]" if marks else ""
    return f"#{entry.uid} {entry.comment or '(untitled)'}{shown}"


@books_app.command("show")
def books_show(book: BookArg, as_json: JsonFlag = False) -> None:
    """A book's entries: memories with their scene ranges and links, then the others."""
    loaded = state.app().books.book(book)
    entries = list(loaded.book.entries.values())
    if as_json:
        shown = {"name": loaded.name, "entries": [entry_json(e) for e in entries]}
        typer.echo(json.dumps(shown, ensure_ascii=False, indent=2))
        return
    typer.echo(f"{loaded.name}: {len(entries)} entries")
    for entry in entries:
        typer.echo(entry_line(entry))
        if entry.keys:
            typer.echo(f"    keywords: {', '.join(entry.keys)}")
        for line in entry.content.splitlines():
            typer.echo(f"    {line}")


@books_app.command("bind")
def books_bind(
    character: CharacterArg,
    book: Annotated[str | None, typer.Argument(help="The book (leave out with --none).")] = None,
    chat: ChatOption = None,
    manual: Annotated[
        bool, typer.Option("--manual", help="As the chat's manual memory book.")
    ] = False,
    member: Annotated[
        str | None, typer.Option("--member", help="As this member's own memory book.")
    ] = None,
    none: Annotated[bool, typer.Option("--none", help="Unbind instead.")] = False,
) -> None:
    """Bind a book to a chat: as its book, its manual memory book or a member's book."""
    if (book is None) != none:
        raise typer.BadParameter("give a BOOK, or --none to unbind")
    typer.echo(state.app().books.bind(character, book, chat, manual=manual, member=member))


@books_app.command("history")
def books_history(book: BookArg) -> None:
    """The book's versions, oldest first."""
    versions = state.app().books.versions(book)
    if not versions:
        typer.echo("no versions yet")
    for version in versions:
        size = "deleted" if version.deleted else f"{version.size:,} bytes"
        detail = f" ({version.detail})" if version.detail else ""
        typer.echo(f"v{version.number} {version.at} {version.cause}{detail}, {size}")


@books_app.command("undo")
def books_undo(
    book: BookArg,
    to: Annotated[int | None, typer.Option("--to", help="Bring back this version.")] = None,
) -> None:
    """Bring back the book's previous version (or version --to N); an undo is undone alike."""
    version = state.app().books.undo(book, to)
    typer.echo(f"{book}: back to v{version.number} ({version.cause})")


# -- one entry ------------------------------------------------------------------------------

UidArg = Annotated[int, typer.Argument(help="The entry's uid (see `books show`).")]
PreviewFlag = Annotated[bool, typer.Option("--preview", help="Show the result; save nothing.")]
YesFlag = Annotated[bool, typer.Option("--yes", "-y", help="Save without asking.")]
ProfileOption = Annotated[str | None, typer.Option("--profile", help="The profile to use.")]


def _words(text: str | None) -> list[str] | None:
    return None if text is None else [word.strip() for word in text.split(",") if word.strip()]


def _confirmed(lines: list[str], *, preview: bool, yes: bool) -> bool:
    """Show a result; whether to save it (asked unless --yes or --preview)."""
    for line in lines:
        typer.echo(line)
    if preview:
        typer.echo("(preview: nothing was saved)")
        return False
    if yes or typer.confirm("save it?", default=True):
        return True
    typer.echo("nothing was saved")
    return False


def _linked(linked: Sequence[tuple[str, int]]) -> None:
    if linked:
        shown = ", ".join(f"{book}#{uid}" for book, uid in linked)
        typer.echo(f"linked entries left as they are: {shown}")


@books_app.command("edit")
def books_edit(
    book: BookArg,
    uid: UidArg,
    title: Annotated[str | None, typer.Option(help="The new title.")] = None,
    content: Annotated[str | None, typer.Option(help="The new content.")] = None,
    keywords: Annotated[str | None, typer.Option(help="The new keywords, comma-separated.")] = None,
) -> None:
    """Change an entry's title, content or keywords (its linked copies stay as they are)."""
    entry = state.app().book_entries.edit(
        book, uid, title=title, content=content, keywords=_words(keywords)
    )
    typer.echo(f"edited {book}{entry_line(entry)}")


@books_app.command("delete")
def books_delete(book: BookArg, uid: UidArg) -> None:
    """Delete one entry (`books undo` brings it back)."""
    removed = state.app().book_entries.delete(book, uid)
    typer.echo(f"deleted {book}{entry_line(removed.entry)}")
    _linked(removed.linked)


@books_app.command("clip")
def books_clip(
    book: BookArg,
    text: Annotated[str, typer.Argument(help="The text to save (- reads standard input).")],
    headline: Annotated[str, typer.Option("--title", help="The clip's headline.")],
    keywords: Annotated[
        str | None, typer.Option(help="Keywords (comma-separated); without them it is constant.")
    ] = None,
) -> None:
    """Save text to a book as it is, without the model (a `[STMB Clip]` entry)."""
    clipped = sys.stdin.read() if text == "-" else text
    entry = state.app().book_entries.clip(
        book, clipped, headline=headline, keywords=_words(keywords) or []
    )
    typer.echo(f"clipped to {book}{entry_line(entry)}")


@books_app.command("regenerate")
def books_regenerate(
    book: BookArg,
    uid: UidArg,
    copies: Annotated[
        bool, typer.Option("--copies", help="Regenerate its linked entries too.")
    ] = False,
    profile: ProfileOption = None,
    preview: PreviewFlag = False,
    yes: YesFlag = False,
) -> None:
    """Write a scene memory again from its messages (it keeps its number)."""
    entries = state.app().book_entries
    rewrite = asyncio.run(entries.regenerate(book, uid, copies=copies, profile=profile))
    lines = []
    for (name, number), answer in rewrite.entries.items():
        lines += [f"{name}#{number} {rewrite.titles[(name, number)]}", *answer.content.splitlines()]
    if _confirmed(lines, preview=preview, yes=yes):
        entries.apply(rewrite)
        typer.echo("saved")
    _linked(rewrite.linked)


@books_app.command("compact")
def books_compact(
    book: BookArg,
    uid: UidArg,
    profile: ProfileOption = None,
    preview: PreviewFlag = False,
    yes: YesFlag = False,
) -> None:
    """Have the model shorten an entry; its title and keywords stay."""
    entries = state.app().book_entries
    rewrite = asyncio.run(entries.compact(book, uid, profile=profile))
    [answer] = rewrite.entries.values()
    if _confirmed(answer.content.splitlines(), preview=preview, yes=yes):
        entries.apply(rewrite)
        typer.echo("saved")


@books_app.command("consolidate")
def books_consolidate(
    book: BookArg,
    tier: Annotated[str, typer.Option(help="arc, chapter, book, legend, series or epic.")] = "arc",
    entries: Annotated[
        str | None, typer.Option("--entries", help="The uids to fold, comma-separated.")
    ] = None,
    disable_sources: Annotated[
        bool, typer.Option("--disable-sources", help="Disable the entries folded in.")
    ] = False,
    profile: ProfileOption = None,
    preview: PreviewFlag = False,
    yes: YesFlag = False,
) -> None:
    """Fold the entries of one tier into an entry of the next (memories into an arc ...)."""
    consolidation = state.app().book_consolidation
    uids = None if entries is None else [int(uid) for uid in _words(entries) or []]
    plan = asyncio.run(consolidation.preview(book, tier=tier, uids=uids, profile=profile))
    lines = [
        f"{tier} of entries {', '.join(map(str, plan.sources))}: {plan.answer.title}",
        *plan.answer.content.splitlines(),
    ]
    if _confirmed(lines, preview=preview, yes=yes):
        done = consolidation.apply(plan, disable_sources=disable_sources)
        typer.echo(f"{done.book}#{done.uid} {done.title}")
        if done.disabled:
            typer.echo(f"disabled: {', '.join(map(str, done.disabled))}")
