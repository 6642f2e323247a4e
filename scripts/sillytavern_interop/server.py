"""SillyTavern's server, started on 127.0.0.1 in a data folder of its own, with STMB."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path
from types import TracebackType

EXTENSION = "SillyTavern-MemoryBooks"
START_TIMEOUT_S = 600  # the first start compiles SillyTavern's frontend libraries


def install_stmb(source: Path, user: Path) -> Path:
    """STMB as a third-party extension of `user` (a checkout is copied, a bare git
    repository's HEAD exported); its folder there."""
    target = user / "extensions" / EXTENSION
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    if (source / "manifest.json").is_file():
        shutil.copytree(source, target, dirs_exist_ok=True, ignore=shutil.ignore_patterns(".git"))
    else:
        archive = subprocess.run(
            ["git", "--git-dir", str(source), "archive", "HEAD"], capture_output=True, check=True
        )
        subprocess.run(["tar", "-x", "-C", str(target)], input=archive.stdout, check=True)
    manifest = json.loads((target / "manifest.json").read_text(encoding="utf-8"))
    if not (target / manifest["js"]).is_file():
        raise RuntimeError(f"STMB's {manifest['js']} is missing: build the extension first")
    return target


def stmb_commit(source: Path) -> str:
    """The STMB commit being checked (unknown where `source` is no git repository)."""
    git_dir = source if (source / "HEAD").is_file() else source / ".git"
    found = subprocess.run(
        ["git", "--git-dir", str(git_dir), "rev-parse", "HEAD"], capture_output=True, text=True
    )
    return found.stdout.strip() if found.returncode == 0 else "unknown"


class SillyTavern:
    """`node server.js` on 127.0.0.1:`port` with no browser launched and nothing updated."""

    def __init__(self, install: Path, data_root: Path, port: int, log: Path) -> None:
        self.install, self.data_root, self.port, self.log = install, data_root, port, log
        self.url = f"http://127.0.0.1:{port}/"
        self._process: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> SillyTavern:
        self.data_root.mkdir(parents=True, exist_ok=True)
        command = [
            "node", "server.js",
            "--configPath", str(self.data_root / "config.yaml"),
            "--dataRoot", str(self.data_root),
            "--port", str(self.port),
            "--listen", "false",
            "--browserLaunchEnabled", "false",
        ]  # fmt: skip
        environment = {
            **os.environ,
            "SILLYTAVERN_EXTENSIONS_AUTOUPDATE": "false",
            "SILLYTAVERN_EXTENSIONS_MODELS_AUTODOWNLOAD": "false",
        }
        with self.log.open("wb") as log:
            self._process = subprocess.Popen(
                command, cwd=self.install, stdout=log, stderr=subprocess.STDOUT, env=environment
            )
        self._wait_until_up()
        return self

    def __exit__(self, *_: object | TracebackType) -> None:
        if self._process is not None:
            self._process.terminate()
            try:
                self._process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self._process.kill()

    def version(self) -> str:
        package = json.loads((self.install / "package.json").read_text(encoding="utf-8"))
        return str(package.get("version", "unknown"))

    def _wait_until_up(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            assert self._process is not None
            if self._process.poll() is not None:
                raise RuntimeError(f"SillyTavern stopped at start; see {self.log}")
            try:
                with urllib.request.urlopen(self.url, timeout=5) as answer:
                    if answer.status == 200:
                        return
            except (urllib.error.URLError, OSError):
                pass
            time.sleep(1)
        raise RuntimeError(f"SillyTavern did not answer on {self.url}; see {self.log}")
