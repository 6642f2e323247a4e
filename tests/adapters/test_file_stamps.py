"""Values worked out from a file, kept until the file changes."""

from __future__ import annotations

import os
import time
from pathlib import Path

from charmemory.adapters.file_stamps import SETTLED_NS, StampedValues


def counting_reader(reads: list[str]) -> StampedValues[str]:
    def read(path: Path) -> str:
        reads.append(path.name)
        return path.read_text(encoding="utf-8")

    later = time.time_ns() + 2 * SETTLED_NS  # every file written so far has settled
    return StampedValues(read, now_ns=lambda: later)


def test_a_settled_file_is_read_once_until_it_changes(tmp_path: Path) -> None:
    path = tmp_path / "memories.md"
    path.write_text("- one\n", encoding="utf-8")
    reads: list[str] = []
    values = counting_reader(reads)
    assert values.get(path) == values.get(path) == "- one\n"
    assert len(reads) == 1
    path.write_text("- two\n", encoding="utf-8")  # the same size, written in place
    os.utime(path, ns=(0, 0))  # even a modification time set back is seen (change time)
    assert values.get(path) == "- two\n"
    replacement = tmp_path / "new.md"
    replacement.write_text("- three\n", encoding="utf-8")
    replacement.replace(path)
    assert values.get(path) == "- three\n"
    assert len(reads) == 3


def test_a_file_written_just_now_is_read_every_time(tmp_path: Path) -> None:
    path = tmp_path / "memories.md"
    path.write_text("- one\n", encoding="utf-8")
    reads: list[str] = []
    values = StampedValues(lambda p: reads.append(p.name) or p.read_text(encoding="utf-8"))
    values.get(path)
    values.get(path)
    assert len(reads) == 2


def test_a_missing_file_is_asked_again(tmp_path: Path) -> None:
    path = tmp_path / "memories.md"
    later = time.time_ns() + 2 * SETTLED_NS
    values = StampedValues(
        lambda p: p.read_text(encoding="utf-8") if p.exists() else None, now_ns=lambda: later
    )
    assert values.get(path) is None
    path.write_text("- one\n", encoding="utf-8")
    assert values.get(path) == "- one\n"
