"""`charmemory settings`: the registry's settings, per workspace, character or provider."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from charmemory.cli.application import app, state
from charmemory.core.settings.registry import GROUPS
from charmemory.core.settings.spec import shown

if TYPE_CHECKING:
    from charmemory.services.settings import Stored


settings_app = typer.Typer(
    help=(
        "Settings by name (extraction.*, retrieval.*, model.*, consolidation.*), for the "
        "workspace, one character (--character) or one LLM provider (--provider)."
    ),
    no_args_is_help=True,
)
app.add_typer(settings_app, name="settings")

CharacterOption = Annotated[
    str | None, typer.Option("--character", "-c", help="One character's own value.")
]
ProviderOption = Annotated[
    str | None,
    typer.Option("--provider", "-p", help="One provider's value (model, base_url ...)."),
]
NameArg = Annotated[str, typer.Argument(help="A setting, e.g. extraction.interval.")]


@settings_app.command("show")
def show(
    prefix: Annotated[
        str | None, typer.Argument(help=f"Only one group: {', '.join(GROUPS)}.")
    ] = None,
    character: CharacterOption = None,
    provider: ProviderOption = None,
) -> None:
    """The settings in force, where each value comes from, and the values each allows."""
    rows = state.app().settings.show(prefix, character=character, provider=provider)
    width = max(len(row.setting.name) for row in rows)
    values = [_clipped(shown(row.value)) for row in rows]
    value_width = min(max(len(value) for value in values), 32)
    group = None
    for row, value in zip(rows, values, strict=True):
        if row.setting.group != group and prefix is None:
            if group is not None:
                typer.echo("")
            group = row.setting.group
        typer.echo(
            f"{row.setting.name:<{width}}  {value:<{value_width}}  {row.origin:<20}  "
            f"{row.setting.allowed:<24}  {row.setting.help}"
        )


def _clipped(text: str) -> str:
    text = text.replace("\n", "\\n")
    return text if len(text) <= 48 else text[:47] + "…"


@settings_app.command("set")
def set_value(
    name: NameArg,
    value: Annotated[
        str, typer.Argument(help="The value: a number, on/off, a choice, text or JSON.")
    ],
    character: CharacterOption = None,
    provider: ProviderOption = None,
) -> None:
    """Change one setting (checked against its kind and allowed values first)."""
    stored = state.app().settings.set(name, value, character=character, provider=provider)
    _report(stored)


@settings_app.command("unset")
def unset(
    name: NameArg, character: CharacterOption = None, provider: ProviderOption = None
) -> None:
    """Forget a value: a character's falls back to the workspace's, that one to the default."""
    _report(state.app().settings.unset(name, character=character, provider=provider))


def _report(stored: Stored) -> None:
    if stored.value is None:
        typer.echo(f"{stored.name} unset for {stored.scope}")
    else:
        typer.echo(f"{stored.name} = {shown(stored.value)} for {stored.scope}")
