"""The Typer application and what every command shares: workspace selection and errors."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated

import typer

from charmemory.adapters.workspace import Workspace, workspace_dir_from_env

app = typer.Typer(
    name="charmemory",
    help="Long-term memory for role-play characters, in SillyTavern's own formats.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)

# Options every command accepts before or after its name; `main` moves them to
# the front so the top-level callback sees them.
GLOBAL_VALUE_OPTIONS = ("--workspace",)
GLOBAL_FLAGS = ("--allow-write",)


@dataclass
class CliState:
    workspace_arg: Path | None = None
    allow_write: bool = False
    _workspace: Workspace | None = field(default=None, repr=False)

    @property
    def workspace_dir(self) -> Path:
        return workspace_dir_from_env(self.workspace_arg)

    def workspace(self) -> Workspace:
        if self._workspace is None:
            self._workspace = Workspace.open(self.workspace_dir, allow_write=self.allow_write)
        return self._workspace


state = CliState()


@app.callback()
def _global_options(
    workspace: Annotated[
        Path | None,
        typer.Option(
            "--workspace",
            "-w",
            help="Workspace folder (default: $CHARMEMORY_HOME, else the per-user data folder).",
            show_default=False,
        ),
    ] = None,
    allow_write: Annotated[
        bool,
        typer.Option("--allow-write", help="Let charmemory change a SillyTavern folder it opened."),
    ] = False,
) -> None:
    state.workspace_arg = workspace
    state.allow_write = allow_write


def hoist_global_options(argv: list[str]) -> list[str]:
    """Move global options found anywhere (after `--` excepted) to the front."""
    front: list[str] = []
    rest: list[str] = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--":
            rest.extend(argv[i:])
            break
        name = arg.split("=", 1)[0]
        if name in GLOBAL_VALUE_OPTIONS or (arg == "-w"):
            if "=" in arg:
                front.append(arg)
            else:
                front.extend(argv[i : i + 2])
                i += 1
        elif arg in GLOBAL_FLAGS:
            front.append(arg)
        else:
            rest.append(arg)
        i += 1
    return front + rest


def fail(message: str, code: int = 2) -> typer.Exit:
    typer.secho(f"error: {message}", err=True, fg=typer.colors.RED)
    return typer.Exit(code)


def run(argv: list[str] | None = None) -> int:
    """Run the CLI; a user error becomes one line on stderr and exit code 2."""
    from charmemory.errors import CharMemoryError

    args = hoist_global_options(list(sys.argv[1:] if argv is None else argv))
    try:
        app(args=args, prog_name="charmemory", standalone_mode=True)
    except SystemExit as exit_:
        return int(exit_.code or 0) if not isinstance(exit_.code, str) else 1
    except CharMemoryError as error:
        typer.secho(f"error: {error}", err=True, fg=typer.colors.RED)
        return 2
    except KeyboardInterrupt:
        typer.secho("interrupted", err=True)
        return 130
    finally:
        if state._workspace is not None:
            state._workspace.close()
            state._workspace = None
    return 0
