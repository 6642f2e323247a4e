"""A memory's id: a short hash of its block's attributes and its text, and the bullets of a
file listed with their ids.

An id depends only on the block's attributes, the memory's text and which copy of that
text under those attributes it is, so adding, editing or deleting other memories leaves
it as it was (deleting an earlier identical copy aside), and a person or a script can
name a memory by id between commands.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from json.encoder import encode_basestring

from charmemory.errors import NotFoundError
from charmemory.formats.memory_file import (
    Attributes,
    BulletAddress,
    MemoryBlock,
    MemoryFile,
)


def memory_id(attributes: Iterable[tuple[str, str]], text: str, occurrence: int = 0) -> str:
    """A short id from the block's attributes (order-free) and the bullet text.

    ``occurrence`` tells apart identical bullets under identical attributes, counted
    in file order, so the first copy keeps its id when a later one is deleted.
    """
    return _sorted_memory_id(sorted(attributes), text, occurrence)


# What json.dumps(..., ensure_ascii=False) writes, without building an encoder per
# call (ids are hashed from this text, so it must never change).
_ID_TEXT = json.JSONEncoder(ensure_ascii=False).encode


def _sorted_memory_id(attributes: list[tuple[str, str]], text: str, occurrence: int) -> str:
    return _IdHasher(attributes).memory_id(text, occurrence)


class _IdHasher:
    """Memory ids of one block's bullets: the hash of `[attributes, text, occurrence]`
    as JSON, its attribute part hashed once per block (listing 100,000 bullets)."""

    def __init__(self, sorted_attributes: list[tuple[str, str]]):
        # `[[["chat", "x"]], "text", 0]`: json.dumps writes a list as "[" + items + "]",
        # its items joined by ", ", and a string as `encode_basestring` does.
        self._prefix = hashlib.sha1(
            ("[" + _ID_TEXT(sorted_attributes) + ", ").encode("utf-8"), usedforsecurity=False
        )

    def memory_id(self, text: str, occurrence: int) -> str:
        digest = self._prefix.copy()
        digest.update(f"{encode_basestring(text)}, {occurrence}]".encode())
        return digest.hexdigest()[:12]

    def first_ids(self, texts: Iterable[str]) -> list[str]:
        """The ids of texts each met for the first time (`memory_id(text, 0)`)."""
        start = self._prefix.copy
        ids = []
        for text in texts:
            digest = start()
            digest.update(f"{encode_basestring(text)}, 0]".encode())
            ids.append(digest.hexdigest()[:12])
        return ids


def memory_ids(file: MemoryFile) -> list[list[str]]:
    """The id of every bullet, block by block, in file order (see `memory_id`)."""
    return ids_of_blocks(
        (block.attributes, [b.text for b in block.bullets]) for block in file.blocks
    )


def ids_of_blocks(blocks: Iterable[tuple[Attributes, Sequence[str]]]) -> list[list[str]]:
    """The memory ids of blocks given as (attributes, bullet texts), in file order."""
    ids: list[list[str]] = []
    # Copies are counted per text among blocks of the same attributes.
    copies: dict[Attributes, tuple[_IdHasher, dict[str, int]]] = {}
    for attributes, texts in blocks:
        ordered = tuple(sorted(attributes))
        if ordered not in copies:
            copies[ordered] = (_IdHasher(list(ordered)), {})
        hasher, seen = copies[ordered]
        if seen.keys().isdisjoint(texts) and len(set(texts)) == len(texts):
            # No copies (nearly every block): all first occurrences, counted at once.
            ids.append(hasher.first_ids(texts))
            seen.update(dict.fromkeys(texts, 1))
            continue
        block_ids = []
        for text in texts:
            occurrence = seen.get(text, 0)
            seen[text] = occurrence + 1
            block_ids.append(hasher.memory_id(text, occurrence))
        ids.append(block_ids)
    return ids


@dataclass(frozen=True, slots=True)
class BulletRef:
    """A bullet as listed: its address, its content-derived id and its block."""

    address: BulletAddress
    memory_id: str
    text: str
    block: MemoryBlock


def list_bullets(file: MemoryFile) -> tuple[BulletRef, ...]:
    return tuple(
        BulletRef(BulletAddress(block_index, bullet_index), memory_id, bullet.text, block)
        for block_index, (block, block_ids) in enumerate(
            zip(file.blocks, memory_ids(file), strict=True)
        )
        for bullet_index, (bullet, memory_id) in enumerate(
            zip(block.bullets, block_ids, strict=True)
        )
    )


def find_bullet(file: MemoryFile, memory_id: str) -> BulletRef:
    for ref in list_bullets(file):
        if ref.memory_id == memory_id:
            return ref
    raise NotFoundError(f"no memory with id {memory_id!r} in this file")
