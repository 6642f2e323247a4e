"""`charmemory settings`: extraction settings for the workspace or one character."""

from __future__ import annotations

from dataclasses import asdict
from typing import Annotated, Any

import typer

from charmemory.adapters.library import Library
from charmemory.adapters.settings_store import WORKSPACE, SettingsStore, character_scope
from charmemory.cli.application import app, state
from charmemory.core.extraction_settings import (
    KEY_PREFIX,
    SPECS,
    merge_settings,
    parse_setting_text,
    validate_setting,
)

settings_app = typer.Typer(
    help="Extraction settings (workspace-wide, or per character with --character).",
    no_args_is_help=True,
)
app.add_typer(settings_app, name="settings")

CharacterOption = Annotated[
    str | None, typer.Option("--character", "-c", help="Set or show one character's override.")
]


def _scope(character: str | None) -> str:
    if character is None:
        return WORKSPACE
    return character_scope(Library(state.workspace()).character(character).name)


def _key(name: str) -> str:
    return name if name.startswith(KEY_PREFIX) else KEY_PREFIX + name


@settings_app.command("show")
def show(character: CharacterOption = None) -> None:
    """The settings in force, and where each value comes from."""
    store = SettingsStore(state.workspace().db)
    workspace = store.all()
    own = store.all(scope=_scope(character)) if character else {}
    in_force = asdict(merge_settings(workspace, own))
    for name, spec in SPECS.items():
        key = KEY_PREFIX + name
        origin = "character" if key in own else "workspace" if key in workspace else "default"
        typer.echo(f"{name:<26} {_shown(in_force[name]):<8} {origin:<9} {spec.label}")


def _shown(value: Any) -> str:
    if isinstance(value, bool):
        return "on" if value else "off"
    return "-" if value is None else str(value)


@settings_app.command("set")
def set_value(
    name: Annotated[str, typer.Argument(help=f"One of: {', '.join(SPECS)}.")],
    value: Annotated[str, typer.Argument(help="A whole number, on/off, or a file name.")],
    character: CharacterOption = None,
) -> None:
    """Change one extraction setting (checked against its allowed range)."""
    key = _key(name)
    checked = validate_setting(
        key, parse_setting_text(key, value), per_character=character is not None
    )
    SettingsStore(state.workspace().db).set(key, checked, scope=_scope(character))
    typer.echo(f"{key} = {_shown(checked)}" + (f" for {character}" if character else ""))


@settings_app.command("unset")
def unset(
    name: Annotated[str, typer.Argument(help="The setting to go back to its inherited value.")],
    character: CharacterOption = None,
) -> None:
    """Forget a value: a character's falls back to the workspace's, that one to the default."""
    key = _key(name)
    validate_setting(key, None, per_character=character is not None)
    SettingsStore(state.workspace().db).delete(key, scope=_scope(character))
    typer.echo(f"{key} unset" + (f" for {character}" if character else ""))
