"""Duplicates across a whole chat's extraction: the same fact restated in several bullets.

bench/data/duplicates_chat.json lists the distinct facts of one long chat, each with the
keyword lists that mark a bullet stating it. A bullet is a duplicate when every fact it
states was stated by an earlier bullet; bullets stating no labelled fact are counted
apart. Run on the memory file an extraction of that chat wrote:
`PYTHONPATH=src .venv/bin/python bench/duplicates.py MEMORY_FILE`.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from charmemory.core.retrieval import items_from_memory_file
from charmemory.formats.memory_file import parse_memory_file

DATA = Path(__file__).resolve().parent / "data" / "duplicates_chat.json"


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("memory_file", type=Path)
    path = parser.parse_args().memory_file
    memory = parse_memory_file(path.read_text(encoding="utf-8"))
    bullets = [item.text for item in items_from_memory_file("chat", path.name, memory)]
    facts = load_facts()
    found = count_duplicates(bullets, facts)
    print(
        f"{found.bullets} bullets, {found.facts_found} of {len(facts)} labelled facts, "
        f"{found.duplicates} duplicates ({found.per_100:.1f} per 100 bullets), "
        f"{found.unlabelled} bullets stating no labelled fact"
    )


if __name__ == "__main__":
    main()
