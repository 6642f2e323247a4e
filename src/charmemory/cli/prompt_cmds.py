"""`charmemory prompt`: show, replace or restore the extraction and consolidation prompts."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from charmemory.cli.application import app, state
from charmemory.composition import read_text_file
from charmemory.core.consolidation_prompt import CONSERVATIVE, STRATEGIES
from charmemory.errors import NotFoundError
from charmemory.services.prompts import KINDS, PromptKind

prompt_app = typer.Typer(
    help="The extraction and consolidation prompts (editable, with restore default).",
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


def _kind(text: str) -> PromptKind:
    for kind in KINDS:
        if text == kind:
            return kind
    raise NotFoundError(f"unknown prompt {text!r}; prompts: {', '.join(KINDS)}")


@prompt_app.command("show")
def show(
    kind: KindArg = "extraction",
    strategy: StrategyOption = CONSERVATIVE,
    default: Annotated[bool, typer.Option("--default", help="Show the built-in prompt.")] = False,
) -> None:
    """Print the prompt in force (or the built-in default)."""
    prompts = state.app().prompts
    chosen = _kind(kind)
    text = prompts.default(chosen, strategy) if default else prompts.text(chosen, strategy)
    typer.echo(text, nl=False)


@prompt_app.command("set")
def set_prompt(
    kind: KindArg,
    file: Annotated[Path, typer.Argument(help="A text file holding the new prompt.")],
    strategy: StrategyOption = CONSERVATIVE,
) -> None:
    """Use the prompt in FILE (extraction placeholders: {{char}}, {{recentMessages}} ...)."""
    chosen = _kind(kind)
    warnings = state.app().prompts.replace(chosen, read_text_file(file), strategy)
    for warning in warnings:
        typer.secho(f"warning: {warning}", fg=typer.colors.YELLOW, err=True)
    typer.echo(f"{kind} prompt saved; `charmemory prompt reset {kind}` restores the default")


@prompt_app.command("reset")
def reset(kind: KindArg = "extraction", strategy: StrategyOption = CONSERVATIVE) -> None:
    """Restore the built-in prompt."""
    state.app().prompts.reset(_kind(kind), strategy)
    typer.echo(f"{kind} prompt restored to the default")
