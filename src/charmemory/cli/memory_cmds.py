"""Commands that change memories by hand, consolidate them, and walk their history."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from charmemory.cli.application import app, run_async, state
from charmemory.cli.workspace_cmds import memories_app
from charmemory.core.consolidation_plan import parse_block_indices
from charmemory.core.consolidation_prompt import CONSERVATIVE, STRATEGIES
from charmemory.errors import ConfigError
from charmemory.services.memory_manager import MANUAL_CHAT

if TYPE_CHECKING:
    from charmemory.core.consolidation_diff import ConsolidationPreview
    from charmemory.services.memory_manager import Changed


CharacterArg = Annotated[str, typer.Argument(help="Character name or card file name.")]
MemoryIdArg = Annotated[str, typer.Argument(help="The memory's id (see `memories show`).")]
ChatOption = Annotated[
    str | None,
    typer.Option("--chat", help="The chat, for characters with per-chat memory files."),
]


def _warn(warnings: tuple[str, ...] | list[str]) -> None:
    for warning in warnings:
        typer.secho(f"warning: {warning}", err=True, fg=typer.colors.YELLOW)


def _report(changed: Changed, what: str) -> None:
    version = f" (v{changed.version})" if changed.version is not None else ""
    typer.echo(f"{what} in {changed.file}{version}")
    for memory_id in changed.ids:
        typer.echo(f"  {memory_id}")
    _warn(changed.warnings)


# -- memories edit | delete | add ---------------------------------------------------------


@memories_app.command("edit")
def memories_edit(
    character: CharacterArg,
    memory_id: MemoryIdArg,
    text: Annotated[str, typer.Argument(help="The memory's new text.")],
    chat: ChatOption = None,
) -> None:
    """Rewrite one memory (it gets a new id, printed)."""
    changed = run_async(state.app().memories.edit(character, memory_id, text, chat=chat))
    _report(changed, "edited")


@memories_app.command("delete")
def memories_delete(
    character: CharacterArg, memory_id: MemoryIdArg, chat: ChatOption = None
) -> None:
    """Delete one memory; a block left with no memories and no notes goes (`undo` undoes it)."""
    changed = run_async(state.app().memories.delete(character, memory_id, chat=chat))
    _report(changed, "deleted")


@memories_app.command("add")
def memories_add(
    character: CharacterArg,
    text: Annotated[str, typer.Argument(help="One memory per line.")],
    block_chat: Annotated[
        str, typer.Option("--block-chat", help="The new block's chat attribute.")
    ] = MANUAL_CHAT,
    date: Annotated[str | None, typer.Option(help="The new block's date (default: now).")] = None,
    chat: ChatOption = None,
) -> None:
    """Add a block of memories written by hand."""
    lines = [line.strip().removeprefix("- ").strip() for line in text.splitlines()]
    manager = state.app().memories
    changed = run_async(manager.add(character, lines, block_chat=block_chat, date=date, chat=chat))
    _report(changed, f"added {len(changed.ids)} memor{'y' if len(changed.ids) == 1 else 'ies'}")


# -- consolidate ----------------------------------------------------------------------------


@app.command()
def consolidate(
    character: CharacterArg,
    strategy: Annotated[
        str, typer.Option(help=f"How boldly to merge: {', '.join(STRATEGIES)}.")
    ] = CONSERVATIVE,
    blocks: Annotated[
        str | None, typer.Option(help="Only these blocks, by index: 0,2,5-7.")
    ] = None,
    from_chat: Annotated[
        list[str] | None,
        typer.Option("--from-chat", help="Only blocks from this chat id (repeat)."),
    ] = None,
    chat: ChatOption = None,
    context_tokens: Annotated[
        int | None,
        typer.Option("--context-tokens", help="Tokens one call may use (prompt and answer)."),
    ] = None,
    preview: Annotated[
        bool, typer.Option("--preview", help="Ask the model, show the changes, write nothing.")
    ] = False,
    apply: Annotated[
        int | None, typer.Option("--apply", help="Write the preview with this id.")
    ] = None,
    provider: Annotated[str | None, typer.Option("--provider", "-p", help="Provider.")] = None,
    model: Annotated[str | None, typer.Option("--model", "-m", help="Model id.")] = None,
) -> None:
    """Merge duplicate and related memories: --preview first, then --apply PREVIEW_ID."""
    if preview and apply is not None:
        raise ConfigError("--preview and --apply go in separate runs: preview first, then apply")
    overrides = {k: v for k, v in {"provider": provider, "model": model}.items() if v}
    service = state.app(overrides).consolidation
    if apply is not None:
        applied = run_async(service.apply(apply, character_name=character))
        shown = applied.preview
        version = f" (v{applied.version})" if applied.version is not None else ""
        typer.echo(f"applied preview {shown.id} to {shown.file}{version}")
        typer.echo(f"undo it with: charmemory undo {_quoted(shown.character)}")
        _warn(applied.warnings)
        return
    made = run_async(
        service.preview(
            character,
            strategy=strategy,
            blocks=parse_block_indices(blocks) if blocks else None,
            chats=from_chat,
            chat=chat,
            context_tokens=context_tokens,
        )
    )
    _print_preview(made)


def _print_preview(preview: ConsolidationPreview) -> None:
    diff = preview.diff
    calls = f"{preview.calls} call{'s' if preview.calls != 1 else ''}"
    typer.echo(f"preview {preview.id}: {preview.file}, {preview.strategy}, {calls}")
    typer.echo(
        f"  {diff.bullets_before} memories in {diff.blocks_before} blocks -> "
        f"{diff.bullets_after} memories in {diff.blocks_after} blocks "
        f"({len(diff.kept)} kept, {len(diff.removed)} removed, {len(diff.added)} added)"
    )
    if diff.replaced:
        replaced = ", ".join(str(index) for index in diff.replaced)
        typer.echo(f"  blocks {replaced} replaced as a whole (the answer named no sources)")
    for merged in diff.merged:
        sources = ", ".join(str(index) for index in merged.sources)
        typer.echo(f"  blocks {sources} merged into one of {len(merged.bullets)} memories")
    # Marked by their first character, as in a unified diff, so piped output reads too.
    for text in diff.removed:
        typer.secho(f"- {text}", fg=typer.colors.RED)
    for text in diff.added:
        typer.secho(f"+ {text}", fg=typer.colors.GREEN)
    for text in diff.kept:
        typer.echo(f"  {text}")
    for note in diff.notes:
        typer.echo(f"  (note, kept as typed) {note}")
    _warn(preview.warnings)
    if diff.changes_nothing:
        typer.echo("nothing would change")
        return
    typer.echo(
        f"apply it with: charmemory consolidate {_quoted(preview.character)} --apply {preview.id}"
    )


def _quoted(name: str) -> str:
    return f'"{name}"' if any(c.isspace() for c in name) else name


# -- history | diff | undo ----------------------------------------------------------------


@app.command()
def history(character: CharacterArg, chat: ChatOption = None) -> None:
    """Every version of the character's memory file, oldest first."""
    shown = state.app().history.history(character, chat=chat)
    typer.echo(shown.file)
    if not shown.versions:
        typer.echo("  no versions yet")
    for version in shown.versions:
        size = "(no file)" if version.deleted else f"{version.size} bytes"
        detail = f"  {version.detail}" if version.detail else ""
        typer.echo(f"  v{version.number:<4} {version.at}  {version.cause:<13} {size}{detail}")


@app.command()
def diff(
    character: CharacterArg,
    old: Annotated[int, typer.Argument(help="The older version.")],
    new: Annotated[int | None, typer.Argument(help="The newer version (default: latest).")] = None,
    chat: ChatOption = None,
) -> None:
    """The changes between two versions of the memory file, as a unified diff."""
    text = state.app().history.diff(character, old, new, chat=chat)
    typer.echo(text.rstrip("\n") if text else "no differences")


@app.command()
def undo(
    character: CharacterArg,
    to: Annotated[int | None, typer.Option("--to", help="Restore this version.")] = None,
    chat: ChatOption = None,
) -> None:
    """Restore the previous version of the memory file (undo again to go further back)."""
    undone = run_async(state.app().history.undo(character, to=to, chat=chat))
    typer.echo(
        f"{undone.file}: restored v{undone.restored.number} ({undone.restored.cause}) "
        f"as v{undone.recorded.number}"
    )
    for line in undone.progress:
        typer.echo(f"  {line}")
    _warn(undone.warnings)
