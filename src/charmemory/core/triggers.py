"""When automatic extraction runs: every N character messages, at most once per cooldown.

The counter holds the character messages that arrived since the last extraction.
A swipe or regeneration replaces the message at the same position, so it is not a
new message. When the counter reaches N while the cooldown is still running, the
run is skipped, not queued: the counter keeps climbing past N and the check is made
again on every new character message. When it finally runs, the extraction takes
everything that piled up (see `watermark.messages_to_extract`).

Manual extractions ignore both gates, but they do restart the cooldown clock, so an
automatic run does not follow right after one.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Literal

from charmemory.core.extraction_settings import ExtractionSettings

Reason = Literal["disabled", "waiting", "cooldown", "ready"]


@dataclass(frozen=True)
class TriggerState:
    """Per chat: what the trigger has counted and when extraction last ran."""

    count: int = 0
    last_counted_index: int = -1
    last_run_at: datetime | None = None


@dataclass(frozen=True)
class Decision:
    run: bool
    reason: Reason
    cooldown_left: timedelta | None
    progress: tuple[int, int]


@dataclass(frozen=True)
class TriggerStatus:
    """What a status bar shows, e.g. `5/20 msgs` and `Ready` or `4m 10s left`."""

    progress: str
    readiness: str


def count_character_message(state: TriggerState, index: int) -> TriggerState:
    """Count a character message as it arrives at chat position `index`.

    A message at the position counted last is a swipe or a regeneration of it, so it
    is not counted again. A position before it means messages were deleted since; the
    new message there is counted and becomes the reference point.
    """
    if index == state.last_counted_index:
        return state
    return replace(state, count=state.count + 1, last_counted_index=index)


def with_pending_count(state: TriggerState, pending: int) -> TriggerState:
    """Raise the counter to the unprocessed character messages found in the chat.

    Used when a chat is opened (or after a restart), so messages that arrived while
    nothing was counting still lead to an extraction.
    """
    return replace(state, count=max(state.count, pending))


def after_extraction(state: TriggerState, at: datetime, *, remaining: int = 0) -> TriggerState:
    """The state after an extraction finished; `remaining` character messages are still
    unprocessed (an "Extract Here" stops before the end of the chat)."""
    return replace(state, count=remaining, last_run_at=at)


def after_failed_extraction(state: TriggerState, at: datetime) -> TriggerState:
    """A failed run keeps its messages counted but waits out the cooldown before retrying,
    so a provider that is down is not called again on every message."""
    return replace(state, last_run_at=at)


def cooldown_left(
    state: TriggerState, now: datetime, settings: ExtractionSettings
) -> timedelta | None:
    """Time until the cooldown has passed, or None when it already has."""
    if state.last_run_at is None or settings.cooldown_minutes == 0:
        return None
    cooldown = timedelta(minutes=settings.cooldown_minutes)
    elapsed = now - state.last_run_at
    # A clock set back must not stretch the wait beyond one cooldown.
    left = cooldown - max(elapsed, timedelta(0))
    return left if left > timedelta(0) else None


def should_extract(state: TriggerState, now: datetime, settings: ExtractionSettings) -> Decision:
    """Whether an automatic extraction runs now, checked after each character message."""
    progress = (state.count, settings.interval)
    waiting = cooldown_left(state, now, settings)
    if not settings.auto_extract:
        return Decision(False, "disabled", waiting, progress)
    if state.count < settings.interval:
        return Decision(False, "waiting", waiting, progress)
    if waiting is not None:
        return Decision(False, "cooldown", waiting, progress)
    return Decision(True, "ready", None, progress)


def trigger_status(
    state: TriggerState, now: datetime, settings: ExtractionSettings
) -> TriggerStatus:
    progress = f"{state.count}/{settings.interval} msgs"
    if not settings.auto_extract:
        return TriggerStatus(progress, "Off")
    waiting = cooldown_left(state, now, settings)
    if waiting is None:
        return TriggerStatus(progress, "Ready")
    return TriggerStatus(progress, f"{format_wait(waiting)} left")


def format_wait(wait: timedelta) -> str:
    """`4m 10s`, `45s`: whole seconds, rounded up so `0s left` is never shown."""
    seconds = max(1, -(-wait // timedelta(seconds=1)))
    minutes, seconds = divmod(seconds, 60)
    return f"{minutes}m {seconds}s" if minutes else f"{seconds}s"
