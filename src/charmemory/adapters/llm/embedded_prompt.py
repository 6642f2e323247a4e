"""How the embedded model is asked for memories: a short prompt and an answer grammar.

Small local models follow the long default extraction prompt poorly: they copy
chat lines word for word and restate the card (bench/extraction_quality.py
measures it). So when a request carries the extraction prompt's sections, the
embedded model can ask again in its own words: short rules (with the saved
memories as prose), one worked example as an earlier turn of the conversation,
then the card and the chat. Whatever the
prompt, the answer is held by a grammar to what the answer parser reads: one
`<memory>` block of `- ` bullets, or NO_NEW_MEMORIES.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from charmemory.core.extraction_answer import SENTINEL
from charmemory.core.extraction_prompt import DEFAULT_EXTRACTION_PROMPT, NO_CARD, NO_MEMORIES
from charmemory.ports import ChatMessage

DEFAULT_MAX_BULLETS = 8

_SECTION = r"<{0}>\n(.*?)\n</{0}>"
_CARD = re.compile(_SECTION.format("character_card"), re.S)
_EXISTING = re.compile(_SECTION.format("existing_memories"), re.S)
_CHAT = re.compile(_SECTION.format("chat_messages"), re.S)
_MAX_BULLETS = re.compile(r"at most\s+(\d{1,3})\s+bullets", re.I)
_CARD_PLACEHOLDER = re.compile(r"\{\{\s*(char|user)\s*\}\}", re.I)


def _names_pattern(template: str) -> re.Pattern[str]:
    """The default prompt's sentence naming the character and the user, as a pattern."""
    start = template.index("{{char}}")
    end = template.index("{{user}}", start) + len("{{user}}") + 1  # and the mark after it
    sentence = template[template.rfind("\n", 0, start) + 1 : end]
    pattern = re.escape(sentence)
    pattern = pattern.replace(re.escape("{{char}}"), "(?P<char>[^\n]+?)", 1)
    return re.compile(pattern.replace(re.escape("{{user}}"), "(?P<user>[^\n]+?)", 1))


# Who is who is read from the default prompt's own wording; a custom prompt that says
# it differently gets the short prompt without names.
_NAMES = _names_pattern(DEFAULT_EXTRACTION_PROMPT)

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
EXAMPLE_REQUEST = """\
The character is Bram. The user plays Ivy.

<character_card>
Bram is a gruff blacksmith in the village of Hollowmere.
</character_card>

<chat_messages>
Ivy: *I push open the smithy door.* "Morning, Bram! Lovely weather."

Bram: "Hmph. Morning. What do you need?"

Ivy: "A bell for the harbour. My twin brother Tomas drowned there last spring."

Bram: *He sets down his hammer.* "I'm sorry, lass. I'll forge it myself, by midwinter."

Ivy: "I can pay you in barley, three sacks."

Bram: "Two sacks. And you'll sweep the forge on Sundays."
</chat_messages>"""

EXAMPLE_ANSWER = """\
<memory>
- Ivy's twin brother Tomas drowned in the harbour last spring.
- Bram promised to forge a memorial bell for the harbour by midwinter.
- Ivy agreed to pay Bram two sacks of barley and to sweep his forge on Sundays.
</memory>"""


@dataclass(frozen=True)
class ExtractionRequest:
    """The parts of an extraction request that the short prompt needs."""

    card: str
    existing_memories: str
    chat: str
    max_bullets: int
    char: str = ""  # empty when the prompt does not say
    user: str = ""


def asks_for_memories(messages: Sequence[ChatMessage]) -> bool:
    """Whether the request expects the memory-block answer (it names the sentinel)."""
    return any(SENTINEL in message.content for message in messages)


def extraction_request(messages: Sequence[ChatMessage]) -> ExtractionRequest | None:
    """The sections of an extraction request, or None when it is some other request."""
    if not asks_for_memories(messages):
        return None
    users = [message.content for message in messages if message.role == "user"]
    request = users[-1] if users else ""
    chat = _CHAT.search(request)
    if chat is None:
        return None
    card, existing = _CARD.search(request), _EXISTING.search(request)
    everything = "\n".join(message.content for message in messages)
    cap, names = _MAX_BULLETS.search(everything), _NAMES.search(everything)
    return ExtractionRequest(
        card=_unless(card.group(1) if card else "", NO_CARD),
        existing_memories=_unless(existing.group(1) if existing else "", NO_MEMORIES),
        chat=chat.group(1).strip(),
        max_bullets=int(cap.group(1)) if cap else DEFAULT_MAX_BULLETS,
        char=names.group("char").strip() if names else "",
        user=names.group("user").strip() if names else "",
    )


def compact_prompt(request: ExtractionRequest, *, worked_example: bool = True) -> list[ChatMessage]:
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
    sections.append(f"<chat_messages>\n{request.chat}\n</chat_messages>")
    example = (
        [ChatMessage("user", EXAMPLE_REQUEST), ChatMessage("assistant", EXAMPLE_ANSWER)]
        if worked_example
        else []
    )
    system = f"{SYSTEM}\nWrite at most {request.max_bullets} bullets."
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


def memory_grammar(max_bullets: int) -> str:
    """GBNF for one `<memory>` block of 1..max_bullets one-line bullets, or the sentinel.

    A bullet starts with a letter, digit or quote mark and never holds `<` or a line
    break, so it cannot open a tag or spill over lines.
    """
    if max_bullets < 1:
        raise ValueError(f"max_bullets must be at least 1, not {max_bullets}")
    optional = " bullet?" * (max_bullets - 1)
    return (
        f'root ::= "<memory>\\n" bullet{optional} "</memory>" | "{SENTINEL}"\n'
        'bullet ::= "- " [^\\n<\\-*#> \\t] [^\\n<]* "\\n"\n'
    )


def _bullets(text: str) -> list[str]:
    """The bullets of a memory list, without their marks (date headings are left out)."""
    return [line.strip()[2:].strip() for line in text.splitlines() if line.strip()[:2] == "- "]


def _unless(text: str, placeholder: str) -> str:
    stripped = text.strip()
    return "" if stripped == placeholder else stripped
