"""The Typer application and what every command shares: workspace selection and errors."""

from __future__ import annotations

import gc
import sys
from collections.abc import Coroutine, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer

from charmemory.cli.command_modules import load_commands
from charmemory.composition import (
    create_app,
    explain_failure,
    open_app,
    redact_without_workspace,
    workspace_dir,
)
from charmemory.errors import CharMemoryError

if TYPE_CHECKING:
    from charmemory.composition import App

T = TypeVar("T")


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
    _app: App | None = field(default=None, repr=False)

    @property
    def workspace_dir(self) -> Path:
        return workspace_dir(self.workspace_arg)

    def app(self, model_overrides: Mapping[str, Any] | None = None) -> App:
        """The workspace's services (one command runs per process, so built once)."""
        if self._app is None:
            self._app = open_app(
                self.workspace_dir, allow_write=self.allow_write, model_overrides=model_overrides
            )
        return self._app

    def created_app(self) -> App:
        """The workspace, made (or completed) first."""
        if self._app is None:
            self._app = create_app(self.workspace_dir)
        return self._app

    def close(self) -> None:
        if self._app is not None:
            self._app.close()
            self._app = None

    def redact(self, text: str) -> str:
        if self._app is not None:
            return self._app.redact(text)
        return redact_without_workspace(text)

    def explain(self, error: BaseException) -> CharMemoryError | None:
        return explain_failure(error, self._app)


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


def command_named(args: list[str]) -> str | None:
    """The command ``args`` (global options first, see `hoist_global_options`) runs;
    None when an option comes first (`--help` asks about every command)."""
    i = 0
    while i < len(args):
        arg = args[i]
        if arg in (*GLOBAL_VALUE_OPTIONS, "-w"):
            i += 2
        elif arg in GLOBAL_FLAGS or arg.startswith(tuple(f"{o}=" for o in GLOBAL_VALUE_OPTIONS)):
            i += 1
        else:
            return None if arg.startswith("-") else arg
    return None


def run_async(work: Coroutine[Any, Any, T]) -> T:
    """`asyncio.run(work)`, asyncio imported only when a command awaits (listing
    memories does not, and importing asyncio is a tenth of its start)."""
    import asyncio

    return asyncio.run(work)


@contextmanager
def collection_paused() -> Iterator[None]:
    """Pause the cycle collector while a command builds many values it keeps until it
    ends (a listing of 100,000 memories): every full collection would walk them all
    again, a fifth of such a command's time, and they hold no cycles to collect."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def fail(message: str, code: int = 2) -> typer.Exit:
    typer.secho(f"error: {message}", err=True, fg=typer.colors.RED)
    return typer.Exit(code)


def run(argv: list[str] | None = None) -> int:
    """Run the CLI; a user error becomes one line on stderr (never a key) and exit code 2."""
    args = hoist_global_options(list(sys.argv[1:] if argv is None else argv))
    try:
        refuse_undecodable(args)
        load_commands(command_named(args))
        app(args=args, prog_name="charmemory", standalone_mode=True)
    except SystemExit as exit_:
        return int(exit_.code or 0) if not isinstance(exit_.code, str) else 1
    except CharMemoryError as error:
        return _report(error)
    except KeyboardInterrupt:
        typer.secho("interrupted", err=True)
        return 130
    except Exception as error:
        explained = state.explain(error)
        if explained is None:
            raise
        return _report(explained)
    finally:
        state.close()
    return 0


def _report(error: CharMemoryError) -> int:
    typer.secho(f"error: {state.redact(str(error))}", err=True, fg=typer.colors.RED)
    return 2


def refuse_undecodable(args: list[str]) -> None:
    """Refuse arguments that are not UTF-8, before any command can store or send them.

    Python hands undecodable bytes over as lone surrogates (`\\udcff` for 0xff),
    which no file, database or HTTP request can take.
    """
    for arg in args:
        if any("\ud800" <= char <= "\udfff" for char in arg):
            raise CharMemoryError(
                f"the argument {_as_bytes(arg)} is not UTF-8 text; charmemory reads every "
                "argument as UTF-8"
            )


def _as_bytes(arg: str) -> str:
    try:
        raw = arg.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return ascii(arg)
    return f"'{raw.decode('utf-8', 'backslashreplace')}'"
