"""World Info activation benchmark: lorebooks of 1,000 and 10,000 entries, a 50-message scan.

Run from the repository root: ``PYTHONPATH=src .venv/bin/python bench/world_info.py``.
Writes the ``## World Info activation`` section of bench/RESULTS.md and leaves
every other section as it is. Target: under 20 ms for 10,000 entries on 2 cores.

Each lorebook is generated from a fixed seed: every entry has its own invented
name as a key plus one or two shared terms; 15 % also have a two-word phrase
key, 1 % a regular expression, 5 % secondary keys. Entry contents and chat
messages are English text (runs of words from the memory files in bench/data),
and one entry in ten mentions another entry's name, so recursion runs. The chat
has 50 messages of about 45 words; 16 of them mention an entry.
The scan covers all 50 messages with SillyTavern's default settings otherwise
(recursion on, 25 % of an 8,192-token context less 300 for the response).

A round is what a generation pays: `gather_candidates` (the books are compiled
once, then reused) and `activate_world_info`. The first round, which compiles
the book, is reported apart.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.results import write_section
from charmemory.core.world_info import (
    LoreSources,
    NamedBook,
    ScanContext,
    ScanMessage,
    WorldInfoSettings,
    activate_world_info,
    gather_candidates,
)
from charmemory.formats.lorebook import Lorebook, new_entry

TITLE = "World Info activation"
SYLLABLES = [
    "ka", "lor", "thi", "ven", "mar", "dus", "el", "bri", "on", "gar",
    "sel", "wyn", "tor", "ash", "mi", "rel", "quo", "zan", "fen", "ul",
]  # fmt: skip
MESSAGES = 50
MENTIONS = 16
CONTEXT = 8192 - 300


ENGLISH = Path(__file__).resolve().parent / "data" / "memories"


def pseudo_word(rng: random.Random, parts: int) -> str:
    return "".join(rng.choice(SYLLABLES) for _ in range(parts))


def english_words() -> list[str]:
    text = " ".join(path.read_text(encoding="utf-8") for path in sorted(ENGLISH.glob("*.md")))
    return re.findall(r"[A-Za-z][A-Za-z']*", text)


def passage(rng: random.Random, words: list[str], length: int) -> list[str]:
    start = rng.randrange(len(words) - length)
    return words[start : start + length]


def generate(size: int, seed: int = 7) -> tuple[Lorebook, tuple[ScanMessage, ...]]:
    rng = random.Random(seed)
    english = english_words()
    taken = {word.lower() for word in english}
    names: list[str] = []
    while len(names) < size:
        name = pseudo_word(rng, 4).capitalize()
        if name.lower() not in taken:
            taken.add(name.lower())
            names.append(name)
    terms = [pseudo_word(rng, 3) + "ite" for _ in range(200)]
    book = Lorebook()
    for uid, name in enumerate(names):
        keys = [name, *rng.sample(terms, rng.randint(1, 2))]
        roll = rng.random()
        if roll < 0.15:
            keys.append(f"{name} {rng.choice(english).lower()}")
        elif roll < 0.16:
            keys.append(f"/\\b{name.lower()}s?\\b/i")
        words = passage(rng, english, rng.randint(30, 80))
        if rng.random() < 0.1:
            words.insert(rng.randrange(len(words)), rng.choice(names))
        fields = {}
        if rng.random() < 0.05:
            fields = {"keysecondary": [rng.choice(english)], "selectiveLogic": rng.randint(0, 3)}
        book.put(new_entry(" ".join(words), keys, uid=uid, comment=name, **fields))
    chat = [passage(rng, english, rng.randint(35, 55)) for _ in range(MESSAGES)]
    for _ in range(MENTIONS):
        words = rng.choice(chat)
        words.insert(rng.randrange(len(words)), rng.choice(names))
    messages = tuple(
        ScanMessage(index, "Wren" if index % 2 else "Seraphina", " ".join(words))
        for index, words in enumerate(chat)
    )
    return book, messages


def one_generation(book: Lorebook, scan: ScanContext, settings: WorldInfoSettings, seed: int):
    candidates = gather_candidates(LoreSources(character=(NamedBook("Bench", book),)), settings)
    return activate_world_info(
        candidates, scan, max_context=CONTEXT, rng=random.Random(seed), settings=settings
    )


def measure(size: int, rounds: int) -> dict[str, float]:
    book, messages = generate(size)
    settings = WorldInfoSettings(scan_depth=MESSAGES)
    scan = ScanContext(messages=messages)
    started = time.perf_counter()
    result = one_generation(book, scan, settings, 0)
    first = (time.perf_counter() - started) * 1000
    timings = []
    for round_number in range(rounds):
        started = time.perf_counter()
        one_generation(book, scan, settings, round_number)
        timings.append((time.perf_counter() - started) * 1000)
    timings.sort()
    return {
        "entries": size,
        "first": first,
        "p50": statistics.median(timings),
        "p95": timings[min(len(timings) - 1, round(0.95 * (len(timings) - 1)))],
        "activated": len(result.activated),
        "passes": result.steps,
        "tokens": result.used_tokens,
        "budget": result.budget,
    }


def report(rows: list[dict[str, float]], rounds: int) -> list[str]:
    load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    cores = len(os.sched_getaffinity(0))
    lines = [
        f"Python {sys.version.split()[0]}, {cores} cores, load average {load} at the start. "
        "Run `PYTHONPATH=src .venv/bin/python bench/world_info.py`.",
        "",
        f"One lorebook, {MESSAGES}-message scan, SillyTavern's default settings otherwise; "
        f"{rounds} rounds after the first, each a whole generation's World Info step "
        "(gathering the candidates and activating). Target: under 20 ms for 10,000 entries.",
        "",
        "| entries | first round (compiles the book) ms | p50 ms | p95 ms | activated | passes | "
        "World Info tokens / budget |",
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for row in rows:
        lines.append(
            f"| {row['entries']:,} | {row['first']:.0f} | {row['p50']:.1f} | {row['p95']:.1f} "
            f"| {row['activated']} | {row['passes']} | {row['tokens']} / {row['budget']} |"
        )
    lines += [
        "",
        "How: each book is compiled once (typed entries, key matchers) and reused while "
        "unchanged; every plain key is indexed by a word (keys of word characters under "
        "whole-word matching) or by its rarest 4-gram, and a regular expression by a 4-gram "
        "of the text it always contains, so a pass checks only the entries whose anchors "
        "the scan text holds, looked up in its word and 4-gram sets (made once per message "
        "and kept across generations). A recursion pass only adds text, so it looks up the "
        "new text alone. The first round reads every entry's fields and compiles its keys.",
    ]
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--sizes", type=int, nargs="*", default=[1_000, 10_000])
    parser.add_argument(
        "--dry-run", action="store_true", help="print instead of writing RESULTS.md"
    )
    args = parser.parse_args()
    rows = [measure(size, args.rounds) for size in args.sizes]
    lines = report(rows, args.rounds)
    print("\n".join(lines))
    if not args.dry_run:
        write_section(TITLE, lines)


if __name__ == "__main__":
    main()
