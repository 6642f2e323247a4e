"""A workspace with one character and one chat of plain alternating turns, for benchmarks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from charmemory.composition import App, create_app

CHARACTER = "Mira"
USER = "Alex"
CHAT_ID = "Mira - 2026-02-15@10h00m00s123ms"


def sample_app(root: Path, messages: int, **options: Any) -> App:
    """A new workspace at ``root`` holding the card and a chat of ``messages`` turns."""
    app = create_app(root, **options)
    card = {
        "spec": "chara_card_v2",
        "spec_version": "2.0",
        "data": {"name": CHARACTER, "description": "An airship captain.", "first_mes": ""},
    }
    (root / "characters" / f"{CHARACTER}.json").write_text(json.dumps(card), encoding="utf-8")
    header = {"chat_metadata": {}, "user_name": USER, "character_name": CHARACTER}
    lines = [header] + [
        {
            "name": USER if index % 2 == 0 else CHARACTER,
            "is_user": index % 2 == 0,
            "is_system": False,
            "send_date": f"2026-02-15T10:{index % 60:02d}:00.000Z",
            "mes": f"{USER if index % 2 == 0 else CHARACTER} says line {index}.",
            "extra": {},
        }
        for index in range(messages)
    ]
    folder = root / "chats" / CHARACTER
    folder.mkdir(parents=True, exist_ok=True)
    text = "\n".join(json.dumps(line, separators=(",", ":")) for line in lines)
    (folder / f"{CHAT_ID}.jsonl").write_text(text, encoding="utf-8")
    return app
