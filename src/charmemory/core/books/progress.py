"""How far a chat's scene memories have come, and which range comes next.

Every saved scene moves the chat's highest processed message to the scene's
end. Automatic scene memories wait for `interval` new messages beyond a
`buffer` of the newest ones (left for the conversation to settle), then take
everything from the message after the highest processed one to the last
message before the buffer. Catch-up cuts a long stretch into consecutive ranges
of `interval` messages, the last one shorter. After saving, the summarised
messages may be hidden: all of the chat up to the scene's end, or only the
scene, each leaving the newest `keep` messages visible.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from charmemory.core.books.scenes import SceneError, SceneRange

AutoHide = Literal["all", "last", "none"]
AUTO_HIDE_MODES: tuple[AutoHide, ...] = ("all", "last", "none")
MIN_INTERVAL, DEFAULT_INTERVAL, MAX_INTERVAL = 10, 50, 250
DEFAULT_BUFFER, MAX_BUFFER = 2, 50


@dataclass(frozen=True)
class AutoDecision:
    """Whether an automatic scene memory is due now, and for which range."""

    due: bool
    range: SceneRange | None
    waiting: int  # messages still needed before one is due (0 when due)


def auto_range(message_count: int, highest: int | None, interval: int, buffer: int) -> AutoDecision:
    """The next automatic range of a chat of ``message_count`` messages, if due."""
    done = -1 if highest is None else highest
    last = message_count - 1
    since = last - done
    needed = interval + buffer
    if since < needed:
        return AutoDecision(False, None, needed - since)
    end = max(0, last - buffer)
    if done + 1 > end:
        return AutoDecision(False, None, 0)
    return AutoDecision(True, SceneRange(done + 1, end), 0)


def catch_up_ranges(first: int, last: int, interval: int) -> list[SceneRange]:
    """Consecutive ranges of ``interval`` messages from ``first`` to ``last`` (inclusive)."""
    if interval < 1:
        raise SceneError("the catch-up interval must be at least 1 message")
    if last < first:
        return []
    return [
        SceneRange(start, min(start + interval - 1, last))
        for start in range(first, last + 1, interval)
    ]


def hide_ranges(mode: AutoHide, keep: int, scene: SceneRange) -> list[SceneRange]:
    """What to hide once ``scene`` is saved: ``mode`` `all` (the chat up to the scene's
    end), `last` (the scene alone) or `none`; the newest ``keep`` stay visible."""
    if mode == "all":
        end = scene.last - keep
        return [SceneRange(0, end)] if end >= 0 else []
    if mode == "last":
        end = scene.last - keep
        return [SceneRange(scene.first, end)] if end >= scene.first else []
    return []
