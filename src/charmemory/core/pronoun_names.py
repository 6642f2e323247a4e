"""Names in place of "I" and "you" in a rendered chat, so a small model keeps straight who
did what.

A small model reading `Kael: "My sister Lyra is held in Greywatch."` in a chat with
Thalindra wrote "Thalindra's sister Lyra" (bench/extraction_quality.py counts such
inverted facts). In a message, "I", "me" and "my" are its speaker; in a chat of two,
"you" and "your" are the other one. Writing the names in their place
(`Kael: "Kael's sister Lyra is held in Greywatch."`) leaves the model nothing to
resolve. The text gets clumsier ("Kael swear"), never ambiguous; the chat itself is
never changed, only the text a model is asked to read.

The chat is `Name: text` paragraphs (`message_cleaning.join_messages`); a paragraph
that does not start with a known speaker's name continues the message before it.
"""

from __future__ import annotations

import re

# Matched longest first, so "I'm" is one match, not "I" and a stray "'m". "Mine" is left
# out: in role-play it is as often the silver mine as the pronoun. "Myself" and
# "yourself" stay: they follow a subject that is already named ("Bram will forge it
# myself"), so they tell nothing more about who.
_FIRST = {
    "i'm": "{} is",
    "i am": "{} is",
    "i was": "{} was",
    "i've": "{} has",
    "i have": "{} has",
    "i'll": "{} will",
    "i'd": "{} would",
    "i": "{}",
    "me": "{}",
    "my": "{}'s",
}
_SECOND = {
    "you're": "{} is",
    "you are": "{} is",
    "you were": "{} was",
    "you've": "{} has",
    "you have": "{} has",
    "you'll": "{} will",
    "you'd": "{} would",
    "you": "{}",
    "your": "{}'s",
    "yours": "{}'s",
}
_APOSTROPHES = "'\u2019"


def _pattern(forms: dict[str, str]) -> re.Pattern[str]:
    longest_first = sorted(forms, key=len, reverse=True)
    alternatives = "|".join(
        re.escape(form).replace("'", f"[{_APOSTROPHES}]").replace(r"\ ", r"\s+")
        for form in longest_first
    )
    # Whole words only: "mine" in "determined" or "you" in "youth" stay as they are.
    return re.compile(rf"(?<![\w{_APOSTROPHES}-])(?:{alternatives})(?![\w-])", re.I)


_FIRST_PERSON = _pattern(_FIRST)
_SECOND_PERSON = _pattern(_SECOND)


def name_pronouns(chat: str, char: str, user: str) -> str:
    """`chat` with each speaker's "I" and, in a chat of two, "you" written as names."""
    if not char or not user or char == user:
        return chat
    speakers = _speakers(chat, (char, user))
    if speakers is None:
        return chat
    two = set(speakers) <= {char, user}
    other = {char: user, user: char}
    paragraphs = []
    for speaker, paragraph in zip(speakers, chat.split("\n\n"), strict=True):
        if speaker in other:
            head, text = _split_name(paragraph, speaker)
            text = _replace(_FIRST_PERSON, _FIRST, speaker, text)
            if two:
                text = _replace(_SECOND_PERSON, _SECOND, other[speaker], text)
            paragraph = head + text
        paragraphs.append(paragraph)
    return "\n\n".join(paragraphs)


def _speakers(chat: str, known: tuple[str, ...]) -> list[str] | None:
    """The speaker of each paragraph ("" for a third speaker's), or None when the first
    paragraph names no speaker (not a rendered chat)."""
    found: list[str] = []
    speaker: str | None = None
    for paragraph in chat.split("\n\n"):
        named = re.match(r"([^\n:]{1,80}): ", paragraph)
        label = named.group(1) if named is not None else None
        if label in known:
            speaker = label
        elif label is not None and (speaker is None or _looks_like_speaker(label)):
            speaker = ""
        if speaker is None:
            return None
        found.append(speaker)
    return found


def _looks_like_speaker(label: str) -> bool:
    """A third speaker's `Name: ` (a short capitalised label, not a sentence with a colon)."""
    return label[:1].isupper() and len(label.split()) <= 3


def _split_name(paragraph: str, speaker: str) -> tuple[str, str]:
    prefix = f"{speaker}: "
    if paragraph.startswith(prefix):
        return prefix, paragraph[len(prefix) :]
    return "", paragraph


def _replace(pattern: re.Pattern[str], forms: dict[str, str], name: str, text: str) -> str:
    def named(match: re.Match[str]) -> str:
        key = " ".join(match.group(0).lower().replace("\u2019", "'").split())
        return forms[key].format(name)

    return pattern.sub(named, text)
