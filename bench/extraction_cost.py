"""Prompt size per extraction call against memory-file size: ours against the whole file.

The reference design puts the whole memory file into every extraction call, so
a long-lived character's cost grows with everything it ever remembered. Ours
caps the existing-memories section at a token budget. Both prompts are built
here in the same run, from the same chat chunk and memory file, with the real
prompt builder (`extract --dry-run`); no model is called. Tokens are estimated
as characters / 4 for both.

Run: `python bench/extraction_cost.py [--dry-run]`; writes the `## Extraction cost`
section of bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.results import write_section
from bench.sample_chat import CHARACTER, sample_app
from charmemory.core.existing_memories import approx_tokens
from charmemory.core.extraction_prompt import (
    DEFAULT_EXTRACTION_PROMPT,
    PromptValues,
    render_prompt,
)
from charmemory.core.message_cleaning import render_messages
from charmemory.formats.memory_file import (
    build_block,
    parse_memory_file,
)
from charmemory.services.extraction import source_messages

SIZES = (100, 1_000, 10_000)
PLACES = ["Brassport", "the Ashen Reach", "Cinderfall", "the lower docks", "the Gull's wreck"]
THINGS = ["a brass compass", "forty crowns", "a sealed letter", "the ship's log", "a silver key"]
PEOPLE = ["Alex", "Quartermaster Pell", "Inspector Vey", "old Tamsin", "the harbour master"]


def memory_file_text(bullets: int, rng: random.Random) -> str:
    blocks = []
    for start in range(0, bullets, 8):
        texts = [
            f"{rng.choice(PEOPLE)} gave Mira {rng.choice(THINGS)} at {rng.choice(PLACES)} "
            f"(event {n})."
            for n in range(start, min(start + 8, bullets))
        ]
        day = 1 + (start // 8) % 28
        blocks.append(
            build_block(f"chat {start // 80}", f"2026-02-{day:02d} 10:00", texts).render()
        )
    return "\n\n".join(blocks) + "\n"


async def measure(bullets: int, root: Path) -> tuple[int, int, float]:
    # As the recorded runs measured it: the budget's cut, without the index's ranking.
    app = sample_app(root, messages=20, index_for_extraction=False)
    app.settings.set("extraction.messages_per_call", "20")
    memory_path = root / "user" / "files" / f"{CHARACTER}-memories.md"
    text = memory_file_text(bullets, random.Random(bullets))
    memory_path.write_text(text, encoding="utf-8")
    started = time.perf_counter()
    report = await app.extraction.extract(CHARACTER, dry_run=True)
    build_ms = (time.perf_counter() - started) * 1000
    ours = sum(approx_tokens(m.content) for m in report.prompts[0])
    # The whole-file approach: the same prompt with every saved memory in it.
    library = app.library
    loaded = library.load_chat(library.chat(library.character(CHARACTER)))
    recent = render_messages(source_messages(loaded), user_name="Alex", char_name=CHARACTER)
    whole = render_prompt(
        DEFAULT_EXTRACTION_PROMPT,
        PromptValues(
            char=CHARACTER,
            user="Alex",
            char_card="An airship captain.",
            existing_memories=parse_memory_file(text).render(),
            recent_messages=recent,
            max_bullets=8,
        ),
    )
    app.close()
    return ours, sum(approx_tokens(content) for _, content in whole), build_ms


async def run() -> list[str]:
    rows = [
        "| bullets in the memory file | ours: prompt tokens per call | whole file: prompt tokens "
        "per call | whole file / ours | ours: prompt build (ms) |",
        "| ---: | ---: | ---: | ---: | ---: |",
    ]
    with tempfile.TemporaryDirectory() as tmp:
        for bullets in SIZES:
            ours, whole, build_ms = await measure(bullets, Path(tmp) / str(bullets))
            rows.append(
                f"| {bullets:,} | {ours:,} | {whole:,} | {whole / ours:.1f}x | {build_ms:.0f} |"
            )
    return [
        "Same chat chunk (20 messages), same prompt template, existing-memories budget 1,500 "
        "tokens (the default); tokens estimated as characters / 4. Built with "
        "`extract --dry-run`, no model called.",
        "",
        *rows,
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dry-run", action="store_true", help="print instead of writing")
    args = parser.parse_args()
    lines = asyncio.run(run())
    print("\n".join(lines))
    if not args.dry_run:
        write_section("Extraction cost", lines)


if __name__ == "__main__":
    main()
