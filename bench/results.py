"""bench/RESULTS.md is shared: each benchmark replaces only its own `## ` section."""

from __future__ import annotations

from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "RESULTS.md"


def write_section(title: str, lines: list[str], results: Path = RESULTS) -> None:
    section = f"## {title}\n\n" + "\n".join(lines).rstrip() + "\n"
    text = results.read_text(encoding="utf-8") if results.exists() else "# Benchmark results\n\n"
    heading = f"## {title}\n"
    start = text.find(heading)
    if start == -1:
        text = text.rstrip() + "\n\n" + section
    else:
        end = text.find("\n## ", start + len(heading))
        text = text[:start] + section + ("" if end == -1 else text[end:])
    results.write_text(text, encoding="utf-8")
