"""Commands for LLM providers: presets, settings, API keys, model listing, a test request."""

from __future__ import annotations

import asyncio
import sys
from typing import TYPE_CHECKING, Annotated

import typer

from charmemory.cli.application import app, state
from charmemory.core.providers import EMBEDDED, NANOGPT_FILTERS, PRESETS, preset_named
from charmemory.errors import ConfigError

if TYPE_CHECKING:
    from charmemory.ports import ModelInfo
    from charmemory.services.providers import ModelTest


KEY_STATUS = {
    "secrets file": "key set",
    "env": "key from CHARMEMORY_API_KEY",
    "missing": "no key",
    "not needed": "no key needed",
}
EXIT_WARNING = 1
EXIT_ERROR = 2


ProviderOption = Annotated[
    str | None,
    typer.Option(
        "--provider",
        "-p",
        help=f"Provider preset: {', '.join(PRESETS)} (default: the configured one).",
        show_default=False,
    ),
]
ModelOption = Annotated[
    str | None, typer.Option("--model", "-m", help="Model id.", show_default=False)
]
BaseUrlOption = Annotated[
    str | None, typer.Option("--base-url", help="API base URL.", show_default=False)
]


@app.command()
def providers() -> None:
    """List the provider presets, their base URLs and whether an API key is set."""
    rows = state.app().providers.presets()
    width = max(len(row.name) for row in rows)
    for row in rows:
        mark = "*" if row.current else " "
        where = row.base_url or (
            "(runs inside charmemory)" if row.name == EMBEDDED else "(you give the URL)"
        )
        key = KEY_STATUS[row.key]
        typer.echo(f"{mark} {row.name:<{width}}  {where:<40}  {key}")


@app.command()
def models(
    provider: ProviderOption = None,
    base_url: BaseUrlOption = None,
    nanogpt_filter: Annotated[
        list[str] | None,
        typer.Option(
            "--nanogpt-filter",
            help=f"NanoGPT only: {', '.join(NANOGPT_FILTERS)}; repeat to combine (all must match).",
            show_default=False,
        ),
    ] = None,
) -> None:
    """List the models a provider offers, sorted (NanoGPT's grouped by upstream provider)."""
    listing = asyncio.run(
        state.app().providers.list_models(
            {"provider": provider, "base_url": base_url}, filters=nanogpt_filter or ()
        )
    )
    if not listing.models:
        typer.echo(f"{listing.provider} lists no models", err=True)
        return
    for group, members in listing.groups or [("", listing.models)]:
        if group:
            typer.echo(f"{group}:")
        for model in members:
            typer.echo(("  " if group else "") + _model_line(model))


def _model_line(model: ModelInfo) -> str:
    name = model.extra.get("name")
    return f"{model.id}  ({name})" if isinstance(name, str) and name != model.id else model.id


@app.command("test-model")
def test_model(
    provider: ProviderOption = None,
    model: ModelOption = None,
    base_url: BaseUrlOption = None,
    max_tokens: Annotated[
        int | None,
        typer.Option(
            "--max-tokens",
            help="Response budget (default: extraction.max_response_tokens).",
            show_default=False,
            min=1,
        ),
    ] = None,
) -> None:
    """Send a tiny request with a known answer and say how the model did.

    Exit code 0: answered as asked; 1: answered but did not follow the
    instruction; 2: the request failed (the reason is printed).
    """
    overrides = {"provider": provider, "model": model, "base_url": base_url}
    result = asyncio.run(state.app().providers.test_model(overrides, max_tokens=max_tokens))
    typer.echo(_describe(result), err=result.status == "error")
    if result.status != "ok":
        raise typer.Exit(EXIT_WARNING if result.status == "warning" else EXIT_ERROR)


def _describe(result: ModelTest) -> str:
    where = f"{result.provider}/{result.model}"
    if result.status == "error":
        return f"error: {result.message}"
    usage = result.usage
    tokens = (
        f"; tokens {usage.prompt_tokens} in, {usage.completion_tokens} out"
        if usage.prompt_tokens is not None or usage.completion_tokens is not None
        else ""
    )
    details = f"{result.seconds:.1f} s; reasoning {result.reasoning_chars} chars{tokens}"
    if result.status == "ok":
        return f"ok: {where} {result.message} ({details})"
    return f"warning: {where} {result.message}; it replied {result.reply[:120]!r} ({details})"


secrets_app = typer.Typer(
    help="API keys, kept in a private file in the workspace (never in the settings).",
    no_args_is_help=True,
)
app.add_typer(secrets_app, name="secrets")

SecretProvider = Annotated[str, typer.Argument(help=f"One of: {', '.join(PRESETS)}.")]


@secrets_app.command("set")
def secrets_set(provider: SecretProvider) -> None:
    """Store a provider's API key, read from standard input or a hidden prompt."""
    service = state.app().providers
    name = preset_named(provider).name  # a typo is caught before the key is typed
    if sys.stdin.isatty():
        key = typer.prompt(f"API key for {name}", hide_input=True)
    else:
        key = sys.stdin.read()
    service.store_key(name, key)
    typer.echo(f"stored the API key for {name} (readable only by you)")


@secrets_app.command("unset")
def secrets_unset(provider: SecretProvider) -> None:
    """Forget a provider's API key."""
    if not state.app().providers.remove_key(provider):
        raise ConfigError(f"no stored API key for {provider}")
    typer.echo(f"removed the API key for {provider}")


@secrets_app.command("list")
def secrets_list() -> None:
    """Name the providers that have a key (the keys themselves are never shown)."""
    for row in state.app().providers.presets():
        if row.key in ("secrets file", "env"):
            typer.echo(f"{row.name}  ({KEY_STATUS[row.key]})")
