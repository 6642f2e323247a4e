from datetime import UTC, datetime, timedelta

from charmemory.core.extraction_settings import ExtractionSettings
from charmemory.core.triggers import (
    TriggerState,
    cooldown_left,
    format_wait,
    group_outcome,
    should_extract,
    trigger_outcome,
    trigger_status,
)
from charmemory.core.watermark import (
    SourceMessage,
    Watermark,
    chunk,
    messages_to_extract,
    pending_character_messages,
)

T0 = datetime(2026, 2, 15, 10, 0, tzinfo=UTC)
DEFAULTS = ExtractionSettings()


def test_below_the_interval_nothing_runs() -> None:
    state = TriggerState(count=19)
    decision = should_extract(state, T0, DEFAULTS)
    assert not decision.run
    assert decision.reason == "waiting"
    assert decision.progress == (19, 20)


def test_reaching_the_interval_runs_when_no_extraction_ran_before() -> None:
    decision = should_extract(TriggerState(count=20), T0, DEFAULTS)
    assert decision.run
    assert decision.reason == "ready"
    assert decision.cooldown_left is None


def test_within_the_cooldown_the_run_is_skipped_and_the_time_left_given() -> None:
    state = TriggerState(count=20, last_run_at=T0)
    decision = should_extract(state, T0 + timedelta(minutes=3), DEFAULTS)
    assert not decision.run
    assert decision.reason == "cooldown"
    assert decision.cooldown_left == timedelta(minutes=7)


def test_the_cooldown_ends_exactly_at_its_length() -> None:
    state = TriggerState(count=20, last_run_at=T0)
    assert not should_extract(state, T0 + timedelta(minutes=10, microseconds=-1), DEFAULTS).run
    assert should_extract(state, T0 + timedelta(minutes=10), DEFAULTS).run


def test_no_cooldown_means_every_interval_runs() -> None:
    settings = ExtractionSettings(cooldown_minutes=0)
    state = TriggerState(count=20, last_run_at=T0)
    assert should_extract(state, T0, settings).run


def test_automatic_extraction_off_never_runs() -> None:
    settings = ExtractionSettings(auto_extract=False)
    decision = should_extract(TriggerState(count=500), T0, settings)
    assert not decision.run
    assert decision.reason == "disabled"


def test_a_clock_set_back_waits_no_longer_than_one_cooldown() -> None:
    state = TriggerState(count=20, last_run_at=T0)
    assert cooldown_left(state, T0 - timedelta(hours=5), DEFAULTS) == timedelta(minutes=10)


def test_skipped_runs_are_not_queued_and_the_pile_up_is_processed_when_it_fires() -> None:
    """60 character messages arrive in 3 minutes after an extraction; it fires once, later."""
    settings = ExtractionSettings(interval=20, cooldown_minutes=10, messages_per_call=20)
    chat: list[SourceMessage] = []
    runs = []
    for number in range(60):
        now = T0 + timedelta(seconds=3 * number)
        chat.append(SourceMessage(number, False, f"Narration {number}.", f"fp{number}"))
        state = TriggerState(pending_character_messages(chat, Watermark()), last_run_at=T0)
        if should_extract(state, now, settings).run:
            runs.append(number)
    assert runs == []  # every check inside the cooldown was skipped, none was queued
    assert state.count == 60
    assert should_extract(state, T0 + timedelta(minutes=9), settings).cooldown_left == timedelta(
        minutes=1
    )

    # The next character message after the cooldown is what fires it.
    fired_at = T0 + timedelta(minutes=10, seconds=30)
    assert should_extract(state, fired_at, settings).run
    watermark = Watermark()
    pending = messages_to_extract(chat, watermark)
    chunks = chunk(pending, settings.messages_per_call)
    assert [len(part) for part in chunks] == [20, 20, 20]
    assert [message.index for part in chunks for message in part] == list(range(60))
    watermark = Watermark(59, {m.index: m.fingerprint for m in chat})
    state = TriggerState(pending_character_messages(chat, watermark), last_run_at=fired_at)
    assert state.count == 0
    assert not should_extract(state, fired_at + timedelta(minutes=20), settings).run


def test_a_pile_up_with_user_turns_is_chunked_by_all_messages() -> None:
    chat = [SourceMessage(i, i % 2 == 0, f"line {i}", f"fp{i}") for i in range(120)]
    assert pending_character_messages(chat, Watermark()) == 60
    chunks = chunk(messages_to_extract(chat, Watermark()), 20)
    assert [len(part) for part in chunks] == [20] * 6


def test_a_failed_run_keeps_its_messages_and_waits_out_the_cooldown() -> None:
    state = TriggerState(count=22, last_run_at=T0)  # the attempt restarts the cooldown
    assert not should_extract(state, T0 + timedelta(minutes=1), DEFAULTS).run
    assert should_extract(state, T0 + timedelta(minutes=10), DEFAULTS).run


def test_status_shows_progress_and_readiness() -> None:
    state = TriggerState(count=5, last_run_at=T0)
    waiting = trigger_status(state, T0 + timedelta(minutes=5, seconds=50), DEFAULTS)
    assert waiting.progress == "5/20 msgs"
    assert waiting.readiness == "4m 10s left"
    assert trigger_status(state, T0 + timedelta(minutes=11), DEFAULTS).readiness == "Ready"
    assert trigger_status(TriggerState(count=27), T0, DEFAULTS).progress == "27/20 msgs"
    off = ExtractionSettings(auto_extract=False)
    assert trigger_status(state, T0, off).readiness == "Off"


def test_waits_round_up_to_whole_seconds() -> None:
    assert format_wait(timedelta(milliseconds=200)) == "1s"
    assert format_wait(timedelta(seconds=59, milliseconds=1)) == "1m 0s"
    assert format_wait(timedelta(minutes=10)) == "10m 0s"


def test_a_replys_outcome_is_none_started_or_skipped_with_the_reason() -> None:
    def outcome(state: TriggerState, settings: ExtractionSettings = DEFAULTS) -> str:
        return trigger_outcome(should_extract(state, T0 + timedelta(minutes=3), settings))

    off = ExtractionSettings(auto_extract=False)
    assert outcome(TriggerState(count=500), off) == "none"  # no automatic trigger at all
    assert outcome(TriggerState(count=20)) == "started"
    assert outcome(TriggerState(count=12)) == "skipped: 12/20 msgs"
    assert outcome(TriggerState(count=20, last_run_at=T0)) == "skipped: cooldown 7m 0s left"


def test_a_group_chats_outcome_sums_up_its_members() -> None:
    assert group_outcome({"Mira": "skipped: 2/3 msgs", "Abel": "started"}) == "started"
    assert group_outcome({"Mira": "skipped: 2/3 msgs", "Abel": "none", "Vera": "skipped: x"}) == (
        "skipped: Mira: 2/3 msgs; Vera: x"
    )
    assert group_outcome({"Mira": "none", "Abel": "none"}) == "none"
