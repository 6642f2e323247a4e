import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from charmemory.core.watermark import (
    MessageChange,
    SourceMessage,
    Watermark,
    changed_since_extraction,
    chunk,
    index_ranges,
    messages_to_extract,
    pending_character_messages,
    reconcile_watermark,
    watermark_after_undo,
)
from charmemory.errors import ConfigError, NotFoundError
from charmemory.formats.chat import Message, message_fingerprint


def message(index: int, text: str | None = None, *, hidden: bool = False) -> SourceMessage:
    text = text if text is not None else f"Message number {index}."
    return SourceMessage(
        index=index,
        is_user=index % 2 == 0,
        text=text,
        fingerprint=message_fingerprint(Message({"mes": text})),
        is_hidden=hidden,
        name="Alex" if index % 2 == 0 else "Seraphina",
    )


def chat_of(texts: list[str]) -> list[SourceMessage]:
    return [message(index, text) for index, text in enumerate(texts)]


def recorded(watermark: Watermark, messages: list[SourceMessage]) -> Watermark:
    """The watermark after ``messages`` were extracted, as the extraction journal records it."""
    fingerprints = {**watermark.fingerprints, **{m.index: m.fingerprint for m in messages}}
    last = max([watermark.last_index, *(m.index for m in messages)])
    return Watermark(last, fingerprints)


def processed(chat: list[SourceMessage], up_to: int) -> Watermark:
    return recorded(Watermark(), [m for m in chat[: up_to + 1] if not m.is_hidden])


def indices(messages: list[SourceMessage]) -> list[int]:
    return [m.index for m in messages]


CHAT = [message(i) for i in range(10)]


def test_extract_now_takes_every_unprocessed_message() -> None:
    assert indices(messages_to_extract(CHAT, Watermark(4))) == [5, 6, 7, 8, 9]
    assert indices(messages_to_extract(CHAT, Watermark())) == list(range(10))
    assert messages_to_extract(CHAT, Watermark(9)) == []


def test_hidden_messages_are_never_selected() -> None:
    chat = [message(0), message(1, hidden=True), message(2)]
    assert indices(messages_to_extract(chat, Watermark())) == [0, 2]
    assert indices(messages_to_extract(chat, Watermark(), forced_range=(0, 2))) == [0, 2]


def test_extract_here_stops_at_the_message_inclusive() -> None:
    assert indices(messages_to_extract(CHAT, Watermark(2), up_to=6)) == [3, 4, 5, 6]
    assert messages_to_extract(CHAT, Watermark(6), up_to=4) == []


def test_a_forced_range_reads_processed_messages_again() -> None:
    assert indices(messages_to_extract(CHAT, Watermark(9), forced_range=(3, 5))) == [3, 4, 5]
    assert indices(messages_to_extract(CHAT, Watermark(), forced_range=(7, 7))) == [7]


def test_positions_outside_the_chat_are_refused_clearly() -> None:
    with pytest.raises(
        NotFoundError, match="message 10 does not exist; this chat has messages 0-9"
    ):
        messages_to_extract(CHAT, Watermark(), up_to=10)
    with pytest.raises(NotFoundError, match="message -1 does not exist"):
        messages_to_extract(CHAT, Watermark(), forced_range=(-1, 3))
    with pytest.raises(ConfigError, match="range 5-2 runs backwards"):
        messages_to_extract(CHAT, Watermark(), forced_range=(5, 2))
    with pytest.raises(ValueError, match="either up_to or forced_range"):
        messages_to_extract(CHAT, Watermark(), up_to=3, forced_range=(1, 2))


def test_messages_must_be_the_whole_chat_in_order() -> None:
    with pytest.raises(ValueError, match="index 2 at position 1"):
        messages_to_extract([message(0), message(2)], Watermark())


def test_chunks_are_as_few_as_allowed_and_even() -> None:
    chat = [message(i) for i in range(41)]
    assert [len(part) for part in chunk(chat, 20)] == [14, 14, 13]
    assert [len(part) for part in chunk(chat[:20], 20)] == [20]
    assert chunk([], 20) == []
    with pytest.raises(ConfigError):
        chunk(chat, 0)


@settings(max_examples=150)
@given(total=st.integers(0, 500), per_call=st.integers(1, 200))
def test_chunking_covers_every_message_once_in_order(total: int, per_call: int) -> None:
    chat = [message(i) for i in range(total)]
    parts = chunk(chat, per_call)
    assert [m for part in parts for m in part] == chat
    assert len(parts) == math.ceil(total / per_call)
    assert all(1 <= len(part) <= per_call for part in parts)
    if parts:
        assert max(map(len, parts)) - min(map(len, parts)) <= 1


def test_pending_counts_visible_character_messages_after_the_watermark() -> None:
    chat = [message(0), message(1), message(2), message(3, hidden=True), message(5 - 1), message(5)]
    assert pending_character_messages(chat, Watermark()) == 2
    assert pending_character_messages(chat, Watermark(1)) == 1


TEXTS = [f"Line {i} of the story." for i in range(10)]


def test_an_untouched_chat_reports_no_changes_and_keeps_its_watermark() -> None:
    chat = chat_of(TEXTS)
    watermark = processed(chat, 5)
    longer = chat_of([*TEXTS, "A brand new line."])
    assert changed_since_extraction(longer, watermark) == []
    assert reconcile_watermark(longer, watermark) == watermark


def test_an_edit_in_the_middle_is_reported_and_not_redone() -> None:
    watermark = processed(chat_of(TEXTS), 7)
    edited = TEXTS.copy()
    edited[3] = "Line 3, rewritten after the fact."
    chat = chat_of(edited)
    assert changed_since_extraction(chat, watermark) == [MessageChange("changed", 3, 3)]
    reconciled = reconcile_watermark(chat, watermark)
    assert reconciled.last_index == 7
    # The old text stays on record, so the edit is reported until it is extracted again.
    assert changed_since_extraction(chat, reconciled) == [MessageChange("changed", 3, 3)]
    assert changed_since_extraction(chat, recorded(reconciled, [chat[3]])) == []


def test_a_swiped_last_message_is_reported_and_extracted_again() -> None:
    watermark = processed(chat_of(TEXTS), 9)
    swiped = [*TEXTS[:9], "Another swipe of the last reply."]
    chat = chat_of(swiped)
    assert changed_since_extraction(chat, watermark) == [MessageChange("changed", 9, 9)]
    reconciled = reconcile_watermark(chat, watermark)
    assert indices(messages_to_extract(chat, reconciled)) == [9]


def test_a_deletion_in_the_middle_reports_only_the_deleted_message() -> None:
    watermark = processed(chat_of(TEXTS), 7)
    # Message 3 deleted; 4-9 move down to 3-8, and 8-9 were never extracted.
    chat = chat_of(TEXTS[:3] + TEXTS[4:])
    changes = changed_since_extraction(chat, watermark)
    assert changes == [MessageChange("deleted", 3, None)]
    assert changes[0].describe() == "message 3 was deleted after extraction"
    reconciled = reconcile_watermark(chat, watermark)
    assert reconciled.last_index == 6
    # The first never-extracted message is neither skipped nor an old one read twice.
    assert [m.text for m in messages_to_extract(chat, reconciled)] == TEXTS[8:]
    assert changed_since_extraction(chat, reconciled) == []


def test_messages_deleted_from_the_end_are_reported_and_new_ones_are_extracted() -> None:
    watermark = processed(chat_of(TEXTS), 9)
    chat = chat_of(TEXTS[:7])
    assert changed_since_extraction(chat, watermark) == [
        MessageChange("deleted", 7, None),
        MessageChange("deleted", 8, None),
        MessageChange("deleted", 9, None),
    ]
    continued = chat_of([*TEXTS[:7], "New turn A.", "New turn B."])
    reconciled = reconcile_watermark(continued, watermark)
    assert [m.text for m in messages_to_extract(continued, reconciled)] == [
        "New turn A.",
        "New turn B.",
    ]


def test_an_unhidden_message_among_extracted_ones_is_reported_as_added() -> None:
    chat = [message(i, TEXTS[i], hidden=i == 4) for i in range(10)]
    watermark = processed(chat, 7)
    unhidden = chat_of(TEXTS)
    changes = changed_since_extraction(unhidden, watermark)
    assert changes == [MessageChange("added", None, 4)]
    assert "never extracted" in changes[0].describe()


def test_hiding_an_extracted_message_is_not_a_change() -> None:
    watermark = processed(chat_of(TEXTS), 7)
    chat = [message(i, TEXTS[i], hidden=i == 2) for i in range(10)]
    assert changed_since_extraction(chat, watermark) == []


def test_messages_before_the_first_fingerprint_are_not_reported() -> None:
    chat = chat_of(TEXTS)
    # Imported at 4 without fingerprints, then 5-7 extracted here.
    watermark = recorded(Watermark(4), chat[5:8])
    assert changed_since_extraction(chat, watermark) == []
    assert reconcile_watermark(chat, watermark).last_index == 7


def test_a_watermark_without_fingerprints_is_only_kept_inside_the_chat() -> None:
    assert reconcile_watermark(CHAT[:5], Watermark(8)) == Watermark(4)
    assert changed_since_extraction(CHAT[:5], Watermark(8)) == []


@settings(max_examples=150)
@given(
    data=st.data(),
    size=st.integers(1, 40),
)
def test_after_any_deletions_exactly_the_surviving_unprocessed_messages_are_extracted(
    data: st.DataObject, size: int
) -> None:
    texts = [f"Distinct line {i}." for i in range(size)]
    last = data.draw(st.integers(-1, size - 1), label="last extracted")
    deleted = data.draw(st.sets(st.integers(0, size - 1)), label="deleted")
    watermark = processed(chat_of(texts), last)
    survivors = [i for i in range(size) if i not in deleted]
    chat = chat_of([texts[i] for i in survivors])

    reconciled = reconcile_watermark(chat, watermark)
    extracted_next = [m.text for m in messages_to_extract(chat, reconciled)]
    assert extracted_next == [texts[i] for i in survivors if i > last]
    reported = changed_since_extraction(chat, watermark)
    gone = [i for i in sorted(deleted) if i <= last]
    assert [change.old_index for change in reported] == gone
    if last not in deleted:
        assert reported == [MessageChange("deleted", i, None) for i in gone]
    else:
        # With the last extracted message gone, a message that moved into its place
        # cannot be told from a swipe of it: "changed" (replaced) is reported instead.
        assert {change.kind for change in reported} <= {"deleted", "changed"}


def spans(messages: list[SourceMessage], *ranges: tuple[int, int]) -> list[dict[int, str]]:
    return [{m.index: m.fingerprint for m in messages[a : b + 1]} for a, b in ranges]


def test_undoing_the_last_extracted_block_makes_its_messages_unprocessed() -> None:
    chat = chat_of([f"line {n}" for n in range(20)])
    done = recorded(recorded(Watermark(), chat[:10]), chat[10:])

    moved = watermark_after_undo(chat, done, removed=spans(chat, (10, 19)))

    assert moved == recorded(Watermark(), chat[:10])
    assert messages_to_extract(chat, moved) == chat[10:]


def test_undoing_a_block_finds_its_messages_where_they_are_now() -> None:
    chat = chat_of([f"line {n}" for n in range(20)])
    block = spans(chat, (10, 19))
    del chat[3]  # an extracted message deleted since: the rest moved down
    chat = chat_of([m.text for m in chat])
    done = reconcile_watermark(
        chat, recorded(Watermark(), chat_of([f"line {n}" for n in range(20)]))
    )

    moved = watermark_after_undo(chat, done, removed=block)

    assert moved.last_index == 8
    assert [m.text for m in messages_to_extract(chat, moved)][:1] == ["line 10"]


def test_undoing_a_block_whose_messages_are_gone_or_unprocessed_moves_nothing() -> None:
    chat = chat_of([f"line {n}" for n in range(20)])
    done = recorded(Watermark(), chat[:10])

    assert watermark_after_undo(chat, done, removed=spans(chat, (10, 19))) == done


def test_a_block_brought_back_right_after_the_watermark_counts_as_processed_again() -> None:
    chat = chat_of([f"line {n}" for n in range(20)])
    done = recorded(Watermark(), chat[:10])

    back = watermark_after_undo(chat, done, removed=[], restored=spans(chat, (10, 19)))

    assert back == recorded(done, chat[10:])


@pytest.mark.parametrize("edited", [True, False])
def test_a_block_brought_back_is_not_processed_again_past_a_gap_or_an_edit(
    edited: bool,
) -> None:
    chat = chat_of([f"line {n}" for n in range(20)])
    block = spans(chat, (12, 19) if not edited else (10, 19))
    if edited:
        chat[15] = message(15, "line 15, edited")
    done = recorded(Watermark(), chat[:10])

    assert watermark_after_undo(chat, done, removed=[], restored=block) == done


@pytest.mark.parametrize(
    ("indices", "shown"),
    [
        ([], ""),
        ([4], "4"),
        (range(148), "0-147"),
        ([9, 0, 1, 2, 12, 14, 15, 2], "0-2, 9, 12, 14-15"),
    ],
)
def test_message_indices_read_as_ranges(indices: list[int], shown: str) -> None:
    assert index_ranges(indices) == shown
