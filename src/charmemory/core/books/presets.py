"""The scene prompt: our presets, and the call built around the one a profile chooses.

A preset is the instruction text (the system message). Each is ours, can be
replaced in a workspace and restored, and may use `{{char}}`, `{{user}}` and
`{{group}}`. The answer format is not part of a preset: it is appended to every
one, so no edited preset can make answers unreadable. The user message holds,
between clear markers, the reference entries chosen for the scene, the
previous memories of the book (for context only: the model is told not to
process them) and the transcript as `Name: text` lines.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from charmemory.errors import NotFoundError
from charmemory.ports import ChatMessage

SUMMARY, SYNOPSIS, MINIMAL, GROUP, CHARACTER = (
    "summary",
    "synopsis",
    "minimal",
    "group",
    "character",
)
MAX_PREVIOUS = 7

_SHARED_RULES = """\
Write about what happened in the scene, not about the conversation as text: no \
"in this scene", no "the user said". Use names, never "the user" or "the AI". Keep \
names, places, objects, promises, decisions and changes in relationships exactly \
as they appear. Write in the past tense."""

PRESETS: dict[str, str] = {
    SUMMARY: f"""\
You keep the long-term memory of a role-play between {{{{char}}}} and {{{{user}}}}. \
Turn the scene below into one memory: a bulleted list of what happened, one event, \
fact or decision per bullet ("- "), in the order it happened, with who did what.

{_SHARED_RULES}""",
    SYNOPSIS: f"""\
You keep the long-term memory of a role-play between {{{{char}}}} and {{{{user}}}}. \
Turn the scene below into one memory: a synopsis in flowing prose of two to four \
paragraphs covering the events, what each person said that matters, what they \
felt and what changed between them.

{_SHARED_RULES}""",
    MINIMAL: f"""\
You keep the long-term memory of a role-play between {{{{char}}}} and {{{{user}}}}. \
Turn the scene below into one memory of one or two sentences: the single thing \
most worth remembering later.

{_SHARED_RULES}""",
    GROUP: f"""\
You keep the shared memory of a group role-play ({{{{group}}}}). Turn the scene \
below into one memory seen from above, knowing everything: a bulleted list of what \
happened, one event per bullet ("- "), saying for each who acted, who spoke, who \
learned or revealed what, and who was not there. Do not let one character know \
what only another saw.

{_SHARED_RULES}""",
    CHARACTER: f"""\
You keep {{{{char}}}}'s own memory of a role-play. Turn the scene below into one \
memory written from what {{{{char}}}} could know: what {{{{char}}}} saw, heard, \
did, said and was told. Leave out what happened where {{{{char}}}} was not, \
thoughts {{{{char}}}} could not read and facts {{{{char}}}} never learned; when \
{{{{char}}}} believed something that was not true, keep the belief. Write a \
bulleted list, one event per bullet ("- ").

{_SHARED_RULES}""",
}

ANSWER_FORMAT = """\
Answer with one JSON object and nothing else:
{"title": "a short title for the scene (a few words)",
 "content": "the memory, as described above",
 "keywords": ["10 to 20 words or short names that should bring the memory back: \
people, places, objects, distinctive actions"]}"""

COMPACTION = """\
Below is one memory of a role-play between {{char}} and {{user}}. Rewrite it \
shorter, to about half its length or less: keep every name, decision, promise and \
change that later scenes may depend on, drop repetition and detail. Keep its title \
unless a shorter one says the same."""

CONSOLIDATION = """\
Below are consecutive {{sources}} of a role-play between {{char}} and {{user}}, \
oldest first. Combine them into one {{tier}}: a summary of the whole stretch that \
keeps what still matters (names, decisions, promises, changes in relationships, \
unresolved threads) and drops what does not. Write it as flowing prose, in the \
past tense, in the order things happened."""

GAP_NOTE = """\
This book holds only what {{char}} witnessed: scenes {{char}} was not part of are \
missing from it. Treat a jump in the story as a gap in {{char}}'s knowledge, never \
as proof that nothing happened."""

_MACRO = re.compile(r"\{\{\s*(char|user|group|tier|sources)\s*\}\}", re.IGNORECASE)


def preset_names() -> tuple[str, ...]:
    return tuple(PRESETS)


def check_preset(name: str) -> str:
    if name not in PRESETS:
        raise NotFoundError(f"no scene preset {name!r}; presets: {', '.join(PRESETS)}")
    return name


def with_names(text: str, **names: str) -> str:
    """``text`` with `{{char}}`, `{{user}}`, `{{group}}` (and the tier tokens) filled."""

    def fill(match: re.Match[str]) -> str:
        value = names.get(match.group(1).lower())
        return match.group(0) if value is None else value

    return _MACRO.sub(fill, text)


@dataclass(frozen=True)
class ContextEntry:
    """An entry shown to the model for context: a previous memory or a reference."""

    title: str
    content: str
    keywords: tuple[str, ...] = ()


@dataclass(frozen=True)
class PromptNames:
    char: str
    user: str
    group: str = ""


def scene_messages(
    instructions: str,
    names: PromptNames,
    transcript: str,
    *,
    previous: Sequence[ContextEntry] = (),
    references: Sequence[ContextEntry] = (),
) -> list[ChatMessage]:
    """The call for one scene: the preset (names filled) with the answer format, then the
    reference entries, the previous memories and the transcript between markers."""
    system = with_names(instructions, char=names.char, user=names.user, group=names.group)
    parts: list[str] = []
    if references:
        parts.append("=== REFERENCE ENTRIES (background for the scene; do not summarise them) ===")
        for number, entry in enumerate(references, start=1):
            parts += [f"Reference {number} - {entry.title}:", entry.content, ""]
        parts += ["=== END REFERENCE ENTRIES ===", ""]
    if previous:
        parts.append("=== PREVIOUS MEMORIES (context only - DO NOT PROCESS) ===")
        parts.append("These memories are already saved. Do not repeat them in the new one.")
        for number, entry in enumerate(previous, start=1):
            parts += [f"Memory {number} - {entry.title}:", entry.content]
            if entry.keywords:
                parts.append("Keywords: " + ", ".join(entry.keywords))
            parts.append("")
        parts += ["=== END PREVIOUS MEMORIES - PROCESS ONLY THE SCENE BELOW ===", ""]
    parts += ["=== SCENE TRANSCRIPT ===", transcript, "=== END SCENE ==="]
    return [
        ChatMessage("system", f"{system.strip()}\n\n{ANSWER_FORMAT}"),
        ChatMessage("user", "\n".join(parts)),
    ]


def entry_messages(
    instructions: str, names: PromptNames, entries: Sequence[ContextEntry], *, gap_note: bool
) -> list[ChatMessage]:
    """The call that rewrites saved entries into one (compaction, consolidation)."""
    system = with_names(instructions, char=names.char, user=names.user, group=names.group)
    if gap_note:
        system += "\n\n" + with_names(GAP_NOTE, char=names.char)
    parts = []
    for number, entry in enumerate(entries, start=1):
        parts += [f"=== ENTRY {number}: {entry.title} ===", entry.content, ""]
    return [
        ChatMessage("system", f"{system.strip()}\n\n{ANSWER_FORMAT}"),
        ChatMessage("user", "\n".join(parts).strip()),
    ]
