"""The memory endpoint under load: 20 streaming clients on 5 characters for 60 seconds.

Run from the repository root: ``PYTHONPATH=src .venv/bin/python bench/api_load.py``.
Writes the ``## Memory endpoint under load`` section of bench/RESULTS.md.

`charmemory serve` runs in its own process over a fresh workspace of 5
characters with 20 memories each; the upstream is a stand-in in another
process that streams a short answer at once. Each client plays one
conversation the way SillyTavern does (system prompt, greeting, the whole
history every time, `"stream": true`) and sends its next message as soon as a
reply has ended. First, the same clients talk to the stand-in directly for a
few seconds: the difference in time to the first byte is what charmemory adds
(recording the conversation, retrieving and injecting memories, forwarding).
Afterwards every client's conversation must be in exactly one recorded chat,
message for message: nothing duplicated, nothing lost. One untimed request per
character comes first (the embedding model loads and the index fills).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "src"))

import httpx  # noqa: E402

from bench.results import write_section  # noqa: E402

TITLE = "Memory endpoint under load"
CHARACTERS = ("Mira", "Seraphina", "Tomas", "Wren", "Isolde")
CLIENTS = 20
SECONDS = 60.0
BASELINE_SECONDS = 8.0
GREETING = "Welcome, traveller."
ANSWER = ["The river ", "runs north ", "past the old mill."]


# -- the upstream stand-in (its own process) ------------------------------------------


async def stand_in(port: int) -> None:
    """A fast OpenAI-compatible server: streams ANSWER at once, lists one model."""

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head.decode("latin-1").split("\r\n")
                length = next(
                    (
                        int(h.split(":", 1)[1])
                        for h in lines
                        if h.lower().startswith("content-length:")
                    ),
                    0,
                )
                body = json.loads(await reader.readexactly(length)) if length else {}
                if lines[0].startswith("GET"):
                    payload = json.dumps({"object": "list", "data": [{"id": "stand-in"}]}).encode()
                    writer.write(_head(200, "application/json", len(payload)) + payload)
                elif body.get("stream"):
                    writer.write(_head(200, "text/event-stream", None))
                    for piece in ANSWER:
                        writer.write(
                            _chunk(_event({"choices": [{"index": 0, "delta": {"content": piece}}]}))
                        )
                    usage = {"prompt_tokens": 10, "completion_tokens": 3, "total_tokens": 13}
                    writer.write(_chunk(_event({"choices": [], "usage": usage})))
                    writer.write(_chunk(b"data: [DONE]\n\n") + b"0\r\n\r\n")
                else:  # extraction's calls: nothing new to remember
                    message = {"role": "assistant", "content": "NO_NEW_MEMORIES"}
                    payload = json.dumps({"choices": [{"index": 0, "message": message}]}).encode()
                    writer.write(_head(200, "application/json", len(payload)) + payload)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", port)
    async with server:
        await server.serve_forever()


def _head(status: int, kind: str, length: int | None) -> bytes:
    size = f"Content-Length: {length}" if length is not None else "Transfer-Encoding: chunked"
    return f"HTTP/1.1 {status} OK\r\nContent-Type: {kind}\r\n{size}\r\n\r\n".encode()


def _event(data: dict) -> bytes:
    return f"data: {json.dumps(data)}\n\n".encode()


def _chunk(data: bytes) -> bytes:
    return f"{len(data):x}\r\n".encode() + data + b"\r\n"


# -- the clients ----------------------------------------------------------------------


@dataclass
class Client:
    number: int
    character: str
    conversation: list[tuple[bool, str]] = field(default_factory=lambda: [(False, GREETING)])
    first_bytes: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def body(self) -> dict:
        name = self.character
        system = f"Write {name}'s next reply in a fictional chat between {name} and Alex."
        history = [
            {"role": "user" if u else "assistant", "content": t} for u, t in self.conversation
        ]
        return {
            "messages": [{"role": "system", "content": system}, *history],
            "model": "stand-in",
            "temperature": 1,
            "max_tokens": 300,
            "stream": True,
        }


async def talk(
    client: Client, http: httpx.AsyncClient, url: str, until: float, record: bool
) -> None:
    turn = 0
    while time.monotonic() < until:
        turn += 1
        said = (
            f"Client {client.number}, turn {turn}: where does the river of {client.character} run?"
        )
        client.conversation.append((True, said))
        started = time.perf_counter()
        try:
            async with http.stream("POST", url, json=client.body()) as response:
                if response.status_code != 200:
                    client.errors.append(
                        f"HTTP {response.status_code}: {(await response.aread())[:200]!r}"
                    )
                    return
                text, first = [], None
                async for line in response.aiter_lines():
                    if first is None:
                        first = time.perf_counter() - started
                    if line.startswith("data: {"):
                        chunk = json.loads(line[6:])
                        text += [
                            c["delta"].get("content") or "" for c in chunk.get("choices") or []
                        ]
        except httpx.HTTPError as error:
            client.errors.append(f"{type(error).__name__}: {error}")
            return
        client.first_bytes.append((first or 0.0) * 1000)
        client.conversation.append((False, "".join(text)))
        if not record:
            client.conversation = [(False, GREETING)]


async def run_clients(url_for: dict[str, str], seconds: float, record: bool) -> list[Client]:
    clients = [Client(n, CHARACTERS[n % len(CHARACTERS)]) for n in range(CLIENTS)]
    until = time.monotonic() + seconds
    limits = httpx.Limits(max_connections=CLIENTS * 2, max_keepalive_connections=CLIENTS)
    async with httpx.AsyncClient(timeout=60, limits=limits) as http:
        await asyncio.gather(*(talk(c, http, url_for[c.character], until, record) for c in clients))
    return clients


# -- the run ------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_for(url: str, process: subprocess.Popen) -> None:
    deadline = time.monotonic() + 60
    while True:
        try:
            httpx.get(url, timeout=2)
            return
        except httpx.HTTPError:
            if time.monotonic() > deadline or process.poll() is not None:
                raise SystemExit(f"{url} did not come up") from None
            time.sleep(0.2)


def prepare(root: Path, upstream: str) -> None:
    from charmemory.composition import create_app

    app = create_app(root)
    for name in CHARACTERS:
        card = {
            "spec": "chara_card_v2",
            "spec_version": "2.0",
            "data": {
                "name": name,
                "description": f"{name} keeps the river maps.",
                "first_mes": GREETING,
            },
        }
        (root / "characters" / f"{name}.json").write_text(json.dumps(card), encoding="utf-8")
    app.settings.set("model.provider", "custom")
    app.settings.set("model.base_url", upstream, provider="custom")
    app.settings.set("model.model", "stand-in", provider="custom")
    facts = [
        f"The river of {{name}} bends at the {place}."
        for place in ("old mill", "salt flats", "north gate", "willow ford", "glass bridge")
    ]
    for name in CHARACTERS:
        memories = [fact.format(name=name) + f" Note {n}." for n in range(4) for fact in facts]
        asyncio.run(app.memories.add(name, memories))
    app.close()


def warm_up(urls: dict[str, str]) -> None:
    """One request per character, untimed: the embedding model loads, the index fills."""
    for name, url in urls.items():
        body = Client(-1, name).body()
        body["messages"][-1:] = [{"role": "user", "content": "warming up"}]
        body["stream"] = False
        httpx.post(url, json=body, timeout=120).raise_for_status()


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def check_recorded(
    root: Path, clients: list[Client]
) -> tuple[int, int, int, dict[str, list[float]]]:
    """(conversations found exactly once, duplicated or extra chats, conversations lost,
    the timings each generation record kept)."""
    from charmemory.composition import open_app
    from charmemory.core.memory_endpoint.recording import sent_by_frontends

    app = open_app(root)
    found = extra = lost = 0
    timings: dict[str, list[float]] = {}
    for name in CHARACTERS:
        character = app.library.character(name)
        chats = [
            [
                (m.is_user, m.mes)
                for m in app.library.load_chat(ref).chat.messages
                if sent_by_frontends(m)
            ]
            for ref in app.library.chats(character)
        ]
        mine = [c.conversation for c in clients if c.character == name]
        for conversation in mine:
            hits = sum(1 for chat in chats if chat == conversation)
            found += hits == 1
            lost += hits == 0
            extra += max(hits - 1, 0)
        warm = [(True, "warming up")]
        extra += sum(1 for chat in chats if chat not in mine and chat[:1] != warm)
        for ref in app.library.chats(character):
            for record in app.chat.generations(name, ref.id, 1000):
                for step, ms in record.timings.items():
                    timings.setdefault(step, []).append(ms)
    app.close()
    return found, extra, lost, timings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=SECONDS)
    parser.add_argument("--upstream", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.upstream:
        asyncio.run(stand_in(args.upstream))
        return
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), *sys.path])}
    upstream_port, port = free_port(), free_port()
    upstream = f"http://127.0.0.1:{upstream_port}/v1"
    stand = subprocess.Popen([sys.executable, __file__, "--upstream", str(upstream_port)], env=env)
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder) / "ws"
        try:
            wait_for(f"{upstream}/models", stand)
            prepare(root, upstream)
            direct = asyncio.run(
                run_clients(
                    {n: f"{upstream}/chat/completions" for n in CHARACTERS}, BASELINE_SECONDS, False
                )
            )
            server = subprocess.Popen(
                [
                    sys.executable,
                    "-c",
                    "from charmemory.cli import main; main()",
                    "serve",
                    "--port",
                    str(port),
                    "--workspace",
                    str(root),
                ],
                env=env,
                stderr=subprocess.DEVNULL,
            )
            try:
                base = f"http://127.0.0.1:{port}"
                wait_for(f"{base}/docs", server)
                urls = {n: f"{base}/characters/{n}/v1/chat/completions" for n in CHARACTERS}
                warm_up(urls)
                clients = asyncio.run(run_clients(urls, args.seconds, True))
            finally:
                server.send_signal(signal.SIGTERM)
                server.wait(60)
        finally:
            stand.kill()
        found, extra, lost, timings = check_recorded(root, clients)
    report(direct, clients, found, extra, lost, timings, args.seconds)


def report(
    direct: list[Client],
    clients: list[Client],
    found: int,
    extra: int,
    lost: int,
    timings: dict[str, list[float]],
    seconds: float,
) -> None:
    base = [ms for c in direct for ms in c.first_bytes]
    through = [ms for c in clients for ms in c.first_bytes]
    errors = [e for c in [*direct, *clients] for e in c.errors]
    b50, b95 = statistics.median(base), percentile(base, 0.95)
    t50, t95 = statistics.median(through), percentile(through, 0.95)
    lines = [
        f"{CLIENTS} streaming clients on {len(CHARACTERS)} characters for {seconds:g} s against "
        "a stand-in upstream that answers at once "
        "(`PYTHONPATH=src .venv/bin/python bench/api_load.py`).",
        "",
        "| measure | value |",
        "| --- | --- |",
        f"| requests through charmemory | {len(through)} ({len(through) / seconds:.1f}/s) |",
        f"| errors | {len(errors)} |",
        f"| conversations recorded exactly once | {found} of {CLIENTS} |",
        f"| duplicated or stray chats / lost conversations | {extra} / {lost} |",
        f"| first byte, straight to the stand-in: p50 / p95 | {b50:.1f} / {b95:.1f} ms |",
        f"| first byte through charmemory: p50 / p95 | {t50:.1f} / {t95:.1f} ms |",
        f"| **added by charmemory: p50 / p95** | **{t50 - b50:.1f} / {t95 - b95:.1f} ms** |",
        *(
            f"| server-side {step}: p50 / p95 | {statistics.median(ms):.1f} / "
            f"{percentile(ms, 0.95):.1f} ms |"
            for step, ms in sorted(timings.items())
            if step in ("record_ms", "retrieval_ms", "prepare_ms", "first_byte_ms")
        ),
        "",
        "Added latency is recording the conversation, retrieving and injecting memories and "
        "forwarding, with 20 requests in flight on 2 cores; retrieval (each request's query "
        "embedded and searched on the one compute thread) queues and dominates it.",
    ]
    for error in errors[:5]:
        lines.append(f"- error: {error}")
    write_section(TITLE, lines)
    print("\n".join(lines))
    if errors or extra or lost:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
