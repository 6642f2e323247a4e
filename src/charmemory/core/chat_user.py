"""What the person in a chat is called.

SillyTavern 1.15+ writes `"user_name":"unused"` into chat headers, so the name
cannot be taken from there alone; a prompt must never call the person "unused".
"""

from __future__ import annotations

from collections import Counter

from charmemory.formats.chat import Chat

DEFAULT_USER_NAME = "User"


def chat_user_name(chat: Chat, *, persona: str | None = None) -> str:
    """The person's name: `persona` when given, else the one the chat gives them
    (`named_chat_user`), else `User`, as SillyTavern calls a person without a persona."""
    if persona is not None and persona.strip():
        return persona.strip()
    return named_chat_user(chat) or DEFAULT_USER_NAME


def named_chat_user(chat: Chat) -> str | None:
    """The name the chat gives its person, None when nothing in it names them.

    A header name counts unless it is blank or SillyTavern's placeholder `unused`.
    From the messages, the name on most of the person's messages wins (the most
    recent of equally common names: a persona switched to later).
    """
    header = chat.header.named_user
    if header is not None:
        return header
    names = [name for m in chat.messages if m.is_user and (name := m.name).strip()]
    if not names:
        return None
    counts = Counter(names)
    # max() keeps the first of equal counts, so offer the names newest first.
    return max(dict.fromkeys(reversed(names)), key=counts.__getitem__)
