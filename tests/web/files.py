"""Files a person would import: a PNG card, a SillyTavern 1.15 chat, a lorebook, and
dropping them on a page as a browser does."""

from __future__ import annotations

import base64
import json
import struct
import zlib
from typing import Any

from charmemory.formats.card import Card, write_card_png
from charmemory.formats.png_chunks import Chunk, Png

CHAT_NAME = "Mira - 2026-02-15@10h00m00s123ms.jsonl"


def picture(size: int = 64, rgb: tuple[int, int, int] = (70, 110, 170)) -> bytes:
    """A plain square PNG of one colour."""
    row = b"\x00" + bytes(rgb) * size
    ihdr = Chunk.build(b"IHDR", struct.pack(">IIBBBBB", size, size, 8, 2, 0, 0, 0))
    idat = Chunk.build(b"IDAT", zlib.compress(row * size))
    return Png((ihdr, idat, Chunk.build(b"IEND", b""))).to_bytes()


def card_png(name: str, description: str, first_mes: str) -> bytes:
    card = Card(name=name, description=description, first_mes=first_mes)
    return write_card_png(picture(), card, source=f"{name}.png")


def chat_jsonl(turns: list[tuple[bool, str]], character: str = "Mira") -> bytes:
    """A chat as SillyTavern 1.15 writes it: an `unused` header, ISO send dates."""
    header = {"chat_metadata": {}, "user_name": "unused", "character_name": "unused"}
    lines = [header]
    for number, (is_user, text) in enumerate(turns):
        lines.append(
            {
                "name": "Alex" if is_user else character,
                "is_user": is_user,
                "is_system": False,
                "send_date": f"2026-02-15T10:{number:02d}:00.000Z",
                "mes": text,
                "extra": {},
                **({} if is_user else {"swipes": [text], "swipe_id": 0, "swipe_info": [{}]}),
            }
        )
    return "\n".join(json.dumps(line, ensure_ascii=False) for line in lines).encode()


def lorebook(entries: list[dict[str, Any]]) -> bytes:
    return json.dumps(
        {"entries": {str(uid): {"uid": uid, **entry} for uid, entry in enumerate(entries)}}
    ).encode()


def drop_files(page: Any, selector: str, files: list[tuple[str, bytes, str]]) -> None:
    """Drag files from the desktop onto the element, as a person does."""
    page.evaluate(
        """([selector, files]) => {
            const transfer = new DataTransfer();
            for (const f of files) {
                const bytes = Uint8Array.from(atob(f.data), (c) => c.charCodeAt(0));
                transfer.items.add(new File([bytes], f.name, { type: f.type }));
            }
            const zone = document.querySelector(selector);
            for (const type of ["dragenter", "dragover", "drop"]) {
                zone.dispatchEvent(
                    new DragEvent(type, { bubbles: true, cancelable: true, dataTransfer: transfer })
                );
            }
        }""",
        [
            selector,
            [
                {"name": name, "data": base64.b64encode(data).decode(), "type": kind}
                for name, data, kind in files
            ],
        ],
    )
