"""Retrieval from the command line: index, search, revectorize, inject, diagnose, settings."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Annotated, Any

import typer

from charmemory.adapters.library import Library
from charmemory.adapters.settings_store import WORKSPACE, SettingsStore, character_scope
from charmemory.cli.application import app, state
from charmemory.cli.retrieval_wiring import MemorySource, memory_source
from charmemory.composition import retrieval_service, stored_retrieval_settings
from charmemory.core.retrieval import is_chunk_collection
from charmemory.core.retrieval_settings import (
    SPECS,
    parse_setting_text,
    setting_key,
    setting_values,
)
from charmemory.errors import ConfigError, NotFoundError
from charmemory.formats.memory_file import stray_tag_warning
from charmemory.ports import RetrievalRecord, SyncReport
from charmemory.services.retrieval import Result, Retrieval, RetrievalService

CharacterArg = Annotated[str, typer.Argument(help="Character name or card file name.")]
ChatOption = Annotated[
    str | None,
    typer.Option(
        "--chat", help="Chat id (file name without .jsonl): its own memories in per-chat mode."
    ),
]
JsonFlag = Annotated[bool, typer.Option("--json", help="Machine-readable output.")]


def _unit(collection: str, count: int) -> str:
    if is_chunk_collection(collection):
        return f"{count:,} chunk{'' if count == 1 else 's'}"
    return f"{count:,} memor{'y' if count == 1 else 'ies'}"


def _summary(collection: str, report: SyncReport) -> str:
    return (
        f"{collection}: {_unit(collection, report.added + report.kept)} indexed with "
        f"{report.model} ({report.embedded:,} embedded, {report.removed:,} removed, "
        f"{report.kept:,} kept)"
    )


async def _synced(
    character: str, chat: str | None, *, latest_chat: bool = False
) -> tuple[RetrievalService, MemorySource, SyncReport]:
    """The service and the memory source, its collection brought up to date with the file."""
    ws = state.workspace()
    service = retrieval_service(ws)
    source = memory_source(ws, service, character, chat, latest_chat=latest_chat)
    loaded = source.require_file()
    report = await service.sync_file(source.collection, source.file, loaded.file)
    return service, source, report


@app.command()
def index(character: CharacterArg, chat: ChatOption = None) -> None:
    """Bring the character's retrieval index up to date (only changed memories are embedded)."""

    async def run() -> str:
        _, source, report = await _synced(character, chat)
        return _summary(source.collection, report)

    typer.echo(asyncio.run(run()))


@app.command()
def revectorize(
    character: CharacterArg,
    chat: ChatOption = None,
    purge: Annotated[
        bool, typer.Option("--purge", help="Forget the collection first, then rebuild it.")
    ] = False,
) -> None:
    """Embed every memory again (after a model update, or to repair the index)."""

    async def run() -> str:
        ws = state.workspace()
        service = retrieval_service(ws)
        source = memory_source(ws, service, character, chat)
        loaded = source.require_file()
        report = await service.revectorize(source.collection, source.file, loaded.file, purge=purge)
        return _summary(source.collection, report)

    typer.echo(asyncio.run(run()))


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


def _note_indexing(collection: str, report: SyncReport) -> None:
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
    if queries is not None and not queries.is_file():
        raise NotFoundError(f"no such file: {queries}")
    if k is not None and k < 1:
        raise ConfigError("-k must be at least 1")
    if query is not None and not query.strip():
        raise ConfigError("the query is empty: say what to look for")
    asked = (
        [line for line in queries.read_text(encoding="utf-8").splitlines() if line.strip()]
        if queries is not None
        else [query or ""]
    )

    async def answer() -> list[list[Result]]:
        service, source, report = await _synced(character, chat)
        _note_indexing(source.collection, report)
        found = await service.retrieve_many(source.collection, asked, k or 10)
        return [retrieval.results for retrieval in found]

    answers = asyncio.run(answer())
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

    async def run() -> tuple[Retrieval, MemorySource]:
        service, source, report = await _synced(character, chat, latest_chat=True)
        _note_indexing(source.collection, report)
        assert source.chat is not None
        loaded = Library(state.workspace()).load_chat(source.chat)
        messages = [m.active_text for m in loaded.chat.messages if not m.is_hidden]
        return await service.retrieve_for_chat(source.collection, messages), source

    retrieval, source = asyncio.run(run())
    injection = retrieval.injection
    metadata = {
        "collection": retrieval.collection,
        "chat": source.chat.id if source.chat else None,
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


@app.command()
def diagnose(character: CharacterArg, chat: ChatOption = None) -> None:
    """Show the memory file, item counts, the index state and the last injection."""

    async def run() -> list[str]:
        ws = state.workspace()
        service = retrieval_service(ws)
        source = memory_source(ws, service, character, chat)
        return await _diagnosis(service, source)

    for line in asyncio.run(run()):
        typer.echo(line)


async def _diagnosis(service: RetrievalService, source: MemorySource) -> list[str]:
    collection = source.collection
    settings = service.settings_for(collection)
    lines = [
        f"character: {source.character.name}" + (f", chat {source.chat.id}" if source.chat else "")
    ]
    memories = source.memories
    if not memories.exists:
        lines.append(f"memory file: {source.file} (none yet)")
    else:
        size = memories.path.stat().st_size
        lines.append(
            f"memory file: {source.file} ({size:,} bytes, {memories.file.block_count} blocks, "
            f"{memories.file.bullet_count} bullets)"
        )
        if warning := stray_tag_warning(memories.file):
            lines.append(f"  warning: {warning}")
    lines.append(f"granularity: {settings.granularity}; collection {collection}")
    stats = await service.stats(collection)
    if stats is None:
        lines.append(f"index: not built yet (charmemory index {source.character.name!r})")
    else:
        lines.append(
            f"index: {_unit(collection, stats.items)}, {stats.model} "
            f"({stats.dimensions} dimensions), updated {stats.updated_at}"
        )
        if memories.exists:
            plan = await service.plan_sync_file(collection, source.file, memories.file)
            lines.append("  " + _plan_text(plan))
    record = await service.last_retrieval(collection)
    lines.extend(_record_lines(record))
    return lines


def _plan_text(plan: SyncReport) -> str:
    if plan.reembedded_all:
        return f"indexed with another model: {plan.embedded:,} items will be embedded again"
    if not (plan.added or plan.removed):
        return "in step with the memory file"
    return (
        f"behind the memory file: {plan.added:,} to embed, {plan.removed:,} to remove "
        "(the next index, search or inject catches up)"
    )


def _record_lines(record: RetrievalRecord | None) -> list[str]:
    if record is None:
        return ["last retrieval: none yet"]
    injected = [c for c in record.candidates if c.get("injected")]
    lines = [
        f"last retrieval: {record.at}, {len(record.candidates)} candidates, "
        f"{len(injected)} injected",
        "  query: " + record.query.replace("\n", " / "),
    ]
    ranked = sorted(record.candidates, key=lambda c: -(c.get("score") or -1.0))
    for candidate in ranked[:10]:
        lines.append(_candidate_line(candidate))
    lines.append("  injected text:" if record.injected else "  injected text: (nothing)")
    lines.extend(f"    {line}" for line in record.injected.splitlines())
    return lines


def _candidate_line(candidate: dict[str, Any]) -> str:
    score = candidate.get("score")
    scored = "-" if score is None else f"{score:.3f}"
    bm25 = candidate.get("bm25")
    lexical = "-" if bm25 is None else f"{bm25:.2f} (#{candidate.get('bm25_rank')})"
    mark = "*" if candidate.get("injected") else " "
    text = str(candidate.get("text") or "").replace("\n", " ")
    return (
        f"  {mark} score {scored}  cosine {candidate['cosine']:.3f} "
        f"(#{candidate['vector_rank']})  bm25 {lexical}  {text[:80]}"
    )


# ---- settings ----------------------------------------------------------------------

settings_app = typer.Typer(
    help="Read and change the retrieval settings (for the workspace or one character).",
    no_args_is_help=True,
)
app.add_typer(settings_app, name="retrieval")
CharacterOption = Annotated[
    str | None, typer.Option("--character", "-c", help="Only for this character.")
]


def _character_name(character: str | None) -> str | None:
    return Library(state.workspace()).character(character).name if character else None


def _scope(name: str | None) -> str:
    return character_scope(name) if name is not None else WORKSPACE


@settings_app.command("show")
def settings_show(character: CharacterOption = None) -> None:
    """The settings in force, and where each value comes from."""
    store = SettingsStore(state.workspace().db)
    name = _character_name(character)
    own = store.all(scope=_scope(name)) if name is not None else {}
    workspace = store.all()
    values = setting_values(stored_retrieval_settings(store)(name))
    width = max(len(key) for key in SPECS)
    for key, spec in SPECS.items():
        stored = setting_key(key)
        origin = "character" if stored in own else "workspace" if stored in workspace else "default"
        value = json.dumps(values[key], ensure_ascii=False)
        typer.echo(f"{key:<{width}}  {value:<32}  {origin:<9}  {spec.label}")


@settings_app.command("set")
def settings_set(
    key: Annotated[str, typer.Argument(help=f"One of: {', '.join(SPECS)}.")],
    value: Annotated[str, typer.Argument(help="The value (fusion: a JSON object).")],
    character: CharacterOption = None,
) -> None:
    """Store a setting for the workspace, or for one character with --character."""
    stored = setting_key(key)
    checked = parse_setting_text(stored, value)
    SettingsStore(state.workspace().db).set(
        stored, checked, scope=_scope(_character_name(character))
    )
    typer.echo(f"set {stored} = {json.dumps(checked, ensure_ascii=False)}")


@settings_app.command("unset")
def settings_unset(
    key: Annotated[str, typer.Argument(help=f"One of: {', '.join(SPECS)}.")],
    character: CharacterOption = None,
) -> None:
    """Remove a stored setting, so the workspace value (or the default) applies again."""
    stored = setting_key(key)
    SettingsStore(state.workspace().db).delete(stored, scope=_scope(_character_name(character)))
    typer.echo(f"unset {stored}")
