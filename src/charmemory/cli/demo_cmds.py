"""`charmemory demo`: a workspace built from the bundled sample, shown end to end.

Import the sample card and chat, extract memories from the chat with the model in
force (the embedded local model when no provider is chosen), print the memory
file, answer questions from it with hybrid retrieval, and show the text the
character would be given with its next reply. Running it again extracts nothing
new and shows the same file.
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from importlib import resources
from pathlib import Path

import typer

from charmemory.cli.application import app, state
from charmemory.composition import App
from charmemory.core.providers import EMBEDDED
from charmemory.ports import Character
from charmemory.services.extraction_report import ExtractionReport

# Questions a person might ask the character about the sample chat, each with the
# words the memory that answers it must hold (see data/demo/README.md).
QUESTIONS = (
    ("Who betrayed Mira, and how?", ("Corwin",)),
    ("What did Mira give Alex to keep?", ("compass",)),
)
TOP_K = 3


@app.command()
def demo() -> None:
    """Build a demo workspace from the bundled sample, extract its memories and query them."""
    demo_app = state.created_app()
    typer.echo(f"==> demo workspace at {demo_app.root}")
    _import_sample(demo_app)
    for character in demo_app.library.characters():
        _show(demo_app, character)
        _extract(demo_app, character)
        asyncio.run(_ask(demo_app, character))
    _closing_note(demo_app)


def _import_sample(demo_app: App) -> None:
    sample = resources.files("charmemory") / "data" / "demo"
    with tempfile.TemporaryDirectory() as tmp:
        files = []
        for item in sorted(sample.iterdir(), key=lambda i: not i.name.endswith(".json")):
            if item.name.endswith((".json", ".jsonl")):
                path = Path(tmp) / item.name
                path.write_bytes(item.read_bytes())
                files.append(path)
        for path in files:
            done = demo_app.library.import_file(path)
            typer.echo(f"    {'kept' if done.unchanged else 'added'} {done.kind}: {path.name}")


def _show(demo_app: App, character: Character) -> None:
    typer.echo(f"\n==> {character.name}")
    baseline = character.card.description.strip().splitlines()[0]
    typer.echo(f"    card: {baseline[:160]}")
    for ref in demo_app.library.chats(character):
        chat = demo_app.library.load_chat(ref).chat
        shown = [m for m in chat.messages if not m.is_hidden]
        typer.echo(f"    chat {ref.id}: {len(shown)} messages")
        for message in shown[:3]:
            typer.echo(f"      {message.name}: {message.active_text[:100]}")
        typer.echo("      ...")


def _extract(demo_app: App, character: Character) -> None:
    typer.echo(f"\n==> extracting memories with {demo_app.providers.describe_model()}")
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

    report = asyncio.run(demo_app.extraction.extract(character.name, progress=progress))
    listing = demo_app.memories.list(character.name)
    typer.echo(f"\n==> memory file {report.memory_file}: {listing.count} memories\n")
    for block in listing.blocks:
        typer.echo(f"    [{block.chat}  {block.date}]")
        for memory in block.memories:
            typer.echo(f"    - {memory.text}")


async def _ask(demo_app: App, character: Character) -> None:
    asked = [question for question, _ in QUESTIONS]
    searched = await demo_app.memory_search.search(character.name, asked, TOP_K)
    typer.echo(
        f"\n==> asking the memories ({searched.synced.added + searched.synced.kept} indexed "
        f"with {searched.synced.model}); cosine similarity to the question, 1.00 = same meaning"
    )
    for (question, must_hold), results in zip(QUESTIONS, searched.answers, strict=True):
        typer.echo(f"    {question}")
        for result in results:
            typer.echo(f"      {result.cosine:.2f}  {result.text}")
        if not results:
            typer.echo("      no memory matches")
        elif not all(word.lower() in results[0].text.lower() for word in must_hold):
            answered = any(
                all(word.lower() in r.text.lower() for word in must_hold) for r in results
            )
            typer.echo(
                "      (the answer is "
                + ("not ranked first" if answered else "not among the memories extracted")
                + ")"
            )
    injected = await demo_app.memory_search.inject(character.name)
    typer.echo(
        "\n==> what the character is given with its next reply (the chat's last two "
        f"messages as the query; {injected.retrieval.injection.tokens} tokens, "
        f"{injected.retrieval.injection.position}, depth {injected.retrieval.injection.depth})"
    )
    text = injected.retrieval.injection.text or "(nothing passed the score threshold)"
    for line in text.splitlines():
        typer.echo(f"    {line}")


def _closing_note(demo_app: App) -> None:
    settings = demo_app.providers.model_settings(require_model=False)
    if settings.provider != EMBEDDED:
        return
    typer.echo(
        "\n==> these memories come from the embedded local model: small and offline, it misses\n"
        "    facts and sometimes garbles one. A hosted model extracts far better, for example:\n"
        "      charmemory settings set model.provider openrouter\n"
        "      charmemory settings set model.model deepseek/deepseek-chat-v3.1\n"
        "      charmemory secrets set openrouter\n"
        "    (`charmemory providers` lists every provider)"
    )
