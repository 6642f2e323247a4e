"""`charmemory index` and `charmemory search`: the retrieval index from the command line."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Annotated

import typer

from charmemory.adapters.library import Library
from charmemory.adapters.memory_files import MemoryFiles
from charmemory.cli.application import app, state
from charmemory.composition import retrieval_service
from charmemory.core.retrieval import items_from_memory_file
from charmemory.errors import NotFoundError
from charmemory.services.retrieval import Result, RetrievalService

CharacterArg = Annotated[str, typer.Argument(help="Character name or card file name.")]


async def _synced(character: str) -> tuple[RetrievalService, str, str]:
    """The service and the character's collection, brought up to date with its memory file."""
    ws = state.workspace()
    who = Library(ws).character(character)
    files = MemoryFiles(ws)
    loaded = files.load(files.path_for(who.name))
    collection = f"char:{who.name}"
    service = retrieval_service(ws)
    items = items_from_memory_file(collection, files.relative(loaded.path), loaded.file)
    report = await service.sync(collection, items)
    return service, collection, f"{len(items)} memories indexed ({report})"


@app.command()
def index(character: CharacterArg) -> None:
    """Bring the character's retrieval index up to date (only changed memories are embedded)."""
    _, _, summary = asyncio.run(_synced(character))
    typer.echo(summary)


def _as_json(result: Result) -> dict[str, object]:
    return {
        "id": result.id,
        "text": result.text,
        "score": round(result.score, 6),
        "cosine": round(result.cosine, 6),
        "bm25": None if result.bm25 is None else round(result.bm25, 6),
        "block_chat": result.block_chat,
        "block_date": result.block_date,
        "block_index": result.provenance.block_index,
        "bullet_index": result.provenance.bullet_index,
    }


@app.command()
def search(
    character: CharacterArg,
    query: Annotated[str | None, typer.Argument(help="What to look for.")] = None,
    k: Annotated[int, typer.Option("-k", help="How many results.")] = 10,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
    queries: Annotated[
        Path | None, typer.Option("--queries", help="A file with one query per line.")
    ] = None,
) -> None:
    """Find the character's memories most related to a query (hybrid BM25 + vectors)."""
    if (query is None) == (queries is None):
        raise NotFoundError("give one query, or --queries FILE with one query per line")
    if queries is not None and not queries.is_file():
        raise NotFoundError(f"no such file: {queries}")
    asked = (
        [line for line in queries.read_text(encoding="utf-8").splitlines() if line.strip()]
        if queries is not None
        else [query or ""]
    )

    async def answer() -> list[list[Result]]:
        service, collection, _ = await _synced(character)
        found = await service.retrieve_many(collection, asked, k)
        return [retrieval.results for retrieval in found]

    answers = asyncio.run(answer())
    if queries is not None:
        for text, results in zip(asked, answers, strict=True):
            typer.echo(
                json.dumps(
                    {"query": text, "results": [_as_json(r) for r in results]}, ensure_ascii=False
                )
            )
        return
    [results] = answers
    if as_json:
        typer.echo(json.dumps([_as_json(r) for r in results], ensure_ascii=False, indent=2))
        return
    for result in results:
        typer.echo(f"{result.score:.3f}  {result.text}  [{result.block_chat} {result.block_date}]")
    if not results:
        typer.echo("no memories match")
