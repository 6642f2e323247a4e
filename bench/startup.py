"""A command's start-up and `memories show` of 100,000 memories, before and after, in one run.

Every row is a new `charmemory` process, as a person runs it, so Python's start and
the imports are in each time: importing the command line alone, `characters`
(start-up plus opening a workspace) and `memories show --json` of a file holding
100,000 memories in 10,000 blocks (target: under 1 s of CPU).

The code as it is and the code of `--baseline REV` are measured in the same run on
workspaces built the same way, their runs taken in turn so a change in the machine's
load falls on both alike. Each tree is a copy of `src/` with its bytecode compiled
first, as an installed package has it (a run that compiles every module measures
the compiler). The number compared is the CPU time (user + system) of the process,
the best of `--repeat` runs: on a shared machine the wall clock mostly measures the
others. Run: `python bench/startup.py [--baseline REV] [--dry-run]`; writes the
`## Start-up` section of bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.results import write_section
from bench.scale import BLOCKS, BULLETS_PER_BLOCK, CLI, export_tree

ROOT = Path(__file__).resolve().parents[1]
TITLE = "Start-up"
BUILD = (
    "import sys; from pathlib import Path; from bench.scale import build_listing_workspace; "
    "build_listing_workspace(Path(sys.argv[1]))"
)

WHERE_THE_TIME_GOES = (
    "Where the time goes: a command's start is mostly Python, typer (which inspects every "
    "command and loads pydantic to convert the options given) and rich, then the modules of "
    "the parts the command builds. A listing reads the one kept for the memory file's "
    "content (its ids and texts) instead of parsing the file and hashing the ids again; "
    "the first listing after a change does both and keeps the result."
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


# (label, Python's arguments; WS stands for the tree's workspace)
COMMANDS = (
    ("`import charmemory.cli`", ["-c", "import charmemory.cli"]),
    ("`charmemory characters`", ["-c", CLI, "-w", "WS", "characters"]),
    (
        f"`charmemory memories show --json`, {BLOCKS * BULLETS_PER_BLOCK:,} memories",
        ["-c", CLI, "-w", "WS", "memories", "show", "Mira", "--json"],
    ),
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
    cpu_seconds(tree, COMMANDS[-1][1])
    return tree


def cpu_seconds(tree: Tree, arguments: list[str]) -> float:
    """User + system CPU seconds of one process running `arguments`."""
    command = [sys.executable, *(str(tree.workspace) if a == "WS" else a for a in arguments)]
    before = _children_cpu()
    subprocess.run(command, env=tree.env(), check=True, stdout=subprocess.DEVNULL)
    return _children_cpu() - before


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def measure(trees: list[Tree], repeat: int) -> dict[str, list[float]]:
    """The best CPU seconds of each command for each tree, the trees' runs in turn."""
    best = {tree.label: [float("inf")] * len(COMMANDS) for tree in trees}
    for _ in range(repeat):
        for row, (_, arguments) in enumerate(COMMANDS):
            for tree in trees:
                seconds = cpu_seconds(tree, arguments)
                best[tree.label][row] = min(best[tree.label][row], seconds)
    return best


def report_lines(best: dict[str, list[float]], baseline: str | None, repeat: int) -> list[str]:
    load = os.getloadavg()[0]
    lines = [
        f"CPU seconds (user + system) of one process, the best of {repeat} runs on "
        f"{os.cpu_count()} cores shared with other work (load average {load:.1f} at the "
        "end); bytecode compiled beforehand.",
        "",
    ]
    now = best["now"]
    if baseline is None:
        lines += ["| command | now |", "| --- | ---: |"]
        lines += [f"| {label} | {now[i]:.2f} s |" for i, (label, _) in enumerate(COMMANDS)]
        return [*lines, "", WHERE_THE_TIME_GOES]
    before = best[baseline]
    lines += [
        f"| command | baseline {baseline} | now | now / baseline |",
        "| --- | ---: | ---: | ---: |",
    ]
    for i, (label, _) in enumerate(COMMANDS):
        lines.append(f"| {label} | {before[i]:.2f} s | {now[i]:.2f} s | {now[i] / before[i]:.2f} |")
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
