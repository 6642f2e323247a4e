"""SillyTavern's macros: `{{char}}`, `{{user}}`, the card's fields, dates, dice and random picks.

One pass, in SillyTavern's order (its `evaluateMacros`): the legacy `<USER>`,
`<BOT>`, `<CHAR>` tags; `{{roll:1d6}}`; `{{newline}}`, `{{trim}}` (with the
line breaks around it), `{{noop}}`; the values `{{original}}` (once, and only
where a card field overrides a prompt), `{{charPrompt}}`, `{{charJailbreak}}`,
`{{description}}`, `{{personality}}`, `{{scenario}}`, `{{persona}}`,
`{{mesExamples}}`, `{{charVersion}}`, `{{user}}`, `{{char}}`, `{{group}}`,
`{{charIfNotGroup}}`; `{{outlet::Name}}`; `{{// comments}}`; `{{time}}`,
`{{date}}`, `{{weekday}}`, `{{isotime}}`, `{{isodate}}`, `{{idle_duration}}`;
and last `{{random::a::b}}` (or `{{random:a,b}}`). Names are case-insensitive.
A value is inserted as it is, so `{{description}}` may bring `{{user}}` with it,
which the same pass replaces afterwards. Unknown macros are left as written.

Randomness comes from the injected `random.Random` and time from the injected
clock, so the same inputs and seed give the same text.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime

from charmemory.core.prompt.clock_text import (
    date_text,
    humanized,
    iso_date_text,
    iso_time_text,
    time_text,
    weekday_text,
)

_LEGACY = [
    (re.compile("<USER>", re.IGNORECASE), "user"),
    (re.compile("<BOT>", re.IGNORECASE), "char"),
    (re.compile("<CHAR>", re.IGNORECASE), "char"),
    (re.compile("<CHARIFNOTGROUP>", re.IGNORECASE), "group_or_char"),
    (re.compile("<GROUP>", re.IGNORECASE), "group_or_char"),
]
_ROLL = re.compile(r"\{\{roll[ :]([^}]+)\}\}", re.IGNORECASE)
_DICE = re.compile(r"(\d*)d(\d+)([+-]\d+)?", re.IGNORECASE)
_NEWLINE = re.compile(r"\{\{newline\}\}", re.IGNORECASE)
_TRIM = re.compile(r"(?:\r?\n)*\{\{trim\}\}(?:\r?\n)*", re.IGNORECASE)
_NOOP = re.compile(r"\{\{noop\}\}", re.IGNORECASE)
_OUTLET = re.compile(r"\{\{outlet::(.*?)\}\}", re.IGNORECASE)
_COMMENT = re.compile(r"\{\{//[\s\S]*?\}\}")
_RANDOM = re.compile(r"\{\{random\s?::?([^}]+)\}\}", re.IGNORECASE)
_VALUE_NAMES = (
    "original",
    "charPrompt",
    "charJailbreak",
    "description",
    "personality",
    "scenario",
    "persona",
    "mesExamples",
    "charVersion",
    "char_version",
    "user",
    "char",
    "group",
    "charIfNotGroup",
)
_VALUES = {
    name: re.compile(r"\{\{" + re.escape(name) + r"\}\}", re.IGNORECASE) for name in _VALUE_NAMES
}
_CLOCK: list[tuple[re.Pattern[str], Callable[[datetime], str]]] = [
    (re.compile(r"\{\{" + name + r"\}\}", re.IGNORECASE), write)
    for name, write in (
        ("time", time_text),
        ("date", date_text),
        ("weekday", weekday_text),
        ("isotime", iso_time_text),
        ("isodate", iso_date_text),
    )
]
_IDLE = re.compile(r"\{\{idle_duration\}\}", re.IGNORECASE)
_MAX_DICE = 1000


@dataclass(frozen=True)
class MacroContext:
    """What the macros of one generation read."""

    user: str
    char: str
    rng: random.Random = field(compare=False)
    now: datetime
    description: str = ""
    personality: str = ""
    scenario: str = ""
    persona: str = ""
    mes_examples: str = ""
    char_prompt: str = ""  # the card's system prompt
    char_jailbreak: str = ""  # the card's post-history instructions
    char_version: str = ""
    idle_since: datetime | None = None  # the user's message before the last one
    outlets: Mapping[str, str] = field(default_factory=dict)
    group: str = ""  # a group chat's member names, comma-separated; "" in a solo chat

    @property
    def group_or_char(self) -> str:
        """`{{group}}` and `{{charIfNotGroup}}`: the group's members, else the character."""
        return self.group or self.char

    def with_outlets(self, outlets: Mapping[str, str]) -> MacroContext:
        return replace(self, outlets=outlets)

    def substitute(self, text: str, original: str | None = None) -> str:
        """`text` with its macros replaced; `original` is what `{{original}}` stands for."""
        if not text:
            return ""
        if "<" in text:  # every legacy tag opens with one
            for pattern, name in _LEGACY:
                text = pattern.sub(_literal(getattr(self, name)), text)
        if "{{" not in text:
            return text
        text = _ROLL.sub(self._roll, text)
        text = _NEWLINE.sub("\n", text)
        text = _TRIM.sub("", text)
        text = _NOOP.sub("", text)
        for name, value in self._values(original).items():
            text = _VALUES[name].sub(value, text)
        text = _OUTLET.sub(lambda found: self.outlets.get(found.group(1).strip(), ""), text)
        text = _COMMENT.sub("", text)
        text = self._clock(text)
        return _RANDOM.sub(self._random, text)

    def _values(self, original: str | None) -> dict[str, Callable[[re.Match[str]], str]]:
        values: dict[str, Callable[[re.Match[str]], str]] = {}
        if original is not None:
            used = [False]

            def once(_: re.Match[str]) -> str:
                if used[0]:
                    return ""
                used[0] = True
                return original

            values["original"] = once
        fields = {
            "charPrompt": self.char_prompt,
            "charJailbreak": self.char_jailbreak,
            "description": self.description,
            "personality": self.personality,
            "scenario": self.scenario,
            "persona": self.persona,
            "mesExamples": self.mes_examples,
            "charVersion": self.char_version,
            "char_version": self.char_version,
            "user": self.user,
            "char": self.char,
            "group": self.group_or_char,
            "charIfNotGroup": self.group_or_char,
        }
        values.update((name, _literal(value)) for name, value in fields.items())
        return values

    def _clock(self, text: str) -> str:
        for pattern, write in _CLOCK:
            text = pattern.sub(lambda _, write=write: write(self.now), text)
        return _IDLE.sub(lambda _: self._idle(), text)

    def _idle(self) -> str:
        if self.idle_since is None:
            return "just now"
        return humanized(_aware(self.now) - _aware(self.idle_since))

    def _roll(self, found: re.Match[str]) -> str:
        formula = found.group(1).strip()
        if formula.isdigit():
            formula = f"1d{formula}"
        dice = _DICE.fullmatch(formula)
        if dice is None:
            return ""
        count = int(dice.group(1) or 1)
        faces = int(dice.group(2))
        if not 0 < count <= _MAX_DICE or faces < 1:
            return ""
        total = sum(self.rng.randint(1, faces) for _ in range(count))
        return str(total + int(dice.group(3) or 0))

    def _random(self, found: re.Match[str]) -> str:
        listed = found.group(1)
        if "::" in listed:
            choices = listed.split("::")
        else:
            choices = [
                item.strip().replace("\0", ",") for item in listed.replace("\\,", "\0").split(",")
            ]
        return choices[int(self.rng.random() * len(choices))]


def _literal(value: str) -> Callable[[re.Match[str]], str]:
    return lambda _: value


def _aware(moment: datetime) -> datetime:
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
