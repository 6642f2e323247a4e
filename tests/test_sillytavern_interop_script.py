"""scripts/check_sillytavern_interop.py stays runnable, and refuses in one line without
a SillyTavern install and an STMB checkout (the check itself is never part of the suite)."""

import os
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "check_sillytavern_interop.py"


def check(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("SILLYTAVERN_DIR", "STMB_DIR")}
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args], capture_output=True, text=True, env=env, timeout=60
    )


def test_without_sillytavern_it_refuses_in_one_line(tmp_path: Path) -> None:
    ran = check()
    assert ran.returncode == 2
    assert ran.stderr == (
        "cannot check SillyTavern interop: no SillyTavern install given "
        "(--sillytavern DIR or SILLYTAVERN_DIR)\n"
    )
    ran = check("--sillytavern", str(tmp_path), "--stmb", str(tmp_path))
    assert ran.returncode == 2
    assert (
        ran.stderr
        == f"cannot check SillyTavern interop: {tmp_path} holds no SillyTavern server.js\n"
    )
