"""When a member who joined a group chat late began to hear it.

A member added to a group while one of its chats is under way was not there for
what was said before: its memories come only from the messages that follow. The
join is recorded as the chat's length then, with the fingerprint of the message
before it, so deleting earlier messages (here or in SillyTavern) does not move
the member's arrival: the message is found again by its fingerprint.
"""

from __future__ import annotations

from collections.abc import Sequence

from charmemory.formats.chat import Chat, message_fingerprint
from charmemory.formats.group import GroupJoin


def join_now(chat: Chat, date: str) -> GroupJoin:
    """A member joining ``chat`` as it stands: it hears every message from the next on."""
    after = message_fingerprint(chat.messages[-1]) if chat.messages else ""
    return GroupJoin(len(chat.messages), after, date)


def heard_from(join: GroupJoin | None, fingerprints: Sequence[str]) -> int:
    """The first message the member heard, in the chat as it is now (0: all of it).

    The message before the join is looked for where it was, then further up (earlier
    messages deleted); when it is gone or changed, the recorded position stands,
    within the chat's length.
    """
    if join is None or join.at == 0:
        return 0
    before = join.at - 1
    if before < len(fingerprints) and fingerprints[before] == join.after:
        return join.at
    for index in range(min(before, len(fingerprints) - 1), -1, -1):
        if fingerprints[index] == join.after:
            return index + 1
    return min(join.at, len(fingerprints))
