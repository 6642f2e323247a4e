"""What settings of every kind share: their keys and the words people type for them."""

from __future__ import annotations

from collections.abc import Iterable

from charmemory.errors import ConfigError

_TRUE = frozenset({"true", "on", "yes", "1"})
_FALSE = frozenset({"false", "off", "no", "0"})


def setting_name(key: str, prefix: str, known: Iterable[str], *, scope: str = "") -> str:
    """`prefix.name` -> `name`, refused with the known keys when it is not one of them."""
    names = list(known)
    name = key.removeprefix(prefix)
    if not key.startswith(prefix) or name not in names:
        listed = ", ".join(prefix + other for other in names)
        raise ConfigError(f"unknown setting {key!r}{scope}; known: {listed}")
    return name


def parse_switch(key: str, text: str) -> bool:
    """on/off, yes/no, true/false or 1/0, as typed."""
    word = text.strip().lower()
    if word in _TRUE | _FALSE:
        return word in _TRUE
    raise ConfigError(f"{key} must be on or off, not {text!r}")
