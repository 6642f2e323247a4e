"""How the embedded model asks for new memories in its own words: a short prompt.

Small local models follow the long default extraction prompt poorly: they copy
chat lines word for word and restate the card (bench/extraction_quality.py
measures it). So when the caller asks for new memories and the request carries
the extraction prompt's sections, the embedded model can ask again in its own
words: short rules (with the saved memories as prose), one worked example as an
earlier turn of the conversation, then the card and the chat. Who is who and how
many bullets come from the caller's answer format, never from the prompt's wording.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from charmemory.core.extraction_answer import SENTINEL
from charmemory.core.extraction_prompt import NO_CARD, NO_MEMORIES
from charmemory.core.pronoun_names import name_pronouns
from charmemory.ports import ChatMessage, NewMemories

_SECTION = r"<{0}>\n(.*?)\n</{0}>"
_CARD = re.compile(_SECTION.format("character_card"), re.S)
_EXISTING = re.compile(_SECTION.format("existing_memories"), re.S)
_CHAT = re.compile(_SECTION.format("chat_messages"), re.S)
_CARD_PLACEHOLDER = re.compile(r"\{\{\s*(char|user)\s*\}\}", re.I)

SYSTEM = f"""\
You write the long-term memory of a role-play character. You read a chat and note \
the few facts the character must still remember months later.
Keep: secrets revealed, names, family, origins, relationships, promises, debts, \
plans, injuries, gifts, decisions.
Skip: greetings, small talk, jokes, food, weather, clothes, step-by-step actions, \
and anything the character card or the saved memories already say.
Write each memory as one short sentence in your own words, in the past tense, with \
names instead of pronouns. Never copy a chat line. Never quote.
Answer with one <memory> block of "- " bullets. If the chat holds nothing worth \
remembering, answer {SENTINEL}."""

# Invented people, places and things, so a leak from the example is easy to spot.
EXAMPLE_CHAT = """\
Ivy: *I push open the smithy door.* "Morning, Bram! Lovely weather."

Bram: "Hmph. Morning. What do you need?"

Ivy: "A bell for the harbour. My twin brother Tomas drowned there last spring."

Bram: *He sets down his hammer.* "I'm sorry, lass. I'll forge it myself, by midwinter."

Ivy: "I can pay you in barley, three sacks."

Bram: "Two sacks. And you'll sweep the forge on Sundays.\""""


def _example_request(chat: str) -> str:
    return f"""\
The character is Bram. The user plays Ivy.

<character_card>
Bram is a gruff blacksmith in the village of Hollowmere.
</character_card>

<chat_messages>
{chat}
</chat_messages>"""


EXAMPLE_REQUEST = _example_request(EXAMPLE_CHAT)
EXAMPLE_ANSWER = """\
<memory>
- Ivy's twin brother Tomas drowned in the harbour last spring.
- Bram promised to forge a memorial bell for the harbour by midwinter.
- Ivy agreed to pay Bram two sacks of barley and to sweep his forge on Sundays.
</memory>"""


# The worked example's people and place, and the things its memories are about: a
# bullet about another chat holds them only when it copies the example.
_EXAMPLE_NAMES = frozenset({"ivy", "bram", "tomas", "hollowmere"})
_EXAMPLE_THINGS = frozenset(
    {"smithy", "harbour", "bell", "forge", "midwinter", "barley", "sacks", "sweep", "twin"}
)
_WORD = re.compile(r"[^\W_]+")


@dataclass(frozen=True)
class CompactStyle:
    """How the short prompt is written; bench/extraction_quality.py measures each choice."""

    worked_example: bool = True
    # "I" and "you" in the chat written as the speakers' names (core/pronoun_names.py).
    name_pronouns: bool = False
    rules: str = SYSTEM
    # The worked example's answer, in the format the rules ask for.
    example_answer: str = EXAMPLE_ANSWER


DEFAULT_STYLE = CompactStyle()


@dataclass(frozen=True)
class ExtractionRequest:
    """The parts of an extraction request that the short prompt needs."""

    card: str
    existing_memories: str
    chat: str
    max_bullets: int
    char: str = ""  # empty when the caller does not say
    user: str = ""


def extraction_request(
    messages: Sequence[ChatMessage], wanted: NewMemories
) -> ExtractionRequest | None:
    """The sections of a request for new memories, or None when its last user message
    has no `<chat_messages>` section (a prompt the short one cannot stand in for)."""
    users = [message.content for message in messages if message.role == "user"]
    request = users[-1] if users else ""
    chat = _CHAT.search(request)
    if chat is None:
        return None
    card, existing = _CARD.search(request), _EXISTING.search(request)
    return ExtractionRequest(
        card=_unless(card.group(1) if card else "", NO_CARD),
        existing_memories=_unless(existing.group(1) if existing else "", NO_MEMORIES),
        chat=chat.group(1).strip(),
        max_bullets=wanted.max_bullets,
        char=wanted.character.strip(),
        user=wanted.user.strip(),
    )


def compact_prompt(
    request: ExtractionRequest, style: CompactStyle = DEFAULT_STYLE
) -> list[ChatMessage]:
    """The short extraction prompt: rules, the worked example, then the request's sections.

    Where the names are known they open the request, and the card's `{{char}}` and
    `{{user}}` are written out, so the model can tell who is who.
    """
    names = {"char": request.char, "user": request.user}
    card = _CARD_PLACEHOLDER.sub(
        lambda match: names[match.group(1).lower()] or match.group(0), request.card
    )
    sections = [f"<character_card>\n{card or NO_CARD}\n</character_card>"]
    if request.char and request.user:
        sections.insert(0, f"The character is {request.char}. The user plays {request.user}.")
    chat = request.chat
    example_request = EXAMPLE_REQUEST
    if style.name_pronouns:
        chat = name_pronouns(chat, request.char, request.user)
        example_request = _example_request(name_pronouns(EXAMPLE_CHAT, "Bram", "Ivy"))
    sections.append(f"<chat_messages>\n{chat}\n</chat_messages>")
    example = (
        [ChatMessage("user", example_request), ChatMessage("assistant", style.example_answer)]
        if style.worked_example
        else []
    )
    system = f"{style.rules}\nWrite at most {request.max_bullets} bullets."
    saved = _bullets(request.existing_memories)
    if saved:
        # As prose in the rules, not as a bullet list beside the chat: shown as a
        # list, the 1.5B model copied the saved memories back as its answer.
        system += f"\nAlready saved, so never write these again: {' '.join(saved)}"
    return [
        ChatMessage("system", system),
        *example,
        ChatMessage("user", "\n\n".join(sections)),
    ]


def without_example_copies(answer: str, prompt: Sequence[ChatMessage]) -> str:
    """``answer`` without the bullets that copy the worked example into another chat.

    The 1.5B model now and then writes one of the example's memories with the real
    chat's names ("Sam agreed to pay him two sacks of barley and to sweep his forge on
    Sundays"): an invented memory. A bullet copies the example when it names one of the
    example's people or its place, or holds two of the things its memories are about,
    that the rest of the prompt (rules, card, saved memories, chat) never mentions.
    A prompt without the worked example keeps every bullet.
    """
    turns = list(prompt)
    shown = [
        i
        for i, turn in enumerate(turns)
        if turn.role == "assistant" and turn.content == EXAMPLE_ANSWER and i > 0
    ]
    if not shown:
        return answer
    example = {shown[0] - 1, shown[0]}
    known = _stems(" ".join(t.content for i, t in enumerate(turns) if i not in example))
    lines = answer.splitlines()
    kept = [line for line in lines if not _copies_example(line, known)]
    if len(kept) == len(lines):
        return answer
    if not any(line.lstrip().startswith("- ") for line in kept):
        return SENTINEL
    return "\n".join(kept)


def _copies_example(line: str, known: set[str]) -> bool:
    if not line.lstrip().startswith("- "):
        return False
    unknown = _stems(line) - known
    return bool(unknown & _NAME_STEMS) or len(unknown & _THING_STEMS) >= 2


def _stems(text: str) -> set[str]:
    """Words without a plural "s", cut to five letters: "bells" meets "bell"."""
    return {_stem(word) for word in _WORD.findall(text)}


def _stem(word: str) -> str:
    word = word.lower()
    return (word[:-1] if len(word) > 3 and word.endswith("s") else word)[:5]


_NAME_STEMS = frozenset(_stem(name) for name in _EXAMPLE_NAMES)
_THING_STEMS = frozenset(_stem(thing) for thing in _EXAMPLE_THINGS)


def _bullets(text: str) -> list[str]:
    """The bullets of a memory list, without their marks (date headings are left out)."""
    return [line.strip()[2:].strip() for line in text.splitlines() if line.strip()[:2] == "- "]


def _unless(text: str, placeholder: str) -> str:
    stripped = text.strip()
    return "" if stripped == placeholder else stripped
