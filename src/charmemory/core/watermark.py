"""Which chat messages an extraction reads, and which ones changed after being read.

Each chat keeps a watermark: the position of the last message extracted (-1 for
none) and a fingerprint of every message it extracted, taken from the text that was
active then. Messages after the watermark are unprocessed. Hidden messages are never
sent, so they are never selected and never fingerprinted.

Positions are not identities: deleting a message shifts every later one down. So
when the chat changes under a watermark, `changed_since_extraction` aligns the
recorded fingerprints with the chat as it is now (a diff over fingerprints), and
`reconcile_watermark` moves the watermark to where its messages went, so a deletion
neither skips new messages nor extracts old ones twice.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from typing import Literal

from charmemory.errors import ConfigError, NotFoundError


@dataclass(frozen=True)
class SourceMessage:
    """One chat message as extraction sees it; `text` is the active swipe."""

    index: int
    is_user: bool
    text: str
    fingerprint: str
    is_hidden: bool = False
    name: str = ""


@dataclass(frozen=True)
class Watermark:
    last_index: int = -1
    fingerprints: Mapping[int, str] = field(default_factory=dict)


ChangeKind = Literal["changed", "deleted", "added"]


@dataclass(frozen=True)
class MessageChange:
    """A difference between what was extracted and the chat as it is now.

    `old_index` is where the message was when it was extracted, `new_index` where it
    is now; a deleted message has no `new_index`, an added one no `old_index`.
    """

    kind: ChangeKind
    old_index: int | None
    new_index: int | None

    def describe(self) -> str:
        if self.kind == "changed":
            moved = "" if self.old_index == self.new_index else f" (then message {self.old_index})"
            return (
                f"message {self.new_index}{moved} was edited, swiped or replaced after extraction"
            )
        if self.kind == "deleted":
            return f"message {self.old_index} was deleted after extraction"
        return f"message {self.new_index} was never extracted though later messages were"


def messages_to_extract(
    messages: Sequence[SourceMessage],
    watermark: Watermark,
    *,
    up_to: int | None = None,
    forced_range: tuple[int, int] | None = None,
) -> list[SourceMessage]:
    """The visible messages an extraction reads, in chat order.

    Default ("Extract Now"): every unprocessed message. `up_to` ("Extract Here"):
    the unprocessed ones up to and including that position. `forced_range` (first,
    last), inclusive: those messages whether processed or not.
    """
    if up_to is not None and forced_range is not None:
        raise ValueError("give either up_to or forced_range, not both")
    _check_positions(messages)
    first, last = watermark.last_index + 1, len(messages) - 1
    if up_to is not None:
        last = _existing(messages, up_to)
    if forced_range is not None:
        first, last = (_existing(messages, position) for position in forced_range)
        if first > last:
            raise ConfigError(
                f"message range {first}-{last} runs backwards; give the first message first"
            )
    return [message for message in messages[max(first, 0) : last + 1] if not message.is_hidden]


def chunk(messages: Sequence[SourceMessage], per_call: int) -> list[list[SourceMessage]]:
    """Split into as few LLM calls as `per_call` allows, sized evenly.

    Even sizes (14, 14, 13 rather than 20, 20, 1) spare the last call from judging a
    lone message without the context around it.
    """
    if per_call < 1:
        raise ConfigError(f"messages per LLM call must be at least 1, not {per_call}")
    count = math.ceil(len(messages) / per_call)
    chunks: list[list[SourceMessage]] = []
    start = 0
    for number in range(count):
        size = len(messages) // count + (1 if number < len(messages) % count else 0)
        chunks.append(list(messages[start : start + size]))
        start += size
    return chunks


def index_ranges(indices: Iterable[int]) -> str:
    """Message positions as people read them: `0-9, 12, 14-20` (sorted, runs joined)."""
    runs: list[list[int]] = []
    for index in sorted(set(indices)):
        if runs and index == runs[-1][1] + 1:
            runs[-1][1] = index
        else:
            runs.append([index, index])
    return ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in runs)


def pending_character_messages(messages: Sequence[SourceMessage], watermark: Watermark) -> int:
    """Visible character messages after the watermark: what the trigger counter stands for."""
    return sum(
        1
        for message in messages[watermark.last_index + 1 :]
        if not message.is_user and not message.is_hidden
    )


def changed_since_extraction(
    messages: Sequence[SourceMessage], watermark: Watermark
) -> list[MessageChange]:
    """Extracted messages that were since edited, swiped or deleted, in chat order.

    A message that disappears shifts the rest down; aligning fingerprints recognises
    the shifted messages as unchanged and reports only the deleted one. A visible
    message that now sits among extracted ones without having been extracted (it
    was unhidden, for example) is reported as added. Messages after the last
    extracted one that still matches are simply new and not reported.
    """
    return _align(messages, watermark).changes


def reconcile_watermark(messages: Sequence[SourceMessage], watermark: Watermark) -> Watermark:
    """The watermark moved to follow its messages through deletions and swipes.

    It ends right after the last extracted message that is still unchanged, so a
    swiped or regenerated final message is extracted again in its new form, while
    an edit further up (followed by unchanged messages) stays reported, not redone.
    Fingerprints move with their messages; those of deleted messages are dropped.
    """
    return _align(messages, watermark).watermark


@dataclass(frozen=True)
class _Alignment:
    changes: list[MessageChange]
    watermark: Watermark


def _align(messages: Sequence[SourceMessage], watermark: Watermark) -> _Alignment:
    _check_positions(messages)
    recorded = sorted(
        (index, fingerprint)
        for index, fingerprint in watermark.fingerprints.items()
        if index <= watermark.last_index
    )
    if not recorded:
        # Nothing to align with: all that can be known is where the chat ends.
        return _Alignment([], Watermark(min(watermark.last_index, len(messages) - 1)))
    if _untouched(messages, recorded):
        return _Alignment([], Watermark(recorded[-1][0], dict(recorded)))
    old = [fingerprint for _, fingerprint in recorded]
    new = [message.fingerprint for message in messages]
    opcodes = SequenceMatcher(None, old, new, autojunk=False).get_opcodes()
    last_equal = max((n for n, op in enumerate(opcodes) if op[0] == "equal"), default=-1)

    changes: list[MessageChange] = []
    moved: dict[int, str] = {}
    for number, (tag, old_start, old_end, new_start, new_end) in enumerate(opcodes):
        in_tail = number > last_equal
        if tag == "equal":
            for offset in range(old_end - old_start):
                moved[new_start + offset] = old[old_start + offset]
            continue
        paired = min(old_end - old_start, new_end - new_start)
        for offset in range(paired):
            changes.append(
                MessageChange("changed", recorded[old_start + offset][0], new_start + offset)
            )
            if not in_tail:
                # Still covered by the watermark: keep the old fingerprint, so the
                # edit stays reported until the message is extracted again.
                moved[new_start + offset] = old[old_start + offset]
        changes.extend(
            MessageChange("deleted", recorded[position][0], None)
            for position in range(old_start + paired, old_end)
        )
        # Messages before the first fingerprint were extracted before fingerprints were
        # kept (a watermark imported from SillyTavern); they were not skipped.
        if not in_tail and number > 0:
            changes.extend(
                MessageChange("added", None, position)
                for position in range(new_start + paired, new_end)
                if not messages[position].is_hidden
            )

    last_index = -1
    if last_equal >= 0:
        _, _, _, _, new_end = opcodes[last_equal]
        last_index = new_end - 1
    kept = {index: fingerprint for index, fingerprint in moved.items() if index <= last_index}
    return _Alignment(changes, Watermark(last_index, kept))


def watermark_after_undo(
    messages: Sequence[SourceMessage],
    watermark: Watermark,
    *,
    removed: Sequence[Mapping[int, str]],
    restored: Sequence[Mapping[int, str]] = (),
) -> Watermark:
    """The watermark after an undo took extracted blocks out of the memory file or
    brought some back, each block given by the messages it came from (position:
    fingerprint, as they were extracted).

    A removed block's messages count as unprocessed again: the watermark moves back
    to just before the first of them it still covers, found by fingerprint, so
    messages deleted or moved since do not matter. A restored block's messages count
    as processed again only when they come right after the watermark, unchanged;
    otherwise they are simply extracted again (and repeated memories dropped then).
    """
    _check_positions(messages)
    last = watermark.last_index
    for span in removed:
        wanted = set(span.values())
        found = [i for i, fp in watermark.fingerprints.items() if i <= last and fp in wanted]
        if found:
            last = min(found) - 1
    kept = {i: fp for i, fp in watermark.fingerprints.items() if i <= last}
    for span in sorted(filter(None, restored), key=min):
        first, end = min(span), max(span)
        follows = first > last and all(m.is_hidden for m in messages[last + 1 : first])
        unchanged = end < len(messages) and all(
            messages[i].fingerprint == fp for i, fp in span.items()
        )
        if follows and unchanged:
            last = end
            kept.update(span)
    return Watermark(last, kept)


def _untouched(messages: Sequence[SourceMessage], recorded: list[tuple[int, str]]) -> bool:
    """The common case, checked in linear time: every extracted message is where it was,
    as it was, and no visible message sits unextracted between them."""
    fingerprints = dict(recorded)
    first, last = recorded[0][0], recorded[-1][0]
    if last >= len(messages):
        return False
    return all(
        messages[index].fingerprint == fingerprints[index]
        if index in fingerprints
        else messages[index].is_hidden
        for index in range(first, last + 1)
    )


def _check_positions(messages: Sequence[SourceMessage]) -> None:
    for position, message in enumerate(messages):
        if message.index != position:
            raise ValueError(
                f"messages must be the whole chat in order; found index {message.index} "
                f"at position {position}"
            )


def _existing(messages: Sequence[SourceMessage], position: int) -> int:
    if not 0 <= position < len(messages):
        span = f"messages 0-{len(messages) - 1}" if messages else "no messages"
        raise NotFoundError(f"message {position} does not exist; this chat has {span}")
    return position
