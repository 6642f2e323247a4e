"""A unified diff between two versions of a memory file, as `diff -u` would show it."""

from __future__ import annotations

import difflib


def unified_diff(old: str, new: str, *, old_label: str, new_label: str) -> str:
    """The changes from ``old`` to ``new``; empty when they are the same text.

    Lines are compared without their line endings, so a file that only changed
    from CRLF to LF shows as changed lines, never as a broken diff.
    """
    lines = difflib.unified_diff(
        old.splitlines(),
        new.splitlines(),
        fromfile=old_label,
        tofile=new_label,
        lineterm="",
    )
    return "".join(f"{line}\n" for line in lines)
