"""Which chat is the latest: the card's chat field, else the newest last message."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from charmemory.core.latest_chat import (
    ChatActivity,
    ChatTime,
    LatestChat,
    chat_time,
    chats_oldest_first,
    latest_chat,
)
from charmemory.formats.chat import last_message_send_date
from tests.support.sillytavern_samples import sillytavern_sample

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "chats"
COPIED_AT = 1_800_000_000.0  # every file time after copying a workspace


def ids(chats: list[ChatActivity]) -> list[str]:
    return [chat.chat_id for chat in chats]


def chat(chat_id: str, send_date: object = None, mtime: float = COPIED_AT) -> ChatActivity:
    return ChatActivity(chat_id, send_date, mtime)


# Chats as the issue found them: imported 03-07 first, then 03-05, then copied.
MARCH = [
    chat("Mira - 2026-03-06@09h00m00s000ms", "2026-03-06T21:10:00.000Z", COPIED_AT + 1),
    chat("Mira - 2026-03-02@09h00m00s000ms", "2026-03-02T21:10:00.000Z", COPIED_AT + 3),
    chat("Mira - 2026-03-05@09h00m00s000ms", "2026-03-05T21:10:00.000Z", COPIED_AT + 4),
    chat("Mira - 2026-03-07@09h00m00s000ms", "2026-03-07T21:10:00.000Z", COPIED_AT + 2),
]


def test_chats_are_ordered_by_their_last_message_not_their_file_time() -> None:
    assert ids(chats_oldest_first(MARCH)) == [
        "Mira - 2026-03-02@09h00m00s000ms",
        "Mira - 2026-03-05@09h00m00s000ms",
        "Mira - 2026-03-06@09h00m00s000ms",
        "Mira - 2026-03-07@09h00m00s000ms",
    ]


def test_the_latest_is_the_chat_whose_last_message_is_newest() -> None:
    latest = latest_chat(MARCH)

    assert latest == LatestChat(MARCH[3], "last message")
    assert (latest.chat.chat_id, latest.why) == (
        "Mira - 2026-03-07@09h00m00s000ms",
        "newest last message",
    )


def test_a_chat_continued_later_is_newer_than_one_started_later() -> None:
    started_first = chat("Mira - 2026-03-01@09h00m00s000ms", "2026-03-09T08:00:00.000Z")
    started_later = chat("Mira - 2026-03-08@09h00m00s000ms", "2026-03-08T09:30:00.000Z")

    assert latest_chat([started_first, started_later]) == LatestChat(started_first, "last message")


def test_the_card_s_chat_field_wins_when_that_chat_is_here() -> None:
    latest = latest_chat(MARCH, card_chat="Mira - 2026-03-05@09h00m00s000ms")

    assert latest == LatestChat(MARCH[2], "card")
    assert (latest.chat.chat_id, latest.why) == (
        "Mira - 2026-03-05@09h00m00s000ms",
        "the card's last opened chat",
    )


def test_a_card_chat_field_naming_a_missing_chat_is_passed_over() -> None:
    latest = latest_chat(MARCH, card_chat="Mira - 2023-5-12 @21h 32m 29s 224ms")

    assert latest == LatestChat(MARCH[3], "last message")


def test_the_card_s_chat_is_found_under_the_name_sillytavern_saved_it_as() -> None:
    saved = chat("What now - 2026-03-01@09h00m00s000ms", "2026-03-01T10:00:00.000Z")

    latest = latest_chat([*MARCH, saved], card_chat="What now? - 2026-03-01@09h00m00s000ms")

    assert latest == LatestChat(saved, "card")


def test_no_chats_have_no_latest() -> None:
    assert latest_chat([]) is None
    assert latest_chat([], card_chat="Mira - 2026-03-05@09h00m00s000ms") is None
    assert chats_oldest_first([]) == []


@pytest.mark.parametrize(
    ("send_date", "when"),
    [
        ("2026-03-05T21:10:00.123Z", datetime(2026, 3, 5, 21, 10, 0, 123000, tzinfo=UTC)),
        ("March 5, 2026 9:10pm", datetime(2026, 3, 5, 21, 10, tzinfo=UTC)),
        ("2026-03-05@21h10m00s", datetime(2026, 3, 5, 21, 10, tzinfo=UTC)),
        (1772745000000, datetime(2026, 3, 5, 21, 10, tzinfo=UTC)),
        ("1772745000000", datetime(2026, 3, 5, 21, 10, tzinfo=UTC)),
    ],
    ids=["iso", "meridiem", "humanized", "epoch number", "epoch text"],
)
def test_every_send_date_form_gives_the_time(send_date: object, when: datetime) -> None:
    assert chat_time(chat("notes", send_date)) == ChatTime(when, "last message")


def test_dates_without_a_zone_are_read_in_the_local_zone() -> None:
    zoneless = chat("Mira - a", "March 5, 2026 11:30pm")
    utc = chat("Mira - b", "2026-03-05T22:00:00.000Z")
    berlin = timezone(timedelta(hours=2))

    assert ids(chats_oldest_first([zoneless, utc])) == ["Mira - b", "Mira - a"]
    assert ids(chats_oldest_first([zoneless, utc], local_zone=berlin)) == ["Mira - a", "Mira - b"]
    assert chat_time(zoneless, local_zone=berlin).when == datetime(2026, 3, 5, 21, 30, tzinfo=UTC)
    assert latest_chat([zoneless, utc], local_zone=berlin) == LatestChat(utc, "last message")


@pytest.mark.parametrize("send_date", [None, "", "yesterday", True, {"a": 1}, -5])
def test_without_a_readable_last_date_the_file_name_s_stamp_counts(send_date: object) -> None:
    started = chat("Mira - 2026-03-04@08h00m00s", send_date)

    assert chat_time(started) == ChatTime(datetime(2026, 3, 4, 8, tzinfo=UTC), "file name")


def test_without_a_date_or_a_stamp_the_file_time_counts() -> None:
    renamed = chat("The thornwall crossing", None, mtime=1772745000.5)

    assert chat_time(renamed) == ChatTime(
        datetime(2026, 3, 5, 21, 10, 0, 500000, tzinfo=UTC), "file time"
    )


def test_the_reason_says_what_placed_the_latest_chat() -> None:
    stamped = chat("Mira - 2026-03-08@08h00m00s", None)
    renamed = chat("Campfire notes", None, mtime=datetime(2026, 3, 9, tzinfo=UTC).timestamp())

    assert latest_chat([*MARCH, stamped]) == LatestChat(stamped, "file name")
    assert latest_chat([*MARCH, stamped]).why == "newest date in its file name"
    assert latest_chat([*MARCH, stamped, renamed]) == LatestChat(renamed, "file time")
    assert latest_chat([renamed]).why == "newest file time"


def test_equal_times_are_ordered_by_file_time_then_by_id() -> None:
    same = "2026-03-05T21:10:00.000Z"
    touched_last = chat("a", same, 7.0)
    chats = [chat("c", same, 5.0), touched_last, chat("b", same, 5.0)]

    assert ids(chats_oldest_first(chats)) == ["b", "c", "a"]
    assert latest_chat(chats) == LatestChat(touched_last, "last message")


@pytest.mark.parametrize(
    ("send_date", "hours"),
    [("0001-01-01T00:00:00", 5), ("9999-12-31T23:59:59", -5)],
)
def test_dates_at_the_ends_of_the_calendar_do_not_break_ordering(
    send_date: str, hours: int
) -> None:
    edge = chat("edge", send_date)
    zone = timezone(timedelta(hours=hours))

    assert ids(chats_oldest_first([edge, *MARCH], local_zone=zone))[0 if hours > 0 else -1] == (
        "edge"
    )


def test_chat_files_are_ordered_from_their_last_lines() -> None:
    files = {path.stem: path for path in FIXTURES.glob("*.jsonl")}
    files["Seraphina - 2026-11-28@19h02m11s482ms"] = sillytavern_sample(
        "Seraphina - 2026-11-28@19h02m11s482ms.jsonl"
    )
    chats = [
        chat(chat_id, last_message_send_date(path.read_text(encoding="utf-8")))
        for chat_id, path in sorted(files.items())
    ]

    assert [chat_time(c).source for c in chats] == ["last message"] * 4
    assert ids(chats_oldest_first(chats)) == [
        "Seraphina - 2024-07-05@14h20m05s",
        "Seraphina - 2026-11-28@19h02m11s482ms",
        "2026-11-30@20h15m03s221ms",
        "The thornwall crossing",
    ]
