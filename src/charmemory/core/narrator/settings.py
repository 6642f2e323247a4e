"""Narrator mode's interface settings: where the active-cast drawer sits, and whether it is
collapsed. They belong to the interface (the web UI reads them), not to a chat: the cast
and the active cast are chat state (`cast.py`), these are kept with the workspace's
settings, apart from any chat.
"""

from __future__ import annotations

from charmemory.core.settings.spec import Setting

DRAWER_POSITIONS = ("right", "left")

SETTINGS: tuple[Setting, ...] = (
    Setting(
        "narrator.drawer_position",
        "choice",
        "right",
        "Side of the chat where the active-cast drawer sits (web UI)",
        choices=DRAWER_POSITIONS,
        scopes=frozenset({"workspace"}),
    ),
    Setting(
        "narrator.drawer_collapsed",
        "bool",
        False,
        "Whether the active-cast drawer starts collapsed (web UI)",
        scopes=frozenset({"workspace"}),
    ),
)
