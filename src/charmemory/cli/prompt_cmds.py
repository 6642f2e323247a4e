"""`charmemory prompt`: show, replace or restore the extraction, consolidation and scene prompts."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from charmemory.cli.application import app, state
from charmemory.composition import read_text_file
from charmemory.core.books.presets import SUMMARY, preset_names
from charmemory.core.consolidation_prompt import CONSERVATIVE, STRATEGIES
from charmemory.errors import NotFoundError
from charmemory.services.prompts import KINDS, PromptKind

prompt_app = typer.Typer(
    help="The extraction, consolidation and scene memory prompts (editable, restorable).",
    no_args_is_help=True,
)
app.add_typer(prompt_app, name="prompt")

KindArg = Annotated[
    str, typer.Argument(help=f"Which prompt: {', '.join(KINDS)}.", show_default=True)
]
StrategyOption = Annotated[
    str,
    typer.Option(help=f"The consolidation strategy: {', '.join(STRATEGIES)}."),
]
PresetOption = Annotated[
    str, typer.Option(help=f"The scene memory preset: {', '.join(preset_names())}.")
]


def _kind(text: str) -> PromptKind:
    for kind in KINDS:
        if text == kind:
            return kind
    raise NotFoundError(f"unknown prompt {text!r}; prompts: {', '.join(KINDS)}")


def _variant(kind: PromptKind, strategy: str, preset: str) -> str:
    return preset if kind == "scene" else strategy


@prompt_app.command("show")
def show(
    kind: KindArg = "extraction",
    strategy: StrategyOption = CONSERVATIVE,
    preset: PresetOption = SUMMARY,
    default: Annotated[bool, typer.Option("--default", help="Show the built-in prompt.")] = False,
) -> None:
    """Print the prompt in force (or the built-in default)."""
    prompts = state.app().prompts
    chosen = _kind(kind)
    variant = _variant(chosen, strategy, preset)
    text = prompts.default(chosen, variant) if default else prompts.text(chosen, variant)
    typer.echo(text, nl=False)


@prompt_app.command("set")
def set_prompt(
    kind: KindArg,
    file: Annotated[Path, typer.Argument(help="A text file holding the new prompt.")],
    strategy: StrategyOption = CONSERVATIVE,
    preset: PresetOption = SUMMARY,
) -> None:
    """Use the prompt in FILE (extraction placeholders: {{char}}, {{recentMessages}} ...)."""
    chosen = _kind(kind)
    text = read_text_file(file)
    warnings = state.app().prompts.replace(chosen, text, _variant(chosen, strategy, preset))
    for warning in warnings:
        typer.secho(f"warning: {warning}", fg=typer.colors.YELLOW, err=True)
    typer.echo(f"{kind} prompt saved; `charmemory prompt reset {kind}` restores the default")


@prompt_app.command("reset")
def reset(
    kind: KindArg = "extraction",
    strategy: StrategyOption = CONSERVATIVE,
    preset: PresetOption = SUMMARY,
) -> None:
    """Restore the built-in prompt."""
    chosen = _kind(kind)
    state.app().prompts.reset(chosen, _variant(chosen, strategy, preset))
    typer.echo(f"{kind} prompt restored to the default")
