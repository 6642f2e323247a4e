"""What a consolidation would change, shown before anything is written.

Memories are matched by their normalised text (case, quotes and punctuation do not
matter), as many times as they occur: a memory of the selection that comes back is
kept, one that does not is removed, and one that is new (a merge, a rewording) is
added. A preview also lists the blocks merged from several sources, the blocks an
answer without sources replaced as a whole, the notes a person typed into the
selected blocks (kept as they are, never sent to the model), and warns when a pass
removes far more than its strategy should.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from charmemory.core.consolidation_answer import ProposedBlock
from charmemory.core.consolidation_plan import SourceBlock
from charmemory.core.consolidation_prompt import CONSERVATIVE
from charmemory.core.existing_memories import normalise_bullet

# Past this share of removed memories, a conservative pass probably went wrong.
CONSERVATIVE_REMOVAL_LIMIT = 0.7


@dataclass(frozen=True)
class MergedBlock:
    sources: tuple[int, ...]  # 0-based block indices in the file before
    bullets: tuple[str, ...]


@dataclass(frozen=True)
class ConsolidationDiff:
    kept: tuple[str, ...]
    removed: tuple[str, ...]
    added: tuple[str, ...]
    merged: tuple[MergedBlock, ...]
    blocks_before: int
    blocks_after: int
    notes: tuple[str, ...] = ()  # notes of the selected blocks, carried over as typed
    replaced: tuple[int, ...] = ()  # blocks replaced by answers that named no sources

    @property
    def bullets_before(self) -> int:
        return len(self.kept) + len(self.removed)

    @property
    def bullets_after(self) -> int:
        return len(self.kept) + len(self.added)

    @property
    def changes_nothing(self) -> bool:
        return not self.removed and not self.added and not self.merged


def consolidation_diff(
    selected: Sequence[SourceBlock], proposed: Sequence[ProposedBlock]
) -> ConsolidationDiff:
    before = [text for block in selected for text in block.bullets]
    after = [text for block in proposed for text in block.bullets]
    unmatched = set(range(len(before)))
    matched: set[int] = set()  # positions in `after` that kept a memory
    # Identical text first, so the copy reported removed is the one that differs.
    for key_of in (_as_written, normalise_bullet):
        waiting: dict[str, deque[int]] = {}
        for index in sorted(unmatched):
            waiting.setdefault(key_of(before[index]), deque()).append(index)
        for position, text in enumerate(after):
            queue = waiting.get(key_of(text))
            if position not in matched and queue:
                unmatched.discard(queue.popleft())
                matched.add(position)
    merged = tuple(
        MergedBlock(block.sources, block.bullets) for block in proposed if len(block.sources) > 1
    )
    replaced = {i for block in proposed if not block.named_sources for i in block.sources}
    return ConsolidationDiff(
        kept=tuple(text for i, text in enumerate(after) if i in matched),
        removed=tuple(before[i] for i in sorted(unmatched)),
        added=tuple(text for i, text in enumerate(after) if i not in matched),
        merged=merged,
        blocks_before=len({block.index for block in selected}),
        blocks_after=len(proposed),
        notes=tuple(note for block in selected for note in block.notes),
        replaced=tuple(sorted(replaced)),
    )


def _as_written(text: str) -> str:
    return text


def review_warnings(strategy: str, diff: ConsolidationDiff) -> list[str]:
    """What a person should look at before applying."""
    warnings: list[str] = []
    if diff.bullets_before and strategy == CONSERVATIVE:
        share = len(diff.removed) / diff.bullets_before
        if share > CONSERVATIVE_REMOVAL_LIMIT:
            warnings.append(
                f"a conservative consolidation would remove {share:.0%} of the selected "
                f"memories ({len(diff.removed)} of {diff.bullets_before}); read the "
                "preview carefully before applying it"
            )
    return warnings


@dataclass(frozen=True)
class ConsolidationPreview:
    """A proposed consolidation of one memory file, waiting to be applied."""

    id: int
    created_at: str
    character: str
    file: str  # relative to the workspace
    digest: str | None  # the file the preview was made from
    strategy: str
    blocks: tuple[int, ...]  # the selected block indices
    diff: ConsolidationDiff
    result: str  # the whole file as applying it writes it
    warnings: tuple[str, ...] = ()
    calls: int = 0
    applied_at: str | None = None


def diff_to_dict(diff: ConsolidationDiff) -> dict[str, Any]:
    return asdict(diff)


def diff_from_dict(data: dict[str, Any]) -> ConsolidationDiff:
    return ConsolidationDiff(
        kept=tuple(data["kept"]),
        removed=tuple(data["removed"]),
        added=tuple(data["added"]),
        merged=tuple(
            MergedBlock(tuple(item["sources"]), tuple(item["bullets"])) for item in data["merged"]
        ),
        blocks_before=int(data["blocks_before"]),
        blocks_after=int(data["blocks_after"]),
        notes=tuple(data.get("notes", ())),
        replaced=tuple(data.get("replaced", ())),
    )
