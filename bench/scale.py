"""Commands at scale: listing 100,000 memories, and a dry run of a 100,000-message chat.

Two measurements, each taken for the code as it is and, with `--baseline REV`, for
the code of an earlier commit in the same run (its `src/` is exported to a temporary
folder and imported instead), on workspaces built the same way:

- listing: `memories show --json | head` on a memory file of 100,000 bullets in
  10,000 blocks, as a user runs it (a new process each time, so Python's start and
  imports are in it; `characters` on the same workspace is timed as the floor), and
  the listing alone inside one process (load the file, list it with ids);
- dry run: `extract --dry-run` of a 100,000-message chat with one saved memory, 20
  messages per call (5,000 calls), with the local embedding model when it is
  installed (extraction then consults the index, as it does for a user). The
  baseline builds fewer prompts (`--baseline-chunks`, by Extract Here), and its
  rate is what is compared.

Each measurement gives the wall-clock time and the CPU time it took (user + system,
all threads; for a command, of the processes it ran), the best of `--repeat` runs:
on a machine shared with other work the wall clock mostly measures the others, the
CPU time much less so. Run: `python bench/scale.py [--baseline REV] [--dry-run]`; writes
the `## Scale` section of bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import subprocess
import sys
import tarfile
import tempfile
import time
from io import BytesIO
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.results import write_section

ROOT = Path(__file__).resolve().parents[1]

BLOCKS = 10_000
BULLETS_PER_BLOCK = 10
CHAT_MESSAGES = 100_000
MESSAGES_PER_CALL = 20
CLI = "from charmemory.cli import main; main()"


# -- building the workspaces (with the code under test) ---------------------------------


def build_listing_workspace(root: Path) -> None:
    from bench.sample_chat import CHARACTER, sample_app

    app = sample_app(root, messages=20)
    blocks = []
    for number in range(BLOCKS):
        bullets = "".join(
            f"- Fact {number * BULLETS_PER_BLOCK + i} about Mira and the airship {number}.\n"
            for i in range(BULLETS_PER_BLOCK)
        )
        date = f"2026-02-{1 + number % 28:02d} 10:00"
        blocks.append(f'<memory chat="chat {number // 100}" date="{date}">\n{bullets}</memory>\n')
    (root / "user" / "files" / f"{CHARACTER}-memories.md").write_text(
        "\n".join(blocks), encoding="utf-8"
    )
    app.close()


def build_dry_run_workspace(root: Path) -> None:
    from bench.sample_chat import CHARACTER, sample_app

    app = sample_app(root, messages=CHAT_MESSAGES)
    app.settings.set("extraction.messages_per_call", str(MESSAGES_PER_CALL))
    (root / "user" / "files" / f"{CHARACTER}-memories.md").write_text(
        '<memory chat="imported" date="2026-02-01 10:00">\n'
        "- Mira keeps her father's brass compass.\n</memory>\n",
        encoding="utf-8",
    )
    app.close()


# -- measuring (run in a child process, with the code under test) ------------------------


def measure_listing(root: Path) -> dict[str, float]:
    from bench.sample_chat import CHARACTER
    from charmemory.composition import open_app

    app = open_app(root)
    app.memories.list(CHARACTER)  # the first sight of the file records it in the history
    started, cpu = time.perf_counter(), time.process_time()
    listing = app.memories.list(CHARACTER)
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    app.close()
    return {"list_s": seconds, "list_cpu": cpu, "memories": float(listing.count)}


def measure_dry_run(root: Path, chunks: int) -> dict[str, float]:
    from bench.sample_chat import CHARACTER
    from charmemory.composition import open_app

    app = open_app(root)
    up_to = chunks * MESSAGES_PER_CALL - 1 if chunks * MESSAGES_PER_CALL < CHAT_MESSAGES else None
    started, cpu = time.perf_counter(), time.process_time()
    report = asyncio.run(app.extraction.extract(CHARACTER, dry_run=True, up_to=up_to))
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    app.close()
    return {"seconds": seconds, "cpu": cpu, "chunks": float(len(report.prompts))}


def child_main(args: argparse.Namespace) -> None:
    root = Path(args.workspace)
    if args.child == "build":
        build_listing_workspace(root / "listing")
        build_dry_run_workspace(root / "dry_run")
        return
    if args.child == "listing":
        result = measure_listing(root / "listing")
    else:
        result = measure_dry_run(root / "dry_run", args.chunks)
    print(json.dumps(result))


# -- the parent: one set of measurements per code tree -----------------------------------


def export_tree(revision: str, into: Path) -> Path:
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", "--format=tar", revision, "src"],
        check=True,
        capture_output=True,
    ).stdout
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return into / "src"


def run_child(src: Path, *args: str) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": f"{src}{os.pathsep}{ROOT}"}
    done = subprocess.run(
        [sys.executable, __file__, *args], env=env, capture_output=True, text=True, check=False
    )
    if done.returncode:
        raise SystemExit(f"measurement failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1]) if done.stdout.strip() else {}


def time_command(src: Path, workspace: Path, shell_tail: str, repeat: int) -> tuple[float, float]:
    """The best wall-clock and CPU seconds of a command line (a new process each time)."""
    env = {**os.environ, "PYTHONPATH": f"{src}{os.pathsep}{ROOT}"}
    command = f'"{sys.executable}" -c "{CLI}" -w "{workspace}" {shell_tail}'
    best, best_cpu = float("inf"), float("inf")
    for _ in range(repeat):
        before = _children_cpu()
        started = time.perf_counter()
        subprocess.run(["bash", "-c", command], env=env, check=True, capture_output=True)
        best = min(best, time.perf_counter() - started)
        best_cpu = min(best_cpu, _children_cpu() - before)
    return best, best_cpu


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def measure_tree(src: Path, workspace: Path, chunks: int, repeat: int) -> dict[str, float]:
    run_child(src, "--child", "build", "--workspace", str(workspace))
    listing = workspace / "listing"
    show = "memories show Mira --json | head -c 1000 > /dev/null"
    time_command(src, listing, show, 1)  # the first sight records the file in the history
    result: dict[str, float] = {}
    result["show_s"], result["show_cpu"] = time_command(src, listing, show, repeat)
    result["start_s"], result["start_cpu"] = time_command(
        src, listing, "characters > /dev/null", repeat
    )
    runs = [
        run_child(src, "--child", "listing", "--workspace", str(workspace)) for _ in range(repeat)
    ]
    result["list_s"] = min(run["list_s"] for run in runs)
    result["list_cpu"] = min(run["list_cpu"] for run in runs)
    dry = run_child(
        src, "--child", "dry_run", "--workspace", str(workspace), "--chunks", str(chunks)
    )
    result["dry_s"], result["dry_cpu"], result["dry_chunks"] = (
        dry["seconds"],
        dry["cpu"],
        dry["chunks"],
    )
    return result


def embedding_model_present(src: Path) -> bool:
    env = {**os.environ, "PYTHONPATH": f"{src}{os.pathsep}{ROOT}"}
    probe = "from charmemory.composition import embedding_model_installed as e; print(e())"
    done = subprocess.run(
        [sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True
    )
    return done.stdout.strip() == "True"


def report_lines(
    current: dict[str, float], baseline: dict[str, float] | None, revision: str, index: bool
) -> list[str]:
    def rate(result: dict[str, float]) -> float:
        return result["dry_chunks"] / result["dry_s"]

    load = os.getloadavg()[0]
    consults = "yes (the local embedding model is installed)" if index else "no (not installed)"
    lines = [
        f"Machine: {os.cpu_count()} cores shared with other work (load average {load:.1f} at "
        "the end of the run), so times are upper bounds; each is the best of the repeats. "
        f"Extraction consults the index: {consults}.",
        "",
        "| measurement | " + ("baseline " + revision + " | " if baseline else "") + "now |",
        "| --- | " + ("---: | " if baseline else "") + "---: |",
    ]

    def cell(result: dict[str, float], key: str) -> str:
        return f"{result[key + '_s']:.2f} s ({result[key + '_cpu']:.2f} s CPU)"

    def row(label: str, key: str) -> None:
        before = f"{cell(baseline, key)} | " if baseline else ""
        lines.append(f"| {label} | {before}{cell(current, key)} |")

    def calls(result: dict[str, float]) -> str:
        return (
            f"{int(result['dry_chunks']):,} calls in {result['dry_s']:.1f} s "
            f"({result['dry_cpu']:.1f} s CPU)"
        )

    row("`memories show --json \\| head`, 100,000 memories in 10,000 blocks", "show")
    row("the same process start alone (`characters`)", "start")
    row("listing in one process (load, parse, ids)", "list")
    lines.append(
        "| `extract --dry-run`, 100,000 messages, one memory | "
        + (f"{calls(baseline)} | " if baseline else "")
        + f"{calls(current)} |"
    )
    lines.append(
        "| dry-run prompts per second (wall clock) | "
        + (f"{rate(baseline):.1f} | " if baseline else "")
        + f"{rate(current):.1f} |"
    )
    lines += [
        "",
        "What the times are made of: a command's process start (imports) is the "
        "`characters` row; of the listing, parsing the file is about half, the ids and "
        "the listing's values the rest. The baseline's dry run embedded every chunk's text "
        "to rank existing memories (one here, which the budget shows whatever the ranking); "
        "now the index is only asked when the memories do not all fit, and a run's "
        "constant parts are worked out once.",
    ]
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", help="a commit to measure the same way, for comparison")
    parser.add_argument("--baseline-chunks", type=int, default=250)
    parser.add_argument("--chunks", type=int, default=CHAT_MESSAGES // MESSAGES_PER_CALL)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--dry-run", action="store_true", help="print instead of writing")
    parser.add_argument("--child", choices=("build", "listing", "dry_run"), help=argparse.SUPPRESS)
    parser.add_argument("--workspace", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child_main(args)
        return
    with tempfile.TemporaryDirectory() as tmp:
        here = ROOT / "src"
        baseline = None
        if args.baseline:
            old = export_tree(args.baseline, Path(tmp) / "baseline")
            baseline = measure_tree(old, Path(tmp) / "ws-baseline", args.baseline_chunks, 1)
        current = measure_tree(here, Path(tmp) / "ws-now", args.chunks, args.repeat)
        index = embedding_model_present(here)
    lines = report_lines(current, baseline, args.baseline or "", index)
    print("\n".join(lines))
    if not args.dry_run:
        write_section("Scale", lines)


if __name__ == "__main__":
    main()
