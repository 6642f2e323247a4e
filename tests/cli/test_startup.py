"""A command pays only for the parts it uses: starting the command line, or listing
memories, loads no HTTP client, web framework, array library or model runtime (each
is built where it is first needed; bench/startup.py measures what that saves)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import charmemory
from tests.support.extraction_fixtures import CHARACTER, make_workspace, memory_block

HEAVY = ("numpy", "httpx", "fastapi", "uvicorn", "onnxruntime", "tokenizers", "llama_cpp")
# Nor does listing memories need asyncio or the local model's adapter (nothing awaits,
# no model setting is read).
UNNEEDED = (*HEAVY, "asyncio", "charmemory.adapters.llm.embedded")
SRC = Path(charmemory.__file__).resolve().parents[1]
# Runs the command line with the arguments given, then says which of HEAVY it loaded.
PROBE = f"""
import json, sys
from charmemory.cli.application import run
code = run(sys.argv[1:]) if len(sys.argv) > 1 else 0
print(json.dumps({{"code": code, "loaded": [m for m in {UNNEEDED!r} if m in sys.modules]}}))
"""


def probe(*args: str) -> tuple[dict, str]:
    """What the command returned and loaded, and what it printed before."""
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *args], env=env, capture_output=True, text=True, check=True
    )
    *printed, last = done.stdout.strip().splitlines()
    return json.loads(last), "\n".join(printed)


def test_the_command_line_starts_without_heavy_libraries() -> None:
    assert probe()[0] == {"code": 0, "loaded": []}


def test_listing_memories_loads_no_heavy_library(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path / "ws")
    (ws.files_dir / f"{CHARACTER}-memories.md").write_text(
        memory_block("Mira keeps a brass compass."), encoding="utf-8"
    )
    ws.close()

    for command in (["memories", "show", CHARACTER], ["memories", "show", CHARACTER, "--json"]):
        outcome, printed = probe("-w", str(ws.root), *command)
        assert outcome == {"code": 0, "loaded": []}
        assert "Mira keeps a brass compass." in printed
