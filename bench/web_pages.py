"""How fast the web UI's pages load for a long chat.

Run from the repository root: ``PYTHONPATH=src .venv/bin/python bench/web_pages.py``.
Writes the ``## Web UI page loads`` section of bench/RESULTS.md. Target: every page of
the chat screen under 200 ms (p95) on 2 cores for a 2,000-message chat.

The workspace holds one character with a 2,000-message role-play chat (messages of
one to four paragraphs with markdown, every reply with three swipes) and a memory
file of 400 memories in 80 blocks. `charmemory serve`'s application runs on
127.0.0.1 in this process; each request is timed from sending to the last byte,
one at a time, as a browser loading the page would see it.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from urllib.parse import quote

import httpx
import uvicorn

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.results import write_section
from charmemory.api import create_api
from charmemory.composition import App, create_app

TITLE = "Web UI page loads"
CHARACTER = "Mira"
CHAT_ID = "Mira - 2026-02-15@10h00m00s123ms"
MESSAGES = 2_000
BLOCKS = 80
TARGET_MS = 200.0
WORDS = [
    "the",
    "lantern",
    "river",
    "harbour",
    "map",
    "compass",
    "storm",
    "sail",
    "night",
    "bakery",
    "sister",
    "road",
    "captain",
    "airship",
    "silver",
    "copper",
    "dawn",
    "market",
    "bridge",
    "tower",
    "letter",
    "secret",
    "old",
]


def paragraph(rng: random.Random) -> str:
    words = [rng.choice(WORDS) for _ in range(rng.randint(25, 70))]
    words[0] = words[0].capitalize()
    if rng.random() < 0.5:
        words.insert(rng.randint(1, len(words) - 1), f"*{rng.choice(WORDS)}s quietly*")
    return " ".join(words) + "."


def message_text(rng: random.Random) -> str:
    return "\n\n".join(paragraph(rng) for _ in range(rng.randint(1, 4)))


def long_chat_app(root: Path, messages: int) -> App:
    rng = random.Random(7)
    app = create_app(root, env={})
    card = {"spec": "chara_card_v2", "spec_version": "2.0", "data": {"name": CHARACTER}}
    (root / "characters" / f"{CHARACTER}.json").write_text(json.dumps(card), encoding="utf-8")
    lines: list[dict] = [{"chat_metadata": {}, "user_name": "unused", "character_name": "unused"}]
    for index in range(messages):
        is_user = index % 2 == 1
        text = message_text(rng)
        line = {
            "name": "Alex" if is_user else CHARACTER,
            "is_user": is_user,
            "is_system": False,
            "send_date": f"2026-02-{15 + index // 1000:02d}T10:{index % 60:02d}:00.000Z",
            "mes": text,
            "extra": {},
        }
        if not is_user:
            line |= {
                "swipes": [text, message_text(rng), message_text(rng)],
                "swipe_id": 0,
                "swipe_info": [{}, {}, {}],
            }
        lines.append(line)
    folder = root / "chats" / CHARACTER
    folder.mkdir(parents=True, exist_ok=True)
    text = "\n".join(json.dumps(line, separators=(",", ":")) for line in lines)
    (folder / f"{CHAT_ID}.jsonl").write_text(text, encoding="utf-8")
    blocks = [
        f'<memory chat="{CHAT_ID}" date="2026-02-{15 + b // 40:02d} 10:{b % 60:02d}">\n'
        + "".join(f"- {paragraph(rng)[:140]}\n" for _ in range(5))
        + "</memory>\n"
        for b in range(BLOCKS)
    ]
    (root / "user" / "files" / f"{CHARACTER}-memories.md").write_text(
        "\n".join(blocks), encoding="utf-8"
    )
    return app


def serve(app: App) -> tuple[str, uvicorn.Server, threading.Thread]:
    config = uvicorn.Config(create_api(lambda: app), host="127.0.0.1", port=0, log_level="error")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    return f"http://127.0.0.1:{port}", server, thread


def timed(client: httpx.Client, path: str, rounds: int) -> tuple[list[float], int]:
    for _ in range(3):  # warm-up: templates compiled, files in the page cache
        client.get(path).raise_for_status()
    times, size = [], 0
    for _ in range(rounds):
        started = time.perf_counter()
        answer = client.get(path)
        answer.raise_for_status()
        times.append((time.perf_counter() - started) * 1000)
        size = len(answer.content)
    return times, size


def p95(values: list[float]) -> float:
    return statistics.quantiles(values, n=20)[18]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--messages", type=int, default=MESSAGES)
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--no-write", action="store_true", help="print, do not write RESULTS.md")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        app = long_chat_app(Path(folder) / "ws", args.messages)
        url, server, thread = serve(app)
        chat = f"/chat/{CHARACTER}/{quote(CHAT_ID, safe='')}"
        pages = [
            ("chat screen, newest 50 messages", chat),
            ("older page (50 messages)", f"{chat}/messages?before={args.messages // 2}"),
            ("stats bar", f"{chat}/stats"),
            ("memory manager (400 memories)", f"/memories/{CHARACTER}"),
            ("characters", "/"),
        ]
        rows = []
        try:
            with httpx.Client(base_url=url, headers={"accept": "text/html"}, timeout=30) as client:
                for name, path in pages:
                    times, size = timed(client, path, args.rounds)
                    rows.append((name, statistics.median(times), p95(times), max(times), size))
        finally:
            server.should_exit = True
            thread.join(10)
            app.close()
    lines = [
        f"`charmemory serve` on 127.0.0.1, a {args.messages:,}-message chat (1-4 paragraphs "
        "each, every reply with 3 swipes), 400 memories; each page requested "
        f"{args.rounds} times after 3 warm-ups, one at a time, timed to its last byte "
        "(`PYTHONPATH=src .venv/bin/python bench/web_pages.py`, 2 cores). "
        f"Target: under {TARGET_MS:.0f} ms.",
        "",
        "| page | p50 | p95 | max | size |",
        "| --- | --- | --- | --- | --- |",
        *(
            f"| {name} | {p50:.1f} ms | {high:.1f} ms | {top:.1f} ms | {size / 1024:.0f} KiB |"
            for name, p50, high, top, size in rows
        ),
        "",
        "The chat screen renders only its newest page of messages; older ones come a page "
        "at a time as the reader asks. The stats bar is loaded by the page's live stream "
        "right after the page itself.",
    ]
    print("\n".join(lines))
    if not args.no_write:
        write_section(TITLE, lines)


if __name__ == "__main__":
    main()
