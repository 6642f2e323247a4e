"""When automatic extraction runs: every N character messages, at most once per cooldown.

The counter is the chat's visible character messages after the watermark (see
`watermark.pending_character_messages`): a swipe or regeneration replaces the
message at the same position, so it is not a new message. When the counter
reaches N while the cooldown is still running, the run is skipped, not queued:
the counter keeps climbing past N and the check is made again on every new
character message. When it finally runs, the extraction takes
everything that piled up (see `watermark.messages_to_extract`).

Manual extractions ignore both gates, but they do restart the cooldown clock, so an
automatic run does not follow right after one.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Literal

from charmemory.core.extraction_settings import ExtractionSettings

Reason = Literal["disabled", "waiting", "cooldown", "ready"]


@dataclass(frozen=True)
class TriggerState:
    """Per chat: the character messages not yet extracted and when extraction last ran."""

    count: int = 0
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


def why_not(decision: Decision) -> str:
    """Why an automatic extraction did not run: `12/20 msgs`, `cooldown 4m 10s left`."""
    count, interval = decision.progress
    if decision.reason == "disabled":
        return "automatic extraction is off (extraction.auto_extract)"
    if decision.reason == "cooldown" and decision.cooldown_left is not None:
        return f"cooldown {format_wait(decision.cooldown_left)} left ({count}/{interval} msgs)"
    return f"{count}/{interval} msgs"
