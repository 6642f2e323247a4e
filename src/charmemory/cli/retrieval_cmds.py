"""Retrieval from the command line: index, search, revectorize, inject, diagnose."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from charmemory.cli.application import app, state
from charmemory.composition import read_text_file
from charmemory.errors import ConfigError

if TYPE_CHECKING:
    from charmemory.core.retrieval import Collection
    from charmemory.ports import SyncReport
    from charmemory.services.retrieval import Result


CharacterArg = Annotated[str, typer.Argument(help="Character name or card file name.")]
ChatOption = Annotated[
    str | None,
    typer.Option(
        "--chat", help="Chat id (file name without .jsonl): its own memories in per-chat mode."
    ),
]
JsonFlag = Annotated[bool, typer.Option("--json", help="Machine-readable output.")]


def unit(collection: Collection, count: int) -> str:
    if collection.chunks:
        return f"{count:,} chunk{'' if count == 1 else 's'}"
    return f"{count:,} memor{'y' if count == 1 else 'ies'}"


def _summary(collection: Collection, report: SyncReport) -> str:
    return (
        f"{collection.name}: {unit(collection, report.added + report.kept)} indexed with "
        f"{report.model} ({report.embedded:,} embedded, {report.removed:,} removed, "
        f"{report.kept:,} kept)"
    )


@app.command()
def index(character: CharacterArg, chat: ChatOption = None) -> None:
    """Bring the character's retrieval index up to date (only changed memories are embedded)."""
    located, report = asyncio.run(state.app().memory_search.index(character, chat))
    typer.echo(_summary(located.location.collection, report))


@app.command()
def revectorize(
    character: CharacterArg,
    chat: ChatOption = None,
    purge: Annotated[
        bool, typer.Option("--purge", help="Forget the collection first, then rebuild it.")
    ] = False,
) -> None:
    """Embed every memory again (after a model update, or to repair the index)."""
    search = state.app().memory_search
    located, report = asyncio.run(search.revectorize(character, chat, purge=purge))
    typer.echo(_summary(located.location.collection, report))


def _as_json(result: Result) -> dict[str, object]:
    return {
        "id": result.id,
        "text": result.text,
        "score": round(result.score, 6),
        "cosine": round(result.cosine, 6),
        "vector_rank": result.vector_rank,
        "bm25": None if result.bm25 is None else round(result.bm25, 6),
        "bm25_rank": result.bm25_rank,
        "file": result.provenance.file,
        "block_chat": result.block_chat,
        "block_date": result.block_date,
        "topic": result.provenance.topic,
        "block_index": result.provenance.block_index,
        "bullet_index": result.provenance.bullet_index,
        "chunk": result.provenance.chunk,
    }


def _note_indexing(collection: Collection, report: SyncReport) -> None:
    if report.embedded or report.removed:
        typer.echo(_summary(collection, report), err=True)


@app.command()
def search(
    character: CharacterArg,
    query: Annotated[str | None, typer.Argument(help="What to look for.")] = None,
    k: Annotated[int | None, typer.Option("-k", help="How many results (default 10).")] = None,
    as_json: JsonFlag = False,
    queries: Annotated[
        Path | None, typer.Option("--queries", help="A file with one query per line.")
    ] = None,
    chat: ChatOption = None,
) -> None:
    """Find the character's memories most related to a query (hybrid BM25 + vectors).

    The index is brought up to date first. With --queries, every query is
    answered by one process and printed as one JSON line.
    """
    if (query is None) == (queries is None):
        raise ConfigError("give one query, or --queries FILE with one query per line")
    if k is not None and k < 1:
        raise ConfigError("-k must be at least 1")
    if query is not None and not query.strip():
        raise ConfigError("the query is empty: say what to look for")
    asked = (
        [line for line in read_text_file(queries).splitlines() if line.strip()]
        if queries is not None
        else [query or ""]
    )

    searched = asyncio.run(state.app().memory_search.search(character, asked, k or 10, chat))
    _note_indexing(searched.located.location.collection, searched.synced)
    answers = searched.answers
    if queries is not None:
        for text, results in zip(asked, answers, strict=True):
            line = {"query": text, "results": [_as_json(r) for r in results]}
            typer.echo(json.dumps(line, ensure_ascii=False))
        return
    [results] = answers
    if as_json:
        typer.echo(json.dumps([_as_json(r) for r in results], ensure_ascii=False, indent=2))
        return
    for result in results:
        typer.echo(f"{result.score:.3f}  {result.text}  [{result.block_chat} {result.block_date}]")
    if not results:
        typer.echo("no memories match")


@app.command()
def inject(character: CharacterArg, chat: ChatOption = None, as_json: JsonFlag = False) -> None:
    """Show what would be injected for a chat (default: the latest) and record it.

    The query is built from the chat's last visible messages, as a chat engine does.
    """

    injected = asyncio.run(state.app().memory_search.inject(character, chat))
    _note_indexing(injected.located.location.collection, injected.synced)
    retrieval, chat_ref = injected.retrieval, injected.located.chat
    injection = retrieval.injection
    metadata = {
        "collection": retrieval.collection,
        "chat": chat_ref.id if chat_ref else None,
        "query": retrieval.query,
        "position": injection.position,
        "depth": injection.depth,
        "role": injection.role,
        "tokens": injection.tokens,
        "included": list(injection.included),
        "over_budget": list(injection.over_budget),
    }
    if as_json:
        typer.echo(json.dumps({**metadata, "text": injection.text}, ensure_ascii=False, indent=2))
        return
    typer.echo(f"chat: {metadata['chat']}  ({retrieval.collection})")
    typer.echo("query: " + retrieval.query.replace("\n", " / "))
    if not injection.text:
        reason = "no memory passed the score threshold" if retrieval.query else "no message"
        typer.echo(f"nothing to inject: {reason}")
        return
    over = f", {len(injection.over_budget)} over the budget" if injection.over_budget else ""
    typer.echo(
        f"position {injection.position}, depth {injection.depth}, role {injection.role}, "
        f"{injection.tokens} tokens, {len(injection.included)} injected{over}"
    )
    typer.echo("---")
    typer.echo(injection.text)
