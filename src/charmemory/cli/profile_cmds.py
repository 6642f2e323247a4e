"""`charmemory profiles`: the named ways scene memories are written."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer

from charmemory.cli.application import app, state
from charmemory.core.books.profiles import Profile

profiles_app = typer.Typer(
    help="Scene memory profiles: model, preset, entry settings, title format.",
    no_args_is_help=True,
)
app.add_typer(profiles_app, name="profiles")

NameArg = Annotated[str, typer.Argument(help="The profile's name.")]


def profile_lines(profile: Profile, default: bool) -> list[str]:
    connection = profile.connection
    model = (
        "the chat's own model"
        if connection is None
        else f"{connection.provider} {connection.model}".strip()
        + ("" if connection.temperature is None else f", temperature {connection.temperature:g}")
    )
    entry = profile.entry
    return [
        f"{profile.name}{' (default)' if default else ''}",
        f"  model: {model}",
        f"  preset: {profile.preset}"
        + (
            f"; separate prompts: {profile.group_preset} / {profile.character_preset}"
            if profile.separate_prompts
            else ""
        ),
        f"  title format: {profile.title_format}",
        f"  entries: {entry.mode}, position {entry.position}"
        + (f" ({entry.outlet_name})" if entry.outlet_name else "")
        + f", order {entry.order_mode}"
        + (f" {entry.order_value}" if entry.order_mode == "manual" else "")
        + (f" from {entry.reverse_start}" if entry.order_mode == "reverse" else "")
        + f", prevent recursion {'on' if entry.prevent_recursion else 'off'}"
        + f", delay until recursion {entry.delay_until_recursion or 'off'}"
        + f", ignore budget {'on' if entry.ignore_budget else 'off'}",
    ]


@profiles_app.command("list")
def profiles_list() -> None:
    """Every profile; the default is marked."""
    for profile, default in state.app().book_profiles.all():
        typer.echo(profile.name + (" (default)" if default else ""))


@profiles_app.command("show")
def profiles_show(
    name: Annotated[str | None, typer.Argument(help="The profile (default: the default).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="As STMB names the fields.")] = False,
) -> None:
    """One profile's settings."""
    profiles = state.app().book_profiles
    profile = profiles.get(name)
    if as_json:
        typer.echo(json.dumps(profile.to_dict(), ensure_ascii=False, indent=2))
        return
    for line in profile_lines(profile, profile.name == profiles.default().name):
        typer.echo(line)


@profiles_app.command("set")
def profiles_set(
    name: NameArg,
    preset: Annotated[str | None, typer.Option(help="summary, synopsis, minimal ...")] = None,
    title_format: Annotated[str | None, typer.Option(help="e.g. '[000] - {{title}}'.")] = None,
    provider: Annotated[
        str | None, typer.Option(help="A provider (empty: the chat's own model).")
    ] = None,
    model: Annotated[str | None, typer.Option(help="The provider's model.")] = None,
    temperature: Annotated[float | None, typer.Option(help="Sampling temperature.")] = None,
    mode: Annotated[str | None, typer.Option(help="link (vectorized), blue, green.")] = None,
    position: Annotated[int | None, typer.Option(help="0-3, 5-7 (not 4, @depth).")] = None,
    outlet_name: Annotated[str | None, typer.Option(help="The outlet (position 7).")] = None,
    order_mode: Annotated[str | None, typer.Option(help="auto, manual, reverse.")] = None,
    order_value: Annotated[int | None, typer.Option(help="The order in manual mode.")] = None,
    reverse_start: Annotated[int | None, typer.Option(help="Reverse mode's start.")] = None,
    prevent_recursion: Annotated[bool | None, typer.Option(help="Prevent recursion.")] = None,
    delay_until_recursion: Annotated[
        int | None, typer.Option(help="Recursion level to wait for (0: off).")
    ] = None,
    ignore_budget: Annotated[bool | None, typer.Option(help="Ignore the budget.")] = None,
    separate_prompts: Annotated[
        bool | None, typer.Option(help="Group and character prompts in multi-book chats.")
    ] = None,
    group_preset: Annotated[str | None, typer.Option(help="The canonical entry's preset.")] = None,
    character_preset: Annotated[str | None, typer.Option(help="The copies' preset.")] = None,
    default: Annotated[bool, typer.Option("--default", help="Make it the default.")] = False,
) -> None:
    """Create a profile or change some of its settings."""
    given: dict[str, Any] = {
        "preset": preset,
        "title_format": title_format,
        "provider": provider,
        "model": model,
        "temperature": temperature,
        "mode": mode,
        "position": position,
        "outlet_name": outlet_name,
        "order_mode": order_mode,
        "order_value": order_value,
        "reverse_start": reverse_start,
        "prevent_recursion": prevent_recursion,
        "ignore_budget": ignore_budget,
        "separate_prompts": separate_prompts,
        "group_preset": group_preset,
        "character_preset": character_preset,
    }
    changes = {key: value for key, value in given.items() if value is not None}
    if delay_until_recursion is not None:
        changes["delay_until_recursion"] = delay_until_recursion or False
    profiles = state.app().book_profiles
    profile = profiles.set(name, changes, make_default=default)
    for line in profile_lines(profile, profile.name == profiles.default().name):
        typer.echo(line)


@profiles_app.command("delete")
def profiles_delete(name: NameArg) -> None:
    """Delete a profile."""
    state.app().book_profiles.delete(name)
    typer.echo(f"profile {name} deleted")
