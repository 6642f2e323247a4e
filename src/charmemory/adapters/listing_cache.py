"""Listings of memory files kept in the workspace's state folder, one per memory file.

A kept listing is used only for the very bytes it was made from: it carries their
digest, and a file that changed since (by charmemory or anyone else) is listed
again and its listing replaced. It is written atomically, so a process killed
mid-write leaves the old listing or the new one; a damaged, foreign or unreadable
one is ignored and rebuilt. Keeping it is an optimisation: failing to read or
write it never fails a listing.
"""

from __future__ import annotations

import contextlib
import hashlib
from pathlib import Path

from charmemory.adapters.atomic_file import FileLocks, replace_file
from charmemory.errors import CharMemoryError
from charmemory.formats.memory_listing import FileListing, decode_listing, encode_listing


class ListingCache:
    def __init__(self, folder: Path, locks: FileLocks):
        self._folder = folder
        self._locks = locks

    def get(self, file: str, digest: str) -> FileListing | None:
        """The listing kept for ``file`` if it was made from the content ``digest``."""
        try:
            data = self._path(file).read_bytes()
        except OSError:
            return None
        return decode_listing(data, digest)

    def put(self, file: str, digest: str, listing: FileListing) -> None:
        data = encode_listing(listing, digest)
        path = self._path(file)
        # A full disk, a read-only folder or a busy lock only cost the next listing a parse.
        with contextlib.suppress(OSError, CharMemoryError), self._locks.hold(path):
            replace_file(path, data)  # (write_atomic would hash the data again)

    def _path(self, file: str) -> Path:
        return self._folder / f"{_key(file)}.json"


def _key(file: str) -> str:
    # A file name read from disk may hold undecodable bytes (kept as surrogates).
    return hashlib.sha256(file.encode("utf-8", "surrogatepass")).hexdigest()[:32]
