"""The text that puts retrieved memories into the prompt, and where it goes.

Defaults follow SillyTavern's Vector Storage for Data Bank files: the template
``Related information:\\n{{text}}``, inserted in the prompt at depth 4 as a
system message. Memories are chosen by relevance until the token budget is
spent, then written in file order so the model reads them chronologically.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

Position = Literal["in_prompt", "in_chat", "before_prompt"]
InjectionRole = Literal["system", "user", "assistant"]
TokenCounter = Callable[[str], int]

_MACRO = re.compile(r"\{\{(text|chat|date|topic)\}\}")


def approximate_tokens(text: str) -> int:
    """About four characters per token, the usual estimate for English prose."""
    return math.ceil(len(text) / 4)


@dataclass(frozen=True)
class InjectionSettings:
    template: str = "Related information:\n{{text}}"
    item_template: str = "- {{text}}"  # also knows {{chat}}, {{date}} and {{topic}}
    separator: str = "\n"
    token_budget: int | None = 400  # None: no limit, as for SillyTavern's Data Bank chunks
    order: Literal["document", "relevance"] = "document"
    position: Position = "in_prompt"
    depth: int = 4
    role: InjectionRole = "system"


@dataclass(frozen=True)
class InjectionEntry:
    """One retrieved memory, given most relevant first; ``place`` sorts it in file order."""

    id: str
    text: str
    place: tuple[str, int, int]
    chat: str = ""
    date: str = ""
    topic: str = ""


@dataclass(frozen=True)
class Injection:
    text: str  # empty when nothing is injected
    included: tuple[str, ...]
    over_budget: tuple[str, ...]
    tokens: int
    position: Position
    depth: int
    role: InjectionRole


def render_macros(template: str, values: dict[str, str]) -> str:
    return _MACRO.sub(lambda match: values.get(match.group(1), ""), template)


def build_injection(
    entries: Sequence[InjectionEntry],
    settings: InjectionSettings = InjectionSettings(),
    count_tokens: TokenCounter = approximate_tokens,
) -> Injection:
    """Fill the template with as many entries as the budget allows, most relevant first."""
    lines = {entry.id: _line(entry, settings) for entry in entries}
    kept: list[InjectionEntry] = []
    over: list[str] = []
    for entry in entries:
        trial = _render([*kept, entry], lines, settings)
        if settings.token_budget is None or count_tokens(trial) <= settings.token_budget:
            kept.append(entry)
        else:
            over.append(entry.id)
    text = _render(kept, lines, settings) if kept else ""
    return Injection(
        text=text,
        included=tuple(entry.id for entry in _ordered(kept, settings)),
        over_budget=tuple(over),
        tokens=count_tokens(text) if text else 0,
        position=settings.position,
        depth=settings.depth,
        role=settings.role,
    )


def _line(entry: InjectionEntry, settings: InjectionSettings) -> str:
    values = {"text": entry.text, "chat": entry.chat, "date": entry.date, "topic": entry.topic}
    return render_macros(settings.item_template, values)


def _ordered(entries: list[InjectionEntry], settings: InjectionSettings) -> list[InjectionEntry]:
    return sorted(entries, key=lambda e: e.place) if settings.order == "document" else entries


def _render(
    entries: list[InjectionEntry], lines: dict[str, str], settings: InjectionSettings
) -> str:
    body = settings.separator.join(lines[entry.id] for entry in _ordered(entries, settings))
    return render_macros(settings.template, {"text": body})
