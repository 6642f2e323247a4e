"""`charmemory prompt`: show, replace or restore the extraction prompt."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from charmemory.adapters.settings_store import SettingsStore
from charmemory.cli.application import app, state
from charmemory.core.extraction_prompt import DEFAULT_EXTRACTION_PROMPT, check_template
from charmemory.errors import NotFoundError
from charmemory.services.extraction import PROMPT_SETTING

prompt_app = typer.Typer(help="The extraction prompt (editable, with restore default).")
app.add_typer(prompt_app, name="prompt")


@prompt_app.command("show")
def show(
    default: Annotated[bool, typer.Option("--default", help="Show the built-in prompt.")] = False,
) -> None:
    """Print the extraction prompt in force (or the built-in default)."""
    custom = None if default else SettingsStore(state.workspace().db).get(PROMPT_SETTING)
    typer.echo(custom or DEFAULT_EXTRACTION_PROMPT, nl=False)


@prompt_app.command("set")
def set_prompt(
    file: Annotated[Path, typer.Argument(help="A text file holding the new prompt.")],
) -> None:
    """Use the prompt in FILE for extraction (placeholders: {{char}}, {{recentMessages}} ...)."""
    if not file.is_file():
        raise NotFoundError(f"no such file: {file}")
    template = file.read_text(encoding="utf-8")
    warnings = check_template(template)  # raises when the prompt cannot work at all
    SettingsStore(state.workspace().db).set(PROMPT_SETTING, template)
    for warning in warnings:
        typer.secho(f"warning: {warning}", fg=typer.colors.YELLOW, err=True)
    typer.echo("extraction prompt saved; `charmemory prompt reset` restores the default")


@prompt_app.command("reset")
def reset() -> None:
    """Restore the built-in extraction prompt."""
    SettingsStore(state.workspace().db).delete(PROMPT_SETTING)
    typer.echo("extraction prompt restored to the default")
