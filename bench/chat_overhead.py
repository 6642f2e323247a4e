"""What charmemory adds before a reply's first token: retrieval, World Info and the prompt.

Run from the repository root: ``PYTHONPATH=src .venv/bin/python bench/chat_overhead.py``.
Writes the ``## Chat turn overhead`` section of bench/RESULTS.md. Target: 50 ms p95 on
2 cores for a 1,000-message chat, 10,000 memories and a 1,000-entry lorebook.

The workspace holds one character whose card names the lorebook (bench/world_info.py's
generator, 1,000 entries), a 1,000-message chat and a memory file of 10,000 bullets
(bench/retrieval.py's memory texts), indexed once with the real embedding model before
timing starts. Each measured turn sends a new one-to-two-sentence user message through
the chat service with a model that answers at once, 50 ms after the last reply (what
follows a reply in the background is not charged to the next turn); the time to the
reply's first token is charmemory's own work: saving the user's message, embedding the
query, searching 10,000 memories, activating the lorebook over the chat, assembling and
fitting the prompt (tokens counted with the embedded model's vocabulary).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.results import write_section
from bench.world_info import english_words, generate
from charmemory.composition import App, create_app, freeze_long_lived_objects
from charmemory.ports import ChatMessage, Completion, ModelInfo, StreamDelta

TITLE = "Chat turn overhead"
MESSAGES = 1_000
MEMORIES = 10_000
ENTRIES = 1_000
TURNS = 200  # enough that p95 is not one unlucky turn
WARMUP = 3
READING_S = 0.05  # between turns


class InstantModel:
    """A chat model that answers at once, so the time to its first token is all ours."""

    provider = "bench"
    model = "instant"

    async def complete(self, messages: Sequence[ChatMessage], **options: Any) -> Completion:
        return Completion("Aye.")

    async def stream(
        self, messages: Sequence[ChatMessage], **options: Any
    ) -> AsyncIterator[StreamDelta]:
        yield StreamDelta("Aye.", finish_reason="stop")

    async def list_models(self) -> list[ModelInfo]:
        return [ModelInfo(self.model)]


def build(root: Path) -> App:
    rng = random.Random(11)
    words = english_words()
    model = InstantModel()
    app = create_app(root, env={}, chat_model=lambda: model)
    book, _ = generate(ENTRIES)
    (root / "worlds" / "Atlas.json").write_text(book.render(), encoding="utf-8")
    card = {
        "spec": "chara_card_v2",
        "spec_version": "2.0",
        "data": {
            "name": "Mira",
            "description": "{{char}} captains the airship Kestrel.",
            "first_mes": "Welcome aboard.",
            "extensions": {"world": "Atlas"},
        },
    }
    (root / "characters" / "Mira.json").write_text(json.dumps(card), encoding="utf-8")
    header = {"chat_metadata": {}, "user_name": "unused", "character_name": "unused"}
    lines = [header] + [
        {
            "name": "Alex" if i % 2 == 0 else "Mira",
            "is_user": i % 2 == 0,
            "is_system": False,
            "send_date": f"2026-03-01T10:{i % 60:02d}:00.000Z",
            "mes": " ".join(rng.choice(words) for _ in range(rng.randint(15, 45))) + ".",
            "extra": {},
        }
        for i in range(MESSAGES)
    ]
    folder = root / "chats" / "Mira"
    folder.mkdir(parents=True)
    text = "\n".join(json.dumps(line) for line in lines)
    (folder / "Mira - 2026-03-01@10h00m00s000ms.jsonl").write_text(text, encoding="utf-8")
    blocks = []
    for start in range(0, MEMORIES, 8):
        bullets = "".join(
            "- " + " ".join(rng.choice(words) for _ in range(rng.randint(8, 18))) + ".\n"
            for _ in range(min(8, MEMORIES - start))
        )
        blocks.append(f'<memory chat="c{start // 80}" date="2026-02-01 10:00">\n{bullets}</memory>')
    (root / "user" / "files" / "Mira-memories.md").write_text("\n\n".join(blocks) + "\n")
    app.settings.set("extraction.auto_extract", "off")
    return app


async def measure(app: App) -> tuple[list[float], list[float], dict[str, list[float]]]:
    """Wall-clock and CPU milliseconds to each turn's first token, and the steps' timings.

    CPU time (every thread of this process) does not grow when other programs share
    the cores, so it is the figure to compare on a busy machine; on an idle one the
    wall clock is close to it.
    """
    rng = random.Random(5)
    words = english_words()
    first_token: list[float] = []
    first_token_cpu: list[float] = []
    parts: dict[str, list[float]] = {}
    for turn in range(WARMUP + TURNS):
        said = " ".join(rng.choice(words) for _ in range(rng.randint(12, 30))) + "?"
        started, started_cpu = time.perf_counter(), time.process_time()
        seen: list[tuple[float, float]] = []

        def on_delta(delta: StreamDelta, seen: list[tuple[float, float]] = seen) -> None:
            if not seen:
                seen.append((time.perf_counter(), time.process_time()))

        await app.chat.send("Mira", said, on_delta=on_delta)
        # A person reads the reply before writing: what follows a reply in the background
        # (its vector for the next query) is not charged to the next turn.
        await asyncio.sleep(READING_S)
        if turn < WARMUP:
            continue
        first_token.append((seen[0][0] - started) * 1000)
        first_token_cpu.append((seen[0][1] - started_cpu) * 1000)
        record = app.chat.generations("Mira")[0]
        for name, value in record.timings.items():
            if name.endswith("_ms") and value is not None and name != "generation_ms":
                parts.setdefault(name, []).append(value)
    return first_token, first_token_cpu, parts


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def indexed_workspace(root: Path) -> float:
    """Build and index the workspace at `root`; the seconds indexing took."""
    app = build(root)
    started = time.perf_counter()
    asyncio.run(app.memory_search.index("Mira"))
    index_s = time.perf_counter() - started
    app.close()
    return index_s


def cached_workspace(cache: Path) -> float:
    """The indexed workspace kept in `cache` (built there on first use); indexing's seconds.

    Each run measures a copy, so every run starts from the same 1,000-message chat.
    """
    stamp = cache / "index_seconds"
    if not stamp.exists():
        shutil.rmtree(cache / "ws", ignore_errors=True)
        index_s = indexed_workspace(cache / "ws")
        stamp.write_text(f"{index_s}\n", encoding="utf-8")
    return float(stamp.read_text(encoding="utf-8"))


def run(cache: Path | None) -> list[str]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "ws"
        if cache is None:
            index_s = indexed_workspace(root)
        else:
            index_s = cached_workspace(cache)
            shutil.copytree(cache / "ws", root)
        app = create_app(root, env={}, chat_model=InstantModel)
        freeze_long_lived_objects()  # as `charmemory chat` and `serve` do once started
        app.freeze_after_first_reply()  # and again after their first reply
        load = os.getloadavg()
        first_token, first_token_cpu, parts = asyncio.run(measure(app))
        app.close()
    rows = [
        "| step | p50 (ms) | p95 (ms) |",
        "| --- | ---: | ---: |",
        f"| send to first token (all of charmemory's work) | "
        f"{statistics.median(first_token):.1f} | {percentile(first_token, 0.95):.1f} |",
        f"| the same, CPU time of the process | "
        f"{statistics.median(first_token_cpu):.1f} | {percentile(first_token_cpu, 0.95):.1f} |",
    ]
    for name, values in parts.items():
        label = name.removesuffix("_ms").replace("_", " ")
        rows.append(
            f"| {label} | {statistics.median(values):.1f} | {percentile(values, 0.95):.1f} |"
        )
    return [
        f"A {MESSAGES:,}-message chat, {MEMORIES:,} memories (indexed beforehand in "
        f"{index_s:.0f} s), a {ENTRIES:,}-entry lorebook; {TURNS} turns after {WARMUP} warm-up "
        "turns, each a new user message of 12-30 words, answered at once by a stand-in model, "
        f"the next sent {READING_S * 1000:.0f} ms after (a person reads the reply: the reply's "
        "vector for the next query is made meanwhile). "
        "Target: send to first token 50 ms p95. "
        f"Load average {load[0]:.1f} when timing started (2 cores); the other rows are "
        "wall-clock times of each step.",
        "",
        *rows,
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dry-run", action="store_true", help="print instead of writing")
    parser.add_argument(
        "--workspace",
        type=Path,
        help="keep the indexed workspace in this folder and reuse it on later runs",
    )
    args = parser.parse_args()
    lines = run(args.workspace)
    print("\n".join(lines))
    if not args.dry_run:
        write_section(TITLE, lines)


if __name__ == "__main__":
    main()
