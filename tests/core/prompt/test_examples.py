"""Dialogue examples split as SillyTavern's Chat Completion splits them.

The expected blocks and messages come from SillyTavern's parseMesExamples and
parseExampleIntoIndividual, run in Node.js with the user "Wren" and the
character "Seraphina".
"""

from __future__ import annotations

import pytest

from charmemory.core.prompt.examples import example_blocks, example_messages

CASES = [
    (
        "<START>\nWren: Hi\nSeraphina: Hello there.\nIt is late.\nWren: Bye",
        ["<START>\nWren: Hi\nSeraphina: Hello there.\nIt is late.\nWren: Bye\n"],
        [
            [
                ("example_user", "Hi"),
                ("example_assistant", "Hello there.\nIt is late."),
                ("example_user", "Bye"),
            ]
        ],
    ),
    (
        "Wren: Hi\r\nSeraphina: Yo",
        ["<START>\nWren: Hi\r\nSeraphina: Yo\n"],
        [[("example_user", "Hi"), ("example_assistant", "Yo")]],
    ),
    (
        "<START>\nWren: a\n<start>\nSeraphina: b\n<START>",
        ["<START>\nWren: a\n", "<START>\nSeraphina: b\n", "<START>\n\n"],
        [[("example_user", "a")], [("example_assistant", "b")], []],
    ),
    (
        "Intro line\nSeraphina: only me\nSeraphina: again",
        ["<START>\nIntro line\nSeraphina: only me\nSeraphina: again\n"],
        [[("example_assistant", "Intro line\n only me\nSeraphina: again")]],
    ),
    ("<START>", [], []),
    ("", [], []),
    (
        "<START>\n\n<START>\nWren: x: Wren: y",
        ["<START>\n\n", "<START>\nWren: x: Wren: y\n"],
        [[], [("example_user", "x: Wren: y")]],
    ),
]


@pytest.mark.parametrize(("text", "blocks", "messages"), CASES)
def test_examples_split_as_sillytavern(text, blocks, messages):
    assert example_blocks(text) == blocks
    parsed = [
        [(m.name, m.content) for m in example_messages(block, "Wren", "Seraphina")]
        for block in blocks
    ]
    assert parsed == messages
