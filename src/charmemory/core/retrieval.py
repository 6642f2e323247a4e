"""What gets indexed for retrieval, in which collection, and how a query is built from the chat.

By default each memory bullet is one item. The text that is embedded and
matched carries the bullet's block context, the CharMemory topic tag (the
block's first bullet when it reads ``[Names — short description]``) and
optionally the block date and chat, because a bullet such as "She refused."
means little on its own. The other granularity cuts the whole file into
SillyTavern-style chunks (`chunk_items_from_memory_file`).

Collections are named after what they serve: ``char:<name>`` for a character,
``char:<name>/chat:<chat id>`` for one chat's memories in per-chat mode, and
``/chunks`` appended for chunk items, so the bullet collection that extraction
keeps up to date is never overwritten with chunks. A `Collection` carries what
the name says, so nothing ever parses a name back.
"""

from __future__ import annotations

import bisect
import hashlib
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any

from charmemory.core.chunking import ChunkSettings, chunks_of
from charmemory.core.language import CJK
from charmemory.formats.memory_file import (
    MemoryBlock,
    MemoryFile,
)
from charmemory.formats.memory_ids import (
    list_bullets,
)

_TOPIC_TAG = re.compile(r"^\[(.+)\]$", re.DOTALL)
_NEWLINES = re.compile(r"\n+")
_NOT_WORD = re.compile(r"[\W_]+")
# A word, or one character of a script written without spaces (Chinese, Japanese, Korean).
_WORDS = re.compile(f"[{CJK}]|[^\\s{CJK}]+")
# How much more a word of the newest message counts in a chat query's vector than one
# of an older message (`chat_query_parts`).
NEWEST_MESSAGE_WEIGHT = 2.0
_CHARACTER = "char:"
_CHAT = "/chat:"
_CHUNKS = "/chunks"


@dataclass(frozen=True)
class Collection:
    """A named collection of the index, with what it holds: whose memories, and in what form."""

    name: str
    character: str | None = None  # None: a collection of something other than memories
    chunks: bool = False


def collection_name(character: str, chat_id: str | None = None, *, chunks: bool = False) -> str:
    """The name of the collection holding a character's memories (one chat's, per chat)."""
    name = _CHARACTER + character + (_CHAT + chat_id if chat_id is not None else "")
    return name + _CHUNKS if chunks else name


@dataclass(frozen=True, slots=True)
class Provenance:
    """Where an item came from: 0-based block and bullet indices in its memory file.

    A chunk item has its 0-based number in ``chunk``; its block is the one the
    chunk starts in, and ``bullet_index`` is 0.
    """

    file: str
    block_index: int
    bullet_index: int
    block_chat: str = ""
    block_date: str = ""
    topic: str = ""
    chunk: int | None = None
    block_size: int = 0  # the block's memories (its topic tag aside); 0 for a chunk

    @property
    def place(self) -> tuple[str, int, int]:
        """Sorts items in file order."""
        if self.chunk is not None:
            return (self.file, self.chunk, 0)
        return (self.file, self.block_index, self.bullet_index)


_PROVENANCE_FIELDS = tuple(field.name for field in fields(Provenance))


@dataclass(frozen=True, slots=True)
class MemoryItem:
    """One retrievable memory: ``text`` is the bullet as written."""

    id: str
    text: str
    collection: str
    provenance: Provenance

    def to_payload(self) -> dict[str, Any]:
        # Not dataclasses.asdict: its deep copies took 6 s for 100,000 items.
        source = {
            name: value
            for name in _PROVENANCE_FIELDS
            if (value := getattr(self.provenance, name)) is not None
        }
        return {"id": self.id, "text": self.text, **source}

    @classmethod
    def from_payload(cls, collection: str, payload: Mapping[str, Any]) -> MemoryItem:
        provenance = Provenance(
            file=str(payload["file"]),
            block_index=int(payload["block_index"]),
            bullet_index=int(payload["bullet_index"]),
            block_chat=str(payload.get("block_chat", "")),
            block_date=str(payload.get("block_date", "")),
            topic=str(payload.get("topic", "")),
            chunk=None if payload.get("chunk") is None else int(payload["chunk"]),
            block_size=int(payload.get("block_size", 0)),
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
    topics: dict[int, str] = {}
    chat_and_date: dict[int, tuple[str, str]] = {}  # looked up once per block
    sizes: Counter[int] = Counter()
    found = []
    for ref in list_bullets(memory):
        block = ref.address.block
        if ref.address.bullet == 0 and (topic := topic_of(ref.text)) is not None:
            topics[block] = topic
            continue
        if block not in chat_and_date:
            chat_and_date[block] = (ref.block.chat, ref.block.date)
        sizes[block] += 1
        found.append((ref.memory_id, ref.text, block, ref.address.bullet))
    items = []
    for memory_id, text, block, bullet in found:
        chat, date = chat_and_date[block]
        provenance = Provenance(
            file=file,
            block_index=block,
            bullet_index=bullet,
            block_chat=chat,
            block_date=date,
            topic=topics.get(block, ""),
            block_size=sizes[block],
        )
        items.append(MemoryItem(memory_id, text, collection, provenance))
    return items


def chunk_items_from_memory_file(
    collection: str, file: str, memory: MemoryFile, settings: ChunkSettings
) -> list[MemoryItem]:
    """The file cut as SillyTavern's Vector Storage cuts a Data Bank file, one item per chunk."""
    text = memory.render()
    block_starts = _block_starts(memory)
    items = []
    for number, chunk in enumerate(chunks_of(text, settings)):
        if not chunk.text.strip():
            continue
        block_index = max(bisect.bisect_right(block_starts, chunk.start) - 1, 0)
        block = memory.blocks[block_index] if memory.blocks else None
        provenance = Provenance(
            file=file,
            block_index=block_index,
            bullet_index=0,
            block_chat=block.chat if block else "",
            block_date=block.date if block else "",
            chunk=number,
        )
        chunk_id = hashlib.sha256(chunk.text.encode()).hexdigest()[:12]
        items.append(MemoryItem(chunk_id, chunk.text, collection, provenance))
    return items


def _block_starts(memory: MemoryFile) -> list[int]:
    starts = []
    offset = 0
    for segment in memory.segments:
        if isinstance(segment, MemoryBlock):
            starts.append(offset)
            offset += len(segment.render())
        else:
            offset += len(segment.text)
    return starts


def embedding_text(item: MemoryItem, context: EmbeddingContext = EmbeddingContext()) -> str:
    """The text embedded and matched for ``item``: its context, then the bullet.

    A chunk is embedded as it is, like SillyTavern does.
    """
    source = item.provenance
    if source.chunk is not None:
        return item.text
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


def chat_query_parts(messages: Sequence[str], count: int, words: int) -> list[tuple[str, float]]:
    """What a chat query's vector is made of: (text, weight) per message, newest first.

    Each of the last ``count`` non-empty messages is embedded on its own, cut at
    ``words`` words, and the vectors are added, each weighted by its words (as in
    one vector of the messages joined, where every token counts alike) and the
    newest by `NEWEST_MESSAGE_WEIGHT` more. One vector of the messages joined blurs
    a hint that sits in either among a scene's other detail; apart and added, long
    chat queries recall@5 0.696 -> 0.750 on the labelled set (bench/RESULTS.md),
    and a message's vector can be made once, when it is written.
    """
    recent = [message for message in reversed(messages) if message.strip()][:count]
    cut = [leading_words(message, words) for message in recent]
    weights = [
        len(_WORDS.findall(text)) * (NEWEST_MESSAGE_WEIGHT if number == 0 else 1.0)
        for number, text in enumerate(cut)
    ]
    total = sum(weights)
    return [(text, weight / total) for text, weight in zip(cut, weights, strict=True)]


def leading_words(text: str, count: int) -> str:
    """``text`` up to its ``count``-th word, as written; a CJK character counts as a word."""
    for number, word in enumerate(_WORDS.finditer(text), start=1):
        if number == count:
            return text[: word.end()]
    return text


def newest_message(messages: Sequence[str]) -> str:
    """The newest non-empty message ("" when there is none)."""
    return next((message for message in reversed(messages) if message.strip()), "")


def dedupe_key(text: str) -> str:
    """Texts with the same key say the same thing (case, spacing, punctuation aside)."""
    return " ".join(_NOT_WORD.sub(" ", text.casefold()).split())
