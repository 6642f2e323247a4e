"""A scene memory STMB wrote in SillyTavern, compared field by field with charmemory's."""

from __future__ import annotations

from typing import Any

from scripts.sillytavern_interop.checks import Checks

# What differs between two memories by nature: the scene, its number, its text.
PER_MEMORY = {
    "uid", "key", "comment", "content", "order", "displayIndex", "group", "STMB_start",
    "STMB_end", "STMB_canonicalEntryUid", "STMB_canonicalMemoryNumber", "STMB_inclusionGroup",
    "STMB_narratorParticipantIds", "STMB_narratorOwnerIds",
}  # fmt: skip
# charmemory's documented default (docs/memory-books.md, Decisions): a memory's
# content does not activate other entries; STMB's default profile leaves it off.
DEFAULTS_APART = {"preventRecursion"}


def memories(book: dict[str, Any]) -> list[dict[str, Any]]:
    return [entry for entry in book["entries"].values() if entry.get("stmemorybooks")]


def compare_entry(name: str, stmb: dict[str, Any], ours: dict[str, Any], checks: Checks) -> None:
    """STMB's entry has the fields charmemory's has, with the same values where the two
    memories do not differ by nature."""
    checks.equal(f"{name}: STMB's entry has charmemory's fields", sorted(stmb), sorted(ours))
    skipped = PER_MEMORY | DEFAULTS_APART
    checks.equal(
        f"{name}: STMB's entry has charmemory's values",
        {k: v for k, v in stmb.items() if k not in skipped},
        {k: v for k, v in ours.items() if k not in skipped},
    )
