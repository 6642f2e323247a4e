"""`charmemory serve`'s application on 127.0.0.1, in a thread, for real HTTP clients."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import uvicorn

from charmemory.adapters.workspace import Workspace
from charmemory.api import create_api
from charmemory.composition import App

CHARACTER = "Mira"
DESCRIPTION = "{{char}} is a cartographer from the river town of Vell who maps {{user}}'s road."
GREETING = "Welcome aboard, traveller. Mind the maps."
MAIN_PROMPT = "Write {name}'s next reply in a fictional chat between {name} and Alex."


def write_card(ws: Workspace, name: str = CHARACTER, description: str = DESCRIPTION) -> None:
    card = {
        "spec": "chara_card_v2",
        "spec_version": "2.0",
        "data": {
            "name": name,
            "description": description,
            "personality": "",
            "scenario": "",
            "first_mes": GREETING,
            "mes_example": "",
        },
    }
    (ws.characters_dir / f"{name}.json").write_text(json.dumps(card), encoding="utf-8")


def use_upstream(app: App, base_url: str) -> None:
    app.settings.set("model.provider", "custom")
    app.settings.set("model.base_url", base_url, provider="custom")
    app.settings.set("model.model", "scripted-model", provider="custom")
    app.settings.set("model.max_retries", "0")


def chat_files(root: Path, character: str = CHARACTER) -> list[Path]:
    return sorted((root / "chats" / character).glob("*.jsonl"))


@contextmanager
def serving(open_app: Callable[[], App], *, token: str | None = None) -> Iterator[str]:
    """The API on a free port of 127.0.0.1; yields its base URL and stops it afterwards."""
    config = uvicorn.Config(
        create_api(open_app, token=token),
        host="127.0.0.1",
        port=0,
        log_level="warning",
        access_log=False,
        timeout_graceful_shutdown=5,
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the API server did not start")
        time.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(20)
