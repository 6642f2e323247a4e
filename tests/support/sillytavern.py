"""The SillyTavern sample files in ../shared/fixtures/sillytavern, found or explained.

Outside CI a missing sample skips the test that needs it, saying where it was
looked for; in CI (the environment variable CI is "true") it fails the test.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

SAMPLES = Path(__file__).resolve().parents[3] / "shared" / "fixtures" / "sillytavern"


def sillytavern_sample(name: str) -> Path:
    path = SAMPLES / name
    if not path.is_file():
        message = f"SillyTavern sample {name!r} not found in {SAMPLES}"
        if os.environ.get("CI") == "true":
            pytest.fail(f"{message} (samples are required in CI)")
        pytest.skip(message)
    return path
