"""The messages a chat turn's memory query is built from.

A chat opens with the character's greeting: the card's text, the same in every
chat and about none of what the user says. On the first turns it is one of the
last messages, and a greeting of 70-300 words outweighs the user's first line
in the query (BM25 reads all its words; the embedded words are mostly its own),
so the memories injected answer the greeting, not the user (a user asking about
a brother got the ship's memories). The greeting, every character message before
the user's first one (a group chat opens with one per member), is left out while
a later message is there to query with; the query then reads the newest
messages, newest first (`core.retrieval.build_query`): the user's latest words
lead and the character's reply before them follows.
"""

from __future__ import annotations

from collections.abc import Sequence

from charmemory.core.world_info import GenerationType, ScanMessage, prompt_messages
from charmemory.formats.chat import Chat


def query_messages(chat: Chat, kind: GenerationType = "normal") -> list[str]:
    """The texts of the messages the next reply's memory query reads, oldest first.

    The messages the prompt is built from (hidden ones and, for a swipe, the
    replaced reply left out) without the chat's greeting, unless nothing else is left.
    """
    return query_texts(chat, prompt_messages(chat, kind))


def query_texts(chat: Chat, visible: Sequence[ScanMessage]) -> list[str]:
    """`query_messages` of the prompt's messages ``visible``, already read from ``chat``."""
    first_user = next(
        (number for number, shown in enumerate(visible) if chat.messages[shown.id].is_user),
        None,
    )
    after_greeting = visible[first_user:] if first_user is not None else []
    return [shown.text for shown in (after_greeting or visible)]
