"""Files a person names on the command line: read whole, or refused with what the path is.

"No such file" is only said of a path where nothing is; a folder, a device, a
pipe or a name the filesystem refuses is called what it is. Text files are
UTF-8 (a byte order mark is allowed); anything else is a `FormatError` naming
the first byte that is not.
"""

from __future__ import annotations

import stat
from pathlib import Path

from charmemory.errors import CharMemoryError, FormatError, NotFoundError

_KINDS = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISCHR, "a device"),
    (stat.S_ISBLK, "a device"),
    (stat.S_ISFIFO, "a pipe"),
    (stat.S_ISSOCK, "a socket"),
)


def read_input(path: Path) -> bytes:
    """The bytes of the regular file at `path`."""
    try:
        mode = path.stat().st_mode
        if stat.S_ISREG(mode):
            return path.read_bytes()
    except FileNotFoundError:
        raise NotFoundError(f"no such file: {path}") from None
    except OSError as error:
        raise CharMemoryError(f"cannot read {path}: {error.strerror or error}") from None
    kind = next((name for test, name in _KINDS if test(mode)), "something else")
    raise NotFoundError(f"{path} is {kind}, not a file")


def read_input_text(path: Path) -> str:
    """The text of the UTF-8 file at `path`."""
    return decoded(read_input(path), path.name)


def decoded(data: bytes, source: str) -> str:
    """`data` as UTF-8 text (a leading byte order mark dropped), or a FormatError."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise FormatError(
            f"not UTF-8 text (byte {error.start}); save it as UTF-8", source=source
        ) from None
