"""Running the command line in tests: the scripted provider's environment and captured output."""

from pathlib import Path

import pytest

from charmemory.cli.application import run


def use_scripted_provider(monkeypatch: pytest.MonkeyPatch, base_url: str, home: Path) -> None:
    """Point the CLI at the workspace ``home`` and the scripted server at ``base_url``."""
    for name, value in (
        ("CHARMEMORY_PROVIDER", "custom"),
        ("CHARMEMORY_BASE_URL", base_url),
        ("CHARMEMORY_MODEL", "scripted"),
        ("CHARMEMORY_MAX_RETRIES", "0"),
        ("CHARMEMORY_HOME", str(home)),
    ):
        monkeypatch.setenv(name, value)


def result(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """Run the CLI with ``args``: exit code, stdout and stderr of that run alone."""
    capsys.readouterr()
    code = run(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def out_of(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    """Run the CLI with ``args``, which must succeed: its stdout."""
    code, out, err = result(capsys, *args)
    assert code == 0, err
    return out
