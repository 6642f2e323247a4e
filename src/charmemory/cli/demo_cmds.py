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
from typing import TYPE_CHECKING

import typer

from charmemory.cli.application import app, state
from charmemory.core.providers import EMBEDDED
from charmemory.errors import NameTakenError

if TYPE_CHECKING:
    from charmemory.composition import App
    from charmemory.ports import Character, StreamDelta
    from charmemory.services.extraction_report import ExtractionReport


# Questions a person might ask about the sample chat, each with the words the memory
# that answers it must hold (see data/demo/README.md).
QUESTIONS = (
    ("What name was Mira born with?", ("Ashgrove",)),
    ("Where did Alex's brother go?", ("Rowan",)),
)
TOP_K = 3
# The person the sample chat's user plays, who asks Mira in a new chat, far from the
# sample chat: only her memory knows.
USER = "Alex"
ASKED = "Mira, do you remember where my brother went? I can't stop thinking about him."
REPLY_TOKENS = 160


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
        asyncio.run(_talk(demo_app, character))
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
            try:
                done = demo_app.library.import_file(path)
            except NameTakenError:  # chatted on or edited since: the workspace's copy stays
                typer.echo(f"    kept: {path.name} (changed in this workspace since)")
                continue
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
        f"with {searched.synced.model}), best match first"
    )
    for (question, must_hold), results in zip(QUESTIONS, searched.answers, strict=True):
        typer.echo(f"    {question}")
        for rank, result in enumerate(results, start=1):
            typer.echo(f"      {rank}. {result.text}")
        answered = [
            rank
            for rank, result in enumerate(results, start=1)
            if all(word.lower() in result.text.lower() for word in must_hold)
        ]
        if not answered:
            typer.echo("      (no memory extracted holds the answer)")
        elif answered[0] != 1:
            typer.echo(f"      (the answer is ranked {answered[0]}, not first)")


async def _talk(demo_app: App, character: Character) -> None:
    """One turn in a new chat: the character answers with what its memories give it."""
    demo_app.settings.set("model.max_tokens", str(REPLY_TOKENS))
    # A new chat has no message of the user's to take a name from: the persona gives it.
    demo_app.settings.set("persona.name", USER)
    typer.echo(f"\n==> a new chat with {character.name}, who remembers only what was extracted")
    typer.echo(f"    {USER}: {ASKED}")
    typer.echo(f"    {character.name}: ", nl=False)

    def shown(delta: StreamDelta) -> None:
        typer.echo(delta.text.replace("\n", " "), nl=False)

    turn = await demo_app.chat.send(character.name, ASKED, new=True, on_delta=shown)
    typer.echo(f"\n    the memories given with that prompt ({len(turn.memories)}):")
    for memory in turn.memories:
        typer.echo(f"      - {memory['text']}")
    typer.echo(
        f"    (what the prompt held, and why: charmemory diagnose {_quoted(character.name)})"
    )
    await demo_app.chat.extractions_finished()


def _quoted(name: str) -> str:
    return f'"{name}"' if " " in name else name


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
