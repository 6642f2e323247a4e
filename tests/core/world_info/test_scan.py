"""The scan text, built as SillyTavern's WorldInfoBuffer builds it."""

from __future__ import annotations

from charmemory.core.world_info import CardFields, ScanContext, WorldInfoSettings, prompt_messages
from charmemory.core.world_info.scan import ScanBuffer
from charmemory.formats.chat import Chat, ChatHeader, Message
from tests.support.lore import messages

NO_FIELDS = (False,) * 6


def buffer(context: ScanContext, **settings) -> ScanBuffer:
    return ScanBuffer(context, WorldInfoSettings(**settings))


def test_messages_newest_first_each_marked_and_trimmed():
    context = ScanContext(messages=messages("  first  ", ("Seraphina", "second\n"), "third"))

    text = buffer(context, scan_depth=2).haystack(None, NO_FIELDS, True).text

    assert text == "\x01Wren: third\n\x01Seraphina: second"


def test_fields_then_injections_then_recursion():
    context = ScanContext(
        messages=messages("hello"),
        fields=CardFields(persona_description="P", scenario="S", creator_notes=""),
        injections=(("Author's Note", "AN"), ("depth prompt", "")),
    )
    scan = buffer(context)
    scan.add_recursion([("a", "one"), ("b", "two")])
    flags = (True, False, False, False, True, True)

    assert (
        scan.haystack(None, flags, True).text
        == "\x01Wren: hello\n\x01P\n\x01S\n\x01AN\n\x01one\ntwo"
    )
    assert scan.haystack(None, flags, False).text == "\x01Wren: hello\n\x01P\n\x01S\n\x01AN"


def test_scan_depth_zero_is_empty_and_the_skew_widens_the_global_depth():
    scan = buffer(ScanContext(messages=messages("a", "b", "c")), scan_depth=1)

    assert scan.haystack(0, NO_FIELDS, True).text == ""
    assert scan.haystack(None, NO_FIELDS, True).text == "\x01Wren: c"
    scan.skew += 1
    assert scan.haystack(None, NO_FIELDS, True).text == "\x01Wren: c\n\x01Wren: b"
    assert scan.haystack(5, NO_FIELDS, True).text == "\x01Wren: c\n\x01Wren: b\n\x01Wren: a"


def test_the_prompt_messages_leave_out_hidden_ones_and_the_swiped_one():
    chat = Chat(
        ChatHeader({}),
        [
            Message.new(name="Seraphina", mes="Hello.", is_user=False, send_date="x"),
            Message.new(name="Wren", mes="(OOC)", is_user=True, send_date="x", is_system=True),
            Message.new(name="Wren", mes="Hi.", is_user=True, send_date="x"),
            Message.new(name="Seraphina", mes="Welcome.", is_user=False, send_date="x"),
        ],
    )

    assert [m.id for m in prompt_messages(chat)] == [0, 2, 3]
    assert [m.id for m in prompt_messages(chat, "swipe")] == [0, 2]
    assert [m.text for m in prompt_messages(chat)] == ["Hello.", "Hi.", "Welcome."]
