"""What the person in a chat is called.

SillyTavern 1.15+ writes `"user_name":"unused"` into chat headers, so the name
cannot be taken from there alone; a prompt must never call the person "unused".
"""

from __future__ import annotations

from collections import Counter

from charmemory.formats.chat import Chat

DEFAULT_USER_NAME = "User"


def chat_user_name(chat: Chat, *, persona: str | None = None) -> str:
    """The person's name: `persona` when given, else the header's, else their messages'.

    A header name counts unless it is blank or SillyTavern's placeholder `unused`.
    From the messages, the name on most of the person's messages wins (the most
    recent of equally common names: a persona switched to later). `User`, as
    SillyTavern calls a person without a persona, when nothing names them.
    """
    if persona is not None and persona.strip():
        return persona.strip()
    header = chat.header.named_user
    if header is not None:
        return header
    names = [name for m in chat.messages if m.is_user and (name := m.name).strip()]
    if not names:
        return DEFAULT_USER_NAME
    counts = Counter(names)
    # max() keeps the first of equal counts, so offer the names newest first.
    return max(dict.fromkeys(reversed(names)), key=counts.__getitem__)
