"""The grammar that holds the embedded model's answer to the format the caller asked for.

llama.cpp samples only tokens a GBNF grammar allows, so even a small model answers
in a shape the parser reads: new memories as one `<memory>` block (or
NO_NEW_MEMORIES), consolidated memories as `<memory sources="...">` blocks naming
only blocks that were sent, JSON as the schema says. Free text has no grammar.
"""

from __future__ import annotations

import importlib
import json
from typing import Any

from charmemory.core.extraction_answer import SENTINEL
from charmemory.ports import (
    AnswerFormat,
    ConsolidatedMemories,
    FreeText,
    JsonAnswer,
    NewMemories,
)

# A bullet starts with a letter, digit or quote mark and never holds `<` or a line
# break, so it cannot open a tag or spill over lines.
_BULLET = 'bullet ::= "- " [^\\n<\\-*#> \\t] [^\\n<]* "\\n"\n'


def answer_grammar(answer_format: AnswerFormat) -> str | None:
    """GBNF for answers in `answer_format`, or None when any text will do."""
    match answer_format:
        case NewMemories(max_bullets=max_bullets):
            return memory_grammar(max_bullets)
        case ConsolidatedMemories(blocks_sent=blocks_sent):
            return consolidation_grammar(blocks_sent)
        case JsonAnswer(schema=schema):
            return json_grammar(schema)
        case FreeText():
            return None


def memory_grammar(max_bullets: int) -> str:
    """One `<memory>` block of 1..max_bullets one-line bullets, or the sentinel."""
    if max_bullets < 1:
        raise ValueError(f"max_bullets must be at least 1, not {max_bullets}")
    optional = " bullet?" * (max_bullets - 1)
    return f'root ::= "<memory>\\n" bullet{optional} "</memory>" | "{SENTINEL}"\n' + _BULLET


def consolidation_grammar(blocks_sent: int) -> str:
    """One or more `<memory sources="...">` blocks of bullets; sources are ids 1..blocks_sent."""
    if blocks_sent < 1:
        raise ValueError(f"blocks_sent must be at least 1, not {blocks_sent}")
    ids = " | ".join(f'"{number}"' for number in range(1, blocks_sent + 1))
    return (
        "root ::= block+\n"
        'block ::= "<memory sources=\\"" source ("," source)* "\\">\\n" bullet+ "</memory>\\n"\n'
        f"source ::= {ids}\n" + _BULLET
    )


def json_grammar(schema: dict[str, Any]) -> str:
    """GBNF for one JSON value that follows `schema` (llama-cpp-python converts it)."""
    converter = importlib.import_module("llama_cpp.llama_grammar")
    return str(converter.json_schema_to_gbnf(json.dumps(schema)))
