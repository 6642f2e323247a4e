"""Real files shipped with SillyTavern, kept beside the repository in `../shared`.

A clone on its own has no `../shared`: tests that read the samples skip there,
with the reason shown. In CI (`CI=true`) the samples are always present, so a
missing one fails the test instead of silently skipping it.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

SAMPLES = Path(__file__).resolve().parents[3] / "shared" / "fixtures" / "sillytavern"


def sillytavern_sample(name: str) -> Path:
    """The path of a SillyTavern sample file; skips (fails in CI) when it is absent."""
    path = SAMPLES / name
    if path.is_file():
        return path
    reason = f"SillyTavern sample {name} not found in {SAMPLES} (it lives beside the repository)"
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(reason)
    pytest.skip(reason)
