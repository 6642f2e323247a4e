"""A command imports only the modules that register it, and the table saying which
module registers which command is whole: every command of every module, no other."""

import json
import os
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest
import typer

import charmemory.cli
from charmemory.cli.application import app, command_named
from charmemory.cli.command_modules import COMMANDS, load_commands, modules_of
from tests.support.extraction_fixtures import CHARACTER, make_workspace, memory_block

CLI = Path(charmemory.cli.__file__).parent
SRC = CLI.parents[1]


def registered_by() -> dict[str, set[str]]:
    """Each top-level command or group, with the modules whose functions it runs."""
    modules: dict[str, set[str]] = defaultdict(set)

    def module_of(function: object) -> str:
        return getattr(function, "__module__", "").rpartition(".")[2]

    def walk(group: typer.Typer, into: set[str]) -> None:
        into.update(module_of(command.callback) for command in group.registered_commands)
        for sub in group.registered_groups:
            walk(sub.typer_instance, into)

    for command in app.registered_commands:
        name = command.name or command.callback.__name__.lower().replace("_", "-")
        modules[name].add(module_of(command.callback))
    for sub in app.registered_groups:
        walk(sub.typer_instance, modules[sub.name or sub.typer_instance.info.name])
    return modules


def test_the_table_names_every_module_and_what_each_registers() -> None:
    assert set(COMMANDS) == {path.stem for path in CLI.glob("*_cmds.py")}
    load_commands(None)

    table: dict[str, set[str]] = defaultdict(set)
    for module, names in COMMANDS.items():
        for name in names:
            table[name].add(module)
    assert table == registered_by()


@pytest.mark.parametrize(
    ("args", "command"),
    [
        (["memories", "show", "Mira"], "memories"),
        (["-w", "ws", "memories", "show"], "memories"),
        (["--workspace", "ws", "--allow-write", "chat", "Mira"], "chat"),
        (["--workspace=ws", "import", "card.png"], "import"),
        (["--help"], None),
        (["-w", "ws", "--help", "memories"], None),
        ([], None),
    ],
)
def test_the_command_named_follows_the_global_options(args: list[str], command: str | None) -> None:
    assert command_named(args) == command


def test_an_unknown_or_missing_command_loads_every_module() -> None:
    assert modules_of(None) == modules_of("no-such-command") == list(COMMANDS)
    assert modules_of("memories") == ["memory_cmds", "workspace_cmds"]


# Runs the command line, then says which command modules it imported.
PROBE = """
import json, sys
from charmemory.cli import main
try:
    main()
finally:
    loaded = sorted(m.rpartition(".")[2] for m in sys.modules if m.endswith("_cmds"))
    print(json.dumps(loaded))
"""


def probe(*args: str) -> tuple[list[str], str]:
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *args], env=env, capture_output=True, text=True, check=False
    )
    *printed, last = done.stdout.strip().splitlines()
    return json.loads(last), "\n".join(printed)


def test_a_command_imports_only_its_own_modules(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path / "ws")
    (ws.files_dir / f"{CHARACTER}-memories.md").write_text(memory_block("Mira sails."))
    ws.close()

    loaded, printed = probe("memories", "show", CHARACTER, "-w", str(ws.root))
    assert loaded == ["memory_cmds", "workspace_cmds"]
    assert "Mira sails." in printed


def test_help_and_a_typo_still_see_every_command() -> None:
    loaded, printed = probe("--help")
    assert loaded == sorted(COMMANDS)
    assert all(name in printed for names in COMMANDS.values() for name in names)
    assert probe("memoirs")[0] == sorted(COMMANDS)
