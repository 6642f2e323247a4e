"""The access token guards every route, the docs and the memory endpoint included."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from charmemory.adapters.workspace import Workspace
from charmemory.cli.application import run
from charmemory.composition import App
from tests.support.api_server import serving, write_card

TOKEN = "a-long-enough-access-token-1234"
SRC = Path(__file__).resolve().parents[2] / "src"


def routes(url: str) -> list[tuple[str, str]]:
    """Every route of the API, its path parameters filled in."""
    spec = httpx.get(f"{url}/openapi.json", headers={"Authorization": f"Bearer {TOKEN}"}).json()
    found = [("GET", "/docs"), ("GET", "/openapi.json")]
    for path, methods in spec["paths"].items():
        filled = path.replace("{character}", "Mira")
        while "{" in filled:
            start = filled.index("{")
            filled = filled[:start] + "x" + filled[filled.index("}") + 1 :]
        found.extend((method.upper(), filled) for method in methods)
    return found


def test_every_route_needs_the_token(tmp_path: Path) -> None:
    ws = Workspace.create(tmp_path / "ws")
    write_card(ws)
    with serving(lambda: App(ws, env={}), token=TOKEN) as url:
        every = routes(url)
        assert ("POST", "/characters/Mira/v1/chat/completions") in every
        assert ("POST", "/v1/chat/completions") in every
        with httpx.Client(base_url=url) as client:
            for method, path in every:
                for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": TOKEN}):
                    response = client.request(method, path, headers=headers, json={})
                    assert response.status_code == 401, (method, path, headers)
                    assert response.json()["error"]["type"] == "unauthorized"
            docs = client.get("/docs", headers={"Authorization": f"Bearer {TOKEN}"})
            assert docs.status_code == 200 and "swagger" in docs.text.lower()


def test_serving_beyond_this_machine_without_a_token_refuses_to_start(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CHARMEMORY_TOKEN", raising=False)
    Workspace.create(tmp_path / "ws")
    code = run(["serve", "--host", "0.0.0.0", "--port", "1", "--workspace", str(tmp_path / "ws")])
    assert code == 2
    assert "needs an access token" in capsys.readouterr().err


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_serve_logs_one_line_per_request_and_stops_cleanly_on_sigterm(tmp_path: Path) -> None:
    ws = Workspace.create(tmp_path / "ws")
    write_card(ws)
    ws.close()
    port = free_port()
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(SRC), *sys.path]),
        "CHARMEMORY_TOKEN": TOKEN,
        "CHARMEMORY_PROVIDER": "custom",  # with no base URL: an error the request reports
    }
    server = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "from charmemory.cli import main; main()",
            "serve",
            "--port",
            str(port),
            "--workspace",
            str(tmp_path / "ws"),
        ],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                response = httpx.get(
                    f"http://127.0.0.1:{port}/characters/Mira/v1/models?key={TOKEN}",
                    headers={"Authorization": f"Bearer {TOKEN}"},
                )
                break
            except httpx.ConnectError:
                assert time.monotonic() < deadline and server.poll() is None, "serve did not start"
                time.sleep(0.1)
        assert response.status_code == 400  # the provider is not set up: said plainly
        assert "needs a base URL" in response.json()["error"]["message"]
        server.send_signal(signal.SIGTERM)
        _, err = server.communicate(timeout=20)
    finally:
        server.kill()
    # Uvicorn shuts down gracefully, then dies of the signal it caught, as is customary.
    assert server.returncode in (0, -signal.SIGTERM)
    assert "stopped: background work done, workspace closed" in err
    lines = [line for line in err.splitlines() if "/characters/Mira/v1/models" in line]
    assert len(lines) == 1 and " 400 " in lines[0]
    assert TOKEN not in err and "Traceback" not in err
