"""A command's start-up and `memories show` of 100,000 memories, before and after, in one run.

Every row is a new `charmemory` process, as a person runs it, so Python's start and
the imports are in each time: importing the command line alone, `characters`
(start-up plus opening a workspace) and `memories show` (with `--json` and without)
of a file holding 100,000 memories in 10,000 blocks (target: under 1 s), both the
first listing after the file changed (each run finds one memory edited, so the file
is recorded in its history, read and listed again) and a listing of a file unchanged
since the last one (its kept listing is read).

The code as it is and the code of `--baseline REV` are measured in the same run on
workspaces built the same way, their runs taken in turn so a change in the machine's
load falls on both alike. Each tree is a copy of `src/` with its bytecode compiled
first, as an installed package has it (a run that compiles every module measures
the compiler). The number compared is the CPU time (user + system) of the process,
the best of `--repeat` runs: on a shared machine the wall clock mostly measures the
others (it is given too, also the best of the runs). Run:
`python bench/startup.py [--baseline REV] [--dry-run]`; writes the `## Start-up` section
of bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.results import write_section
from bench.sample_chat import CHARACTER
from bench.scale import BLOCKS, BULLETS_PER_BLOCK, CLI, export_tree

ROOT = Path(__file__).resolve().parents[1]
TITLE = "Start-up"
BUILD = (
    "import sys; from pathlib import Path; from bench.scale import build_listing_workspace; "
    "build_listing_workspace(Path(sys.argv[1]))"
)

WHERE_THE_TIME_GOES = (
    "Where the time goes: a command's start is mostly Python, typer (which loads pydantic "
    "to convert the options given), the modules of the command run (`import "
    "charmemory.cli` loads none: `cli/command_modules.py` says which module registers "
    "which command) and of the parts it builds. The first listing after a change records "
    "the new version in the file's history, reads the listing from the file's text (only "
    "tag lines are looked for; bodies of plain bullets are split whole), hashes each "
    "memory's id (the largest part left) and keeps the listing; a later listing of the "
    "same bytes reads the kept one. Printing 100,000 memories builds their values and "
    "their text with the cycle collector paused."
)


@dataclass(frozen=True)
class Tree:
    """One version of the code: a compiled copy of its `src/` and a workspace it built."""

    label: str
    src: Path
    workspace: Path

    def env(self) -> dict[str, str]:
        env = {**os.environ, "PYTHONPATH": f"{self.src}{os.pathsep}{ROOT}"}
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        return env

    @property
    def memory_file(self) -> Path:
        return self.workspace / "user" / "files" / f"{CHARACTER}-memories.md"


@dataclass(frozen=True)
class Command:
    label: str
    arguments: list[str]  # Python's; WS stands for the tree's workspace
    changed: bool = False  # the memory file is edited before each run: a first listing


EDITED = re.compile(r"^Edited \d+: ")
MEMORIES = f"{BLOCKS * BULLETS_PER_BLOCK:,} memories"
SHOW = ["-c", CLI, "-w", "WS", "memories", "show", CHARACTER]
COMMANDS = (
    Command("`import charmemory.cli`", ["-c", "import charmemory.cli"]),
    Command("`charmemory characters`", ["-c", CLI, "-w", "WS", "characters"]),
    Command(f"`memories show --json`, {MEMORIES}, first after a change", [*SHOW, "--json"], True),
    Command(f"`memories show --json`, {MEMORIES}, unchanged", [*SHOW, "--json"]),
    Command(f"`memories show`, {MEMORIES}, first after a change", SHOW, True),
    Command(f"`memories show`, {MEMORIES}, unchanged", SHOW),
)


def prepare(label: str, src: Path, into: Path) -> Tree:
    """Copy and compile `src`, and build the listing workspace with that code."""
    copy = into / "src"
    shutil.copytree(src, copy, ignore=shutil.ignore_patterns("__pycache__"))
    tree = Tree(label, copy, into / "workspace")
    run = [sys.executable, "-m", "compileall", "-q", str(copy)]
    subprocess.run(run, env=tree.env(), check=True, capture_output=True)
    build = [sys.executable, "-c", BUILD, str(tree.workspace)]
    subprocess.run(build, env=tree.env(), check=True, capture_output=True)
    # The first sight of the memory file records it in the history and keeps its listing:
    # not part of listing an unchanged file.
    seconds(tree, COMMANDS[-1].arguments)
    return tree


def edit_memory_file(tree: Tree, edit: int) -> None:
    """Edit the file's last memory (the same way in every tree), so its bytes are new."""
    text = tree.memory_file.read_text(encoding="utf-8")
    last = text.rindex("\n- ") + 3
    end = text.index("\n", last)
    memory = EDITED.sub("", text[last:end])
    tree.memory_file.write_text(f"{text[:last]}Edited {edit}: {memory}{text[end:]}", "utf-8")


def seconds(tree: Tree, arguments: list[str]) -> tuple[float, float]:
    """User + system CPU seconds, and wall-clock seconds, of one process running `arguments`."""
    command = [sys.executable, *(str(tree.workspace) if a == "WS" else a for a in arguments)]
    before = _children_cpu()
    started = time.perf_counter()
    subprocess.run(command, env=tree.env(), check=True, stdout=subprocess.DEVNULL)
    return _children_cpu() - before, time.perf_counter() - started


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


# Per tree, per command: the best (CPU seconds, wall-clock seconds) of the runs.
Best = dict[str, list[tuple[float, float]]]


def measure(trees: list[Tree], repeat: int) -> Best:
    """The best times of each command for each tree, the trees' runs in turn."""
    best = {tree.label: [(float("inf"), float("inf"))] * len(COMMANDS) for tree in trees}
    for run in range(repeat):
        for row, command in enumerate(COMMANDS):
            for tree in trees:
                if command.changed:
                    edit_memory_file(tree, run * len(COMMANDS) + row)
                cpu, wall = seconds(tree, command.arguments)
                kept = best[tree.label][row]
                best[tree.label][row] = (min(kept[0], cpu), min(kept[1], wall))
    return best


def report_lines(best: Best, baseline: str | None, repeat: int) -> list[str]:
    load = os.getloadavg()[0]
    lines = [
        f"CPU seconds (user + system) of one process, and its wall-clock seconds in brackets, "
        f"each the best of {repeat} runs on {os.cpu_count()} cores shared with other work "
        f"(load average {load:.1f} at the end); bytecode compiled beforehand.",
        "",
    ]

    def cell(times: tuple[float, float]) -> str:
        return f"{times[0]:.2f} s ({times[1]:.2f} s)"

    now = best["now"]
    if baseline is None:
        lines += ["| command | now |", "| --- | ---: |"]
        lines += [f"| {c.label} | {cell(now[i])} |" for i, c in enumerate(COMMANDS)]
        return [*lines, "", WHERE_THE_TIME_GOES]
    before = best[baseline]
    lines += [
        f"| command | baseline {baseline} | now | now / baseline (CPU) |",
        "| --- | ---: | ---: | ---: |",
    ]
    for i, command in enumerate(COMMANDS):
        ratio = now[i][0] / before[i][0]
        lines.append(f"| {command.label} | {cell(before[i])} | {cell(now[i])} | {ratio:.2f} |")
    return [*lines, "", WHERE_THE_TIME_GOES]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", help="a commit to measure the same way, for comparison")
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--dry-run", action="store_true", help="print instead of writing")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        trees = [prepare("now", ROOT / "src", Path(tmp) / "now")]
        if args.baseline:
            old = export_tree(args.baseline, Path(tmp) / "exported")
            trees.append(prepare(args.baseline, old, Path(tmp) / "baseline"))
        best = measure(trees, args.repeat)
    lines = report_lines(best, args.baseline, args.repeat)
    print("\n".join(lines))
    if not args.dry_run:
        write_section(TITLE, lines)


if __name__ == "__main__":
    main()
