"""Named checks, each passed or failed with what was found, summed up at the end."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Checks:
    results: list[tuple[str, bool, str]] = field(default_factory=list)

    def equal(self, name: str, found: Any, expected: Any) -> bool:
        held = found == expected
        detail = "" if held else f"found {found!r}, expected {expected!r}"
        return self.record(name, held, detail)

    def record(self, name: str, held: bool, detail: str = "") -> bool:
        self.results.append((name, held, detail))
        shown = f": {detail}" if detail and not held else ""
        print(f"{'ok  ' if held else 'FAIL'} {name}{shown}", flush=True)
        return held

    @property
    def passed(self) -> bool:
        return bool(self.results) and all(held for _, held, _ in self.results)

    def summary(self) -> str:
        failed = [name for name, held, _ in self.results if not held]
        if not failed:
            return f"all {len(self.results)} checks held"
        return f"{len(failed)} of {len(self.results)} checks failed: " + "; ".join(failed)
