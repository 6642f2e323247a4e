"""The real SillyTavern files kept beside the repository, in `../shared/fixtures/sillytavern`.

A fresh clone has no `../shared`: tests that need a sample then skip, with the
reason shown. In CI (`CI=true`) the samples must be there, so a missing one fails
the test instead of silently skipping it.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

# tests/support/<this file> -> the repository -> the folder holding it.
SAMPLES = Path(__file__).resolve().parents[3] / "shared" / "fixtures" / "sillytavern"


def sillytavern_sample(name: str) -> Path:
    """The path of one sample; skips the calling test (fails it in CI) when it is absent."""
    path = SAMPLES / name
    if path.is_file():
        return path
    reason = f"SillyTavern sample {name!r} is not in {SAMPLES}"
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason}; CI must run the tests that read it")
    pytest.skip(reason)
