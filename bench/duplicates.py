"""Duplicates across a whole chat's extraction: the same fact restated in several bullets.

bench/data/duplicates_chat.json lists the distinct facts of one long chat, each with the
keyword lists that mark a bullet stating it. A bullet is a duplicate when every fact it
states was stated by an earlier bullet; bullets stating no labelled fact are counted
apart. Run on the memory file an extraction of that chat wrote:
`PYTHONPATH=src .venv/bin/python bench/duplicates.py MEMORY_FILE`, or have the model in
force (the embedded local model when no provider is configured) extract the chat in a
new workspace first, keeping every chunk's saved and dropped bullets in a JSON file:
`... bench/duplicates.py --extract CHUNKS.json [--messages N]` (about 12 calls of 20
messages; `--messages` extracts only the first N messages). `--chunks CHUNKS.json`
counts again the bullets an earlier extraction saved.

`--filter` measures the filter that drops a new bullet restating a saved one, without a
chat model: the labelled restatements of every fact (`same`), first of each fact, then
second of each, and so on, and the near misses (`different`), go through the filter in
turn, each compared with the 3 nearest bullets kept before it (by the embedding model's
cosine), once with today's rule and once with the cosine alone at 0.95 (the rule before);
a fact is lost when no kept bullet states it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from charmemory.adapters.embed_onnx import OnnxEmbedder
from charmemory.composition import App, create_app
from charmemory.core.restatement import restates
from charmemory.core.retrieval import items_from_memory_file
from charmemory.formats.memory_file import (
    parse_memory_file,
)

DATA = Path(__file__).resolve().parent / "data" / "duplicates_chat.json"
ROOT = Path(__file__).resolve().parents[1]
CARD = (
    "Professor Edmund Hale is an elderly, kindly and absent-minded linguist at a college, "
    "deciphering the Vellmarch Tablets."
)


@dataclass(frozen=True)
class Fact:
    id: str
    keywords: tuple[tuple[str, ...], ...]  # any one list, found whole, states the fact

    def stated_in(self, bullet: str) -> bool:
        text = bullet.lower().replace("\u2019", "'")
        return any(all(keyword in text for keyword in one) for one in self.keywords)


@dataclass(frozen=True)
class Duplicates:
    bullets: int
    duplicates: int
    unlabelled: int  # bullets that state none of the labelled facts
    facts_found: int

    @property
    def per_100(self) -> float:
        return 100 * self.duplicates / max(1, self.bullets)


def load_facts() -> list[Fact]:
    data = json.loads(DATA.read_text(encoding="utf-8"))
    return [
        Fact(f["id"], tuple(tuple(k.lower() for k in one) for one in f["keywords"]))
        for f in data["facts"]
    ]


def count_duplicates(bullets: Sequence[str], facts: Sequence[Fact]) -> Duplicates:
    seen: set[str] = set()
    duplicates = unlabelled = 0
    for bullet in bullets:
        stated = {fact.id for fact in facts if fact.stated_in(bullet)}
        if not stated:
            unlabelled += 1
        elif stated <= seen:
            duplicates += 1
        seen |= stated
    return Duplicates(len(bullets), duplicates, unlabelled, len(seen))


async def extract(
    chunks_file: Path,
    *,
    messages: int | None = None,
    open_app: Callable[[Path], App] = create_app,
) -> list[str]:
    """Extract the labelled chat (its first `messages` only, if given) in a new workspace
    opened by `open_app`; returns the bullets saved, in order."""
    labels = json.loads(DATA.read_text(encoding="utf-8"))
    character = labels["character"]
    root = Path(tempfile.mkdtemp(prefix="charmemory-duplicates-"))
    try:
        app = open_app(root)
        card = {
            "spec": "chara_card_v2",
            "spec_version": "2.0",
            "data": {"name": character, "description": CARD, "first_mes": ""},
        }
        (root / "characters" / f"{character}.json").write_text(json.dumps(card), "utf-8")
        folder = root / "chats" / character
        folder.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / labels["chat"], folder / f"{character} - 2023-6-19@14h18m02s.jsonl")

        def progress(*_: object) -> None:
            print(".", end="", flush=True)

        up_to = None if messages is None else messages - 1
        report = await app.extraction.extract(character, up_to=up_to, progress=progress)
        chunks = [
            {"first": c.first, "last": c.last, "saved": c.saved, "dropped": c.dropped}
            for c in report.chunks
        ]
        chunks_file.write_text(json.dumps(chunks, indent=1, ensure_ascii=False), "utf-8")
        return saved_bullets(chunks_file)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def saved_bullets(chunks_file: Path) -> list[str]:
    """The bullets an extraction saved, in order, from its chunks file."""
    chunks = json.loads(chunks_file.read_text(encoding="utf-8"))
    return [bullet for chunk in chunks for bullet in chunk["saved"]]


# As the extraction service checks: the saved bullets nearest a new one.
NEAREST = 3
RULES: dict[str, Callable[[str, str, float], bool]] = {
    "cosine >= 0.95 (before)": lambda _new, _saved, cosine: cosine >= 0.95,
    "restatement rule (core/restatement.py)": restates,
}


def labelled_bullets() -> tuple[list[str], list[str]]:
    """The labelled restatements, first of each fact, then second of each, ...; and the
    near misses."""
    data = json.loads(DATA.read_text(encoding="utf-8"))
    lists = [fact["same"] for fact in data["facts"]]
    rounds = max(len(texts) for texts in lists)
    same = [texts[i] for i in range(rounds) for texts in lists if i < len(texts)]
    return same, [text for fact in data["facts"] for text in fact.get("different", [])]


def kept_by_filter(
    bullets: Sequence[str], vectors: np.ndarray, rule: Callable[[str, str, float], bool]
) -> list[int]:
    """The positions of the bullets kept: each is checked against the nearest bullets
    kept before it."""
    kept: list[int] = []
    for i, bullet in enumerate(bullets):
        if kept:
            cosines = vectors[kept] @ vectors[i]
            nearest = np.argsort(-cosines)[:NEAREST]
            if any(rule(bullet, bullets[kept[j]], float(cosines[j])) for j in nearest):
                continue
        kept.append(i)
    return kept


def filter_report() -> list[str]:
    same, near_misses = labelled_bullets()
    bullets = same + near_misses
    vectors = asyncio.run(OnnxEmbedder().embed(bullets))
    facts = load_facts()
    unfiltered = count_duplicates(bullets, facts)
    lines = [
        f"{len(same)} labelled restatements of the chat's {len(facts)} facts and"
        f" {len(near_misses)} near misses (each close to a fact it does not state):"
        f" {unfiltered.duplicates} duplicates, {unfiltered.per_100:.0f} per 100 bullets"
        " with no filter.",
        "",
        "| filter | bullets kept | duplicates per 100 kept bullets | facts lost |",
        "|---|---|---|---|",
    ]
    for name, rule in RULES.items():
        kept = [bullets[i] for i in kept_by_filter(bullets, vectors, rule)]
        found = count_duplicates(kept, facts)
        lines.append(
            f"| {name} | {len(kept)} of {len(bullets)} | {found.per_100:.1f} "
            f"| {unfiltered.facts_found - found.facts_found} |"
        )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("memory_file", type=Path, nargs="?")
    parser.add_argument("--extract", type=Path, metavar="CHUNKS_JSON")
    parser.add_argument("--messages", type=int, help="with --extract: the first N only")
    parser.add_argument("--chunks", type=Path, metavar="CHUNKS_JSON")
    parser.add_argument("--filter", action="store_true", help="measure the restatement filter")
    args = parser.parse_args()
    if args.filter:
        print("\n".join(filter_report()))
        return
    if args.extract:
        bullets = asyncio.run(extract(args.extract, messages=args.messages))
    elif args.chunks:
        bullets = saved_bullets(args.chunks)
    elif args.memory_file:
        memory = parse_memory_file(args.memory_file.read_text(encoding="utf-8"))
        items = items_from_memory_file("chat", args.memory_file.name, memory)
        bullets = [item.text for item in items]
    else:
        parser.error("give a MEMORY_FILE, --extract CHUNKS_JSON or --chunks CHUNKS_JSON")
    facts = load_facts()
    found = count_duplicates(bullets, facts)
    print(
        f"{found.bullets} bullets, {found.facts_found} of {len(facts)} labelled facts, "
        f"{found.duplicates} duplicates ({found.per_100:.1f} per 100 bullets), "
        f"{found.unlabelled} bullets stating no labelled fact"
    )


if __name__ == "__main__":
    main()
