"""Dialogue examples (`mes_example`): `<START>`-separated blocks of `Name: line` messages.

As SillyTavern's Chat Completion reads them: text not starting with `<START>`
gets one; each block is cut at `<START>` (any case) and trimmed; its first line
(the `<START>` marker) is dropped and the rest split into messages at lines
starting with `{{user}}:` or `{{char}}:` (names already substituted). A message
keeps its continuation lines and loses its first `Name:`. Lines before the
first speaker belong to the first message. Each message becomes a system
message named `example_user` or `example_assistant`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_START = re.compile("<START>", re.IGNORECASE)


@dataclass(frozen=True)
class ExampleMessage:
    name: str  # example_user or example_assistant
    content: str


def example_blocks(examples: str) -> list[str]:
    """The blocks of an examples text, each `<START>\\n` + its trimmed text + `\\n`."""
    if not examples or examples == "<START>":
        return []
    if not examples.startswith("<START>"):
        examples = "<START>\n" + examples.strip()
    return [f"<START>\n{block.strip()}\n" for block in _START.split(examples)[1:]]


def example_messages(block: str, user: str, char: str) -> list[ExampleMessage]:
    lines = _START.sub("{Example Dialogue:}", block, count=1).replace("\r", "").split("\n")
    messages: list[ExampleMessage] = []
    current: list[str] = []
    speaker: str | None = None

    def close() -> None:
        if speaker is None:
            return
        name, label = (user, "example_user") if speaker == "user" else (char, "example_assistant")
        text = "\n".join(current).replace(f"{name}:", "", 1).strip()
        messages.append(ExampleMessage(label, text))
        current.clear()

    for line in lines[1:]:
        if line.startswith(f"{user}:"):
            if speaker == "char":
                close()
            speaker = "user"
        elif line.startswith(f"{char}:"):
            if speaker == "user":
                close()
            speaker = "char"
        current.append(line)
    close()
    return messages
