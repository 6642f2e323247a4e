"""What `charmemory doctor` checks in a narrator chat, and how it explains one generation.

The checks: a one-on-one chat, manual lorebook mode on, an omniscient book
selected and existing; for every member (retired included) a book that exists,
is theirs alone and is not the omniscient book; names unique ignoring case and
accents; what reading the cast dropped; replies stamped with ids no member
has; and the stretches of replies with no stamp (their scenes need their
participants confirmed).

The explanation answers, for one member and one reply, whether that member's
book was in the reply's generation and why: was the member in the generation's
snapshot (the reply's stamp), is the reply stamped at all, is the book valid,
and what the generation's record (when one is kept) says it read.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from charmemory.core.books.branching import normalised
from charmemory.core.narrator.cast import CastMember, book_issues
from charmemory.core.narrator.mode import Activation
from charmemory.core.narrator.stamps import CAST_SOURCE, is_narrator_reply, stamp_of
from charmemory.formats.chat import Chat


@dataclass(frozen=True)
class Finding:
    ok: bool
    text: str

    def __str__(self) -> str:
        return f"{'ok' if self.ok else 'PROBLEM'}: {self.text}"


def check(
    activation: Activation,
    *,
    group_chat: bool,
    lorebook_mode: str,
    books: Sequence[str],
    chat: Chat,
    dropped: Sequence[str] = (),
) -> list[Finding]:
    """Every check of a narrator chat, in order; each one ok or a problem."""
    config, omniscient = activation.config, activation.omniscient
    found = [
        Finding(
            not group_chat,
            "a group chat (narrator mode is for one-on-one chats)"
            if group_chat
            else "a one-on-one chat",
        ),
        Finding(
            lorebook_mode == "manual",
            f"manual lorebook mode is {'on' if lorebook_mode == 'manual' else 'off'} "
            f"(books.lorebook_mode: {lorebook_mode})",
        ),
        Finding(
            config.enabled,
            "narrator mode is " + ("enabled" if config.enabled else "not enabled for this chat"),
        ),
    ]
    if omniscient is None:
        found.append(Finding(False, "no omniscient memory book is selected"))
    else:
        exists = omniscient in books
        state = "exists" if exists else "is missing"
        found.append(Finding(exists, f"omniscient book {omniscient!r} {state}"))
    found += [Finding(False, f"dropped while reading the cast: {line}") for line in dropped]
    issues = {issue.member.id: issue for issue in book_issues(config, omniscient, books)}
    for member in config.members:
        issue = issues.get(member.id)
        label = _label(member)
        found.append(
            Finding(False, str(issue)) if issue else Finding(True, f"{label}: {member.book!r}")
        )
    seen: dict[str, CastMember] = {}
    for member in config.members:
        key = normalised(member.name)
        if key in seen:
            found.append(
                Finding(False, f"{member.name} and {seen[key].name} are one name (case or accents)")
            )
        seen.setdefault(key, member)
    known = {member.id for member in config.members}
    unknown: dict[str, list[int]] = {}
    for index, message in enumerate(chat.messages):
        for member_id in stamp_of(message) or ():
            if member_id not in known:
                unknown.setdefault(member_id, []).append(index)
    for member_id, where in unknown.items():
        found.append(
            Finding(False, f"messages {_numbers(where)} are stamped with {member_id}: no member")
        )
    gaps = unstamped_stretches(chat)
    if gaps:
        shown = ", ".join(f"{a}-{b}" if a != b else str(a) for a, b in gaps)
        found.append(
            Finding(
                False,
                f"replies without a cast stamp in messages {shown}: scenes there need their "
                "participants confirmed (charmemory scene ... --participants)",
            )
        )
    else:
        found.append(Finding(True, "every reply carries a cast stamp"))
    return found


def unstamped_stretches(chat: Chat) -> list[tuple[int, int]]:
    """Stretches of the chat whose narrator replies have no stamp, as (first, last) messages."""
    stretches: list[tuple[int, int]] = []
    start: int | None = None
    last = 0
    for index, message in enumerate(chat.messages):
        if not is_narrator_reply(message):
            continue
        if stamp_of(message) is None:
            start = index if start is None else start
            last = index
        elif start is not None:
            stretches.append((start, last))
            start = None
    if start is not None:
        stretches.append((start, last))
    return stretches


def explain(
    activation: Activation,
    member: CastMember,
    index: int,
    chat: Chat,
    *,
    books: Sequence[str],
    record: Mapping[str, Any] | None,
) -> list[str]:
    """Why ``member``'s book was, or was not, in the generation of reply ``index``.

    ``record`` is the newest kept record of a generation that wrote message ``index``
    (its `number`, `kind`, `lorebooks`, `narrator_cast`), if any.
    """
    config, omniscient = activation.config, activation.omniscient
    message = chat.messages[index]
    book = repr(member.book)
    lines: list[str] = []
    if message.is_user:
        return [
            f"message {index} is the user's: its stamp is the active cast when it was sent, "
            "and no generation wrote it; ask about the reply after it"
        ]
    ids = stamp_of(message)
    in_snapshot = ids is not None and member.id in ids
    if ids is None:
        lines.append(
            f"message {index} carries no cast stamp: it was generated outside narrator mode "
            "(or before it), so narrator mode added no cast book to its generation"
        )
    else:
        shown = ", ".join(config.names(ids)) or "nobody"
        lines.append(f"message {index} is stamped with the cast of its generation: {shown}")
        lines.append(
            f"{member.name} was {'' if in_snapshot else 'not '}in that snapshot"
            + ("" if in_snapshot else " (not in the active cast when the generation started)")
        )
    if member.retired:
        lines.append(f"{member.name} is retired now (their book joins no new generation)")
    problem = next(
        (i for i in book_issues(config, omniscient, books) if i.member.id == member.id), None
    )
    lines.append(
        f"{member.name}'s book: {problem}" if problem else f"{member.name}'s book {book} is valid"
    )
    if record is not None:
        read = any(
            item.get("source") == CAST_SOURCE and item.get("name") == member.book
            for item in record.get("lorebooks") or []
            if isinstance(item, Mapping)
        )
        snap = record.get("narrator_cast")
        lines.append(
            f"generation {record.get('number')} ({record.get('kind')}), the newest kept for "
            f"message {index}, {'read' if read else 'did not read'} {book}"
            + (f"; its snapshot: {', '.join(config.names(snap)) or 'nobody'}" if snap else "")
        )
        joined = read
    else:
        lines.append("no record of that generation is kept; judged from the stamp")
        joined = in_snapshot and problem is None
    lines.append(
        f"so {member.name}'s book {book} was {'' if joined else 'not '}in the generation "
        f"of message {index}"
    )
    return lines


def _label(member: CastMember) -> str:
    return member.name + (" (retired)" if member.retired else "")


def _numbers(values: Sequence[int]) -> str:
    shown = ", ".join(map(str, values[:8]))
    return shown + (f" and {len(values) - 8} more" if len(values) > 8 else "")
