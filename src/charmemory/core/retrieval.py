"""What gets indexed for retrieval, and how a query is built from the chat.

Each memory bullet is one item. The text that is embedded and matched carries
the bullet's block context, the CharMemory topic tag (the block's first bullet
when it reads ``[Names — short description]``) and optionally the block date and
chat, because a bullet such as "She refused." means little on its own.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from charmemory.formats.memory_file import MemoryFile, list_bullets

_TOPIC_TAG = re.compile(r"^\[(.+)\]$", re.DOTALL)
_NEWLINES = re.compile(r"\n+")
_NOT_WORD = re.compile(r"[\W_]+")


@dataclass(frozen=True)
class Provenance:
    """Where an item came from: 0-based block and bullet indices in its memory file."""

    file: str
    block_index: int
    bullet_index: int
    block_chat: str = ""
    block_date: str = ""
    topic: str = ""


@dataclass(frozen=True)
class MemoryItem:
    """One retrievable memory: ``text`` is the bullet as written."""

    id: str
    text: str
    collection: str
    provenance: Provenance

    def to_payload(self) -> dict[str, Any]:
        return {"id": self.id, "text": self.text, **asdict(self.provenance)}

    @classmethod
    def from_payload(cls, collection: str, payload: Mapping[str, Any]) -> MemoryItem:
        provenance = Provenance(
            file=str(payload["file"]),
            block_index=int(payload["block_index"]),
            bullet_index=int(payload["bullet_index"]),
            block_chat=str(payload.get("block_chat", "")),
            block_date=str(payload.get("block_date", "")),
            topic=str(payload.get("topic", "")),
        )
        return cls(str(payload["id"]), str(payload["text"]), collection, provenance)


@dataclass(frozen=True)
class EmbeddingContext:
    """Which block context goes into the embedded text next to the bullet."""

    topic: bool = True
    date: bool = False
    chat: bool = False


def topic_of(bullet_text: str) -> str | None:
    """The topic named by a CharMemory topic-tag bullet, or None for an ordinary bullet."""
    match = _TOPIC_TAG.match(bullet_text.strip())
    return match.group(1).strip() if match else None


def items_from_memory_file(collection: str, file: str, memory: MemoryFile) -> list[MemoryItem]:
    """One item per bullet; topic-tag bullets label their block instead of being items."""
    items: list[MemoryItem] = []
    topics: dict[int, str] = {}
    for ref in list_bullets(memory):
        block = ref.address.block
        if ref.address.bullet == 0 and (topic := topic_of(ref.text)) is not None:
            topics[block] = topic
            continue
        provenance = Provenance(
            file=file,
            block_index=block,
            bullet_index=ref.address.bullet,
            block_chat=ref.block.chat,
            block_date=ref.block.date,
            topic=topics.get(block, ""),
        )
        items.append(MemoryItem(ref.memory_id, ref.text, collection, provenance))
    return items


def embedding_text(item: MemoryItem, context: EmbeddingContext = EmbeddingContext()) -> str:
    """The text embedded and matched for ``item``: its context, then the bullet."""
    source = item.provenance
    prefix = [
        value
        for wanted, value in (
            (context.date, source.block_date),
            (context.chat, source.block_chat),
            (context.topic, source.topic),
        )
        if wanted and value
    ]
    return f"{' | '.join(prefix)}: {item.text}" if prefix else item.text


def build_query(messages: Sequence[str], count: int = 2) -> str:
    """The query text from the last ``count`` non-empty messages, newest first.

    This is how SillyTavern's Vector Storage builds its query, so both find the
    same memories for the same chat.
    """
    if count < 1:
        raise ValueError("the query needs at least one message")
    recent = [message for message in reversed(messages) if message.strip()][:count]
    return _NEWLINES.sub("\n", "\n".join(recent)).strip()


def dedupe_key(text: str) -> str:
    """Texts with the same key say the same thing (case, spacing, punctuation aside)."""
    return " ".join(_NOT_WORD.sub(" ", text.casefold()).split())
