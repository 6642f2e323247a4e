"""Check that a narrator chat charmemory writes opens in SillyTavern with STMB as it is.

    python scripts/check_sillytavern_interop.py --sillytavern DIR --stmb DIR [--evidence DIR]

(or SILLYTAVERN_DIR and STMB_DIR in the environment). DIR for SillyTavern is an
installed copy (the folder holding server.js, e.g. node_modules/sillytavern after
`npm install sillytavern`); for STMB (SillyTavern MemoryBooks) a checkout, or a
bare git repository whose HEAD is exported. Without them, node, Chromium or
Playwright the check refuses in one line and exits with code 2: it is never part
of `make test`.

What it does, in a fresh data folder of its own:

1. starts SillyTavern on 127.0.0.1 with STMB installed as a third-party extension,
   connected to a scripted OpenAI-compatible model on 127.0.0.1;
2. writes, with charmemory's command line, a narrator card, an omniscient book
   and three members' books, a narrator chat with a cast (one member retired),
   stamped messages, a continuation, swipes stamped with different casts, a scene
   memory with its canonical entry and linked copies, and a branch with copies
   of every book;
3. runs STMB's own narratorMode.js under node on that chat and those books: its
   normaliser must keep the cast as charmemory wrote it (nothing dropped, same
   active cast), and its readers must find charmemory's stamps, participants and
   entry metadata;
4. opens the chat in headless Chromium, with STMB's manual lorebook mode on, and
   reads what STMB shows: the active-cast drawer, the cast manager (retired
   members offered "Restore"), the manual memory book, the books' entries as
   SillyTavern loads them; swipes the last reply back (STMB must restore the
   active cast from that swipe's stamp, and the chat SillyTavern saves must keep
   every stamp); takes a turn (STMB must stamp it as charmemory does and read the
   active member's book alone); has STMB write that turn's scene memory (its
   entries must have charmemory's fields and values); opens the branch (its
   copies bound, nothing copied again); and has charmemory read back what
   SillyTavern and STMB saved.

Screenshots and the node report are written to --evidence (default: a new
temporary folder). Exit code 0: every check held; 1: a check failed (each
failure is printed); 2: the check could not run.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "src"), str(ROOT)]

from scripts.sillytavern_interop.browser import check_in_browser  # noqa: E402
from scripts.sillytavern_interop.checks import Checks  # noqa: E402
from scripts.sillytavern_interop.scenario import write_narrator_chat  # noqa: E402
from scripts.sillytavern_interop.server import SillyTavern, install_stmb, stmb_commit  # noqa: E402
from scripts.sillytavern_interop.stmb_node import check_with_stmb_functions  # noqa: E402


class CannotRunError(Exception):
    """The check cannot run here (something it needs is missing)."""


def main(argv: list[str] | None = None) -> int:
    options = _options(argv)
    try:
        sillytavern, stmb, chromium = _inputs(options)
    except CannotRunError as reason:
        print(f"cannot check SillyTavern interop: {reason}", file=sys.stderr)
        return 2
    evidence = Path(options.evidence or tempfile.mkdtemp(prefix="st-interop-")).resolve()
    evidence.mkdir(parents=True, exist_ok=True)
    checks = Checks()
    with tempfile.TemporaryDirectory(prefix="st-data-") as data:
        data_root = Path(options.data or data).resolve()
        user = data_root / "default-user"
        stmb_dir = install_stmb(stmb, user)
        with SillyTavern(sillytavern, data_root, options.port, evidence / "server.log") as st:
            print(f"SillyTavern {st.version()}, STMB {stmb_commit(stmb)}", flush=True)
            written = write_narrator_chat(user, sillytavern)
            check_with_stmb_functions(stmb_dir, user, written, evidence, checks)
            check_in_browser(st.url, written, user, evidence, checks, chromium)
    print(checks.summary())
    print(f"evidence: {evidence}")
    return 0 if checks.passed else 1


def _options(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sillytavern", default=os.environ.get("SILLYTAVERN_DIR"))
    parser.add_argument("--stmb", default=os.environ.get("STMB_DIR"))
    parser.add_argument("--evidence", help="folder for screenshots and reports")
    parser.add_argument("--data", help="SillyTavern data folder to use (default: a temporary one)")
    parser.add_argument("--port", type=int, default=8123)
    parser.add_argument("--chromium", default=os.environ.get("CHARMEMORY_CHROMIUM"))
    return parser.parse_args(argv)


def _inputs(options: argparse.Namespace) -> tuple[Path, Path, str]:
    if not options.sillytavern:
        raise CannotRunError("no SillyTavern install given (--sillytavern DIR or SILLYTAVERN_DIR)")
    if not options.stmb:
        raise CannotRunError("no STMB checkout given (--stmb DIR or STMB_DIR)")
    sillytavern, stmb = Path(options.sillytavern).resolve(), Path(options.stmb).resolve()
    if not (sillytavern / "server.js").is_file():
        raise CannotRunError(f"{sillytavern} holds no SillyTavern server.js")
    if not ((stmb / "manifest.json").is_file() or (stmb / "HEAD").is_file()):
        raise CannotRunError(f"{stmb} is neither an STMB checkout nor a git repository")
    if options.data and Path(options.data).exists() and any(Path(options.data).iterdir()):
        raise CannotRunError(f"--data {options.data} is not empty (the check needs a fresh folder)")
    if shutil.which("node") is None:
        raise CannotRunError("node is not installed")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        raise CannotRunError("Playwright is not installed (pip install -e '.[dev]')") from None
    version = subprocess.run(["node", "--version"], capture_output=True, text=True, check=True)
    if int(version.stdout.strip().lstrip("v").split(".")[0]) < 18:
        raise CannotRunError(f"SillyTavern needs node 18 or newer (found {version.stdout.strip()})")
    chromium = options.chromium or shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None or not Path(chromium).exists():
        raise CannotRunError("no Chromium found (--chromium PATH or CHARMEMORY_CHROMIUM)")
    return sillytavern, stmb, chromium


if __name__ == "__main__":
    raise SystemExit(main())
