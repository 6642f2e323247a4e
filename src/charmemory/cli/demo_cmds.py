"""`charmemory demo`: a workspace built from the bundled sample, shown end to end.

Import the sample card and chat, extract memories from the chat with the model in
force (the embedded local model when no provider is chosen), print the memory
file, then answer two questions from it with hybrid retrieval. Running it again
extracts nothing new and shows the same file.
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from importlib import resources
from pathlib import Path

import typer

from charmemory.adapters.library import Character, Library
from charmemory.adapters.model_install import DEFAULT_LOCAL_LLM
from charmemory.adapters.workspace import Workspace
from charmemory.cli.application import app, state
from charmemory.cli.retrieval_wiring import memory_source
from charmemory.composition import extraction_service, provider_service, retrieval_service
from charmemory.core.providers import EMBEDDED
from charmemory.services.extraction import ExtractionReport

QUESTIONS = ("What does Mira owe, and to whom?", "Who betrayed Mira?")
TOP_K = 3


@app.command()
def demo() -> None:
    """Build a demo workspace from the bundled sample, extract its memories and query them."""
    ws = Workspace.create(state.workspace_dir)
    typer.echo(f"==> demo workspace at {ws.root}")
    library = Library(ws)
    _import_sample(library)
    for character in library.characters():
        _show(library, character)
        _extract(ws, character)
        asyncio.run(_ask(ws, character))


def _import_sample(library: Library) -> None:
    sample = resources.files("charmemory") / "data" / "demo"
    with tempfile.TemporaryDirectory() as tmp:
        files = []
        for item in sorted(sample.iterdir(), key=lambda i: not i.name.endswith(".json")):
            if item.name.endswith((".json", ".jsonl")):
                path = Path(tmp) / item.name
                path.write_bytes(item.read_bytes())
                files.append(path)
        for path in files:
            done = library.import_file(path)
            typer.echo(f"    {'kept' if done.unchanged else 'added'} {done.kind}: {path.name}")


def _show(library: Library, character: Character) -> None:
    typer.echo(f"\n==> {character.name}")
    baseline = character.card.description.strip().splitlines()[0]
    typer.echo(f"    card: {baseline[:160]}")
    for ref in library.chats(character):
        chat = library.load_chat(ref).chat
        shown = [m for m in chat.messages if not m.is_hidden]
        typer.echo(f"    chat {ref.id}: {len(shown)} messages")
        for message in shown[:3]:
            typer.echo(f"      {message.name}: {message.active_text[:100]}")
        typer.echo("      ...")


def _extract(ws: Workspace, character: Character) -> None:
    settings = provider_service(ws).model_settings()
    model = settings.model or (DEFAULT_LOCAL_LLM.name if settings.provider == EMBEDDED else "")
    typer.echo(f"\n==> extracting memories with {settings.provider} ({model})")
    service = extraction_service(ws)
    started = time.monotonic()

    def progress(report: ExtractionReport, done: int, total: int) -> None:
        if done == 0:
            typer.echo(f"    {report.planned_messages} new messages in {total} calls to the model")
            return
        chunk = report.chunks[-1]
        what = f"{len(chunk.saved)} memories saved" if chunk.saved else "nothing new"
        elapsed = time.monotonic() - started
        typer.echo(
            f"    call {done}/{total}: messages {chunk.first}-{chunk.last}, {what} "
            f"({elapsed:.0f} s)"
        )

    report = asyncio.run(service.extract(character.name, progress=progress))
    path = ws.root / report.memory_file
    typer.echo(f"\n==> memory file {report.memory_file}\n")
    typer.echo(path.read_text(encoding="utf-8").rstrip() if path.is_file() else "(empty)")


async def _ask(ws: Workspace, character: Character) -> None:
    service = retrieval_service(ws)
    source = memory_source(ws, service, character.name)
    report = await service.sync_file(source.collection, source.file, source.require_file().file)
    typer.echo(
        f"\n==> asking the memories ({report.added + report.kept} indexed with {report.model})"
    )
    for question in QUESTIONS:
        typer.echo(f"    {question}")
        results = await service.search(source.collection, question, TOP_K)
        for result in results:
            typer.echo(f"      {result.score:.2f}  {result.text}")
        if not results:
            typer.echo("      no memory matches")
