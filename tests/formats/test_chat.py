from __future__ import annotations

import json
import random
import re
import shutil
import struct
import subprocess
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from charmemory.errors import FormatError
from charmemory.formats.chat import (
    Chat,
    ChatHeader,
    Message,
    chat_fingerprints,
    last_message_send_date,
    message_fingerprint,
    parse_chat,
)
from charmemory.formats.js_json import js_number_text, js_stringify

# A chat as SillyTavern 1.15 writes it: metadata header, a greeting with swipes, a
# hidden message, a /sys narrator line, a /comment, non-ASCII, an escaped quote,
# a raw U+2028 (JSON.stringify leaves it alone) and a lone surrogate.
MODERN_CHAT = "\n".join(
    [
        '{"chat_metadata":{"integrity":"5f0c1d6e-3b7a-4c55-9e0f-2a1b3c4d5e6f","chat_id_hash":'
        '8021399375283105,"note_prompt":"","note_interval":1,"note_position":1,"note_depth":4,'
        '"note_role":0,"timedWorldInfo":{"sticky":{},"cooldown":{}},"tainted":true,'
        '"lastInContextMessageId":5},"user_name":"unused","character_name":"unused"}',
        '{"name":"Seraphina","is_user":false,"is_system":false,"send_date":'
        '"2026-02-15T10:00:00.123Z","mes":"*Seraphina\'s eyes open.* \\"You\'re safe.\\"\\n'
        'Rest now… 🌿","extra":{},"swipe_id":1,"swipes":["Hello, traveller.","*Seraphina\'s'
        ' eyes open.* \\"You\'re safe.\\"\\nRest now… 🌿"],"swipe_info":[{"send_date":'
        '"2026-02-15T10:00:00.123Z","extra":{}},{"send_date":"2026-02-15T10:00:02.500Z",'
        '"gen_started":"2026-02-15T10:00:01.000Z","gen_finished":"2026-02-15T10:00:02.500Z",'
        '"extra":{"api":"openai","model":"gpt-4o","token_count":24}}],"title":"",'
        '"original_avatar":"default_Seraphina.png"}',
        '{"name":"Ana","is_user":true,"is_system":false,"send_date":"2026-02-15T10:01:00.000Z",'
        '"mes":"Where am I? C:\\\\forest\\\\glade\u2028(東の森)","extra":{"isSmallSys":false},'
        '"force_avatar":"User Avatars/ana.png"}',
        '{"name":"Seraphina","is_user":false,"is_system":true,"send_date":'
        '"2026-02-15T10:01:05.007Z","mes":"In my glade, deep in Eldoria.","gen_started":'
        '"2026-02-15T10:01:03.100Z","gen_finished":"2026-02-15T10:01:05.007Z","extra":{"api":'
        '"openai","model":"gpt-4o","reasoning":"","reasoning_duration":null,"token_count":9,'
        '"temperature":0.7,"bias":null},"swipe_id":0,"swipes":["In my glade, deep in Eldoria."],'
        '"swipe_info":[{"send_date":"2026-02-15T10:01:05.007Z","gen_started":'
        '"2026-02-15T10:01:03.100Z","gen_finished":"2026-02-15T10:01:05.007Z","extra":{"api":'
        '"openai","model":"gpt-4o","token_count":9}}]}',
        '{"name":"System","is_user":false,"is_system":false,"send_date":'
        '"2026-02-15T10:02:00.000Z","mes":"A wolf howls in the distance.","force_avatar":'
        '"img/five.png","extra":{"type":"narrator","bias":null,"gen_id":1771149720000,'
        '"isSmallSys":false,"api":"manual","model":"slash command"}}',
        '{"name":"System","is_user":false,"is_system":true,"send_date":'
        '"2026-02-15T10:03:00.000Z","mes":"remember the wolf \\ud83d","force_avatar":'
        '"img/quill.png","extra":{"type":"comment","gen_id":1771149780000.5}}',
        '{"name":"Ana","is_user":true,"is_system":false,"send_date":"2026-02-15T10:04:00.000Z",'
        '"mes":"Thank you.\\t\\u0007","extra":{"bias":"","weights":[1,-2.5,1e+21,1.5e-7,0]}}',
    ]
)

# A chat as SillyTavern 1.12 wrote it: `create_date` in the header, old timestamps.
LEGACY_CHAT = "\n".join(
    [
        '{"user_name":"You","character_name":"Seraphina","create_date":"2023-6-19@14h20m05s",'
        '"chat_metadata":{"note_prompt":"","objective":{"currentObjectiveId":0}}}',
        '{"name":"Seraphina","is_user":false,"is_system":false,"send_date":"June 19, 2023 2:20pm",'
        '"mes":"Hello.","extra":{}}',
        '{"name":"You","is_user":true,"send_date":1687184405123,"mes":"Hi!"}',
    ]
)


def message_lines(text: str) -> list[str]:
    return text.split("\n")


# --- round trips ------------------------------------------------------------------


@pytest.mark.parametrize("text", [MODERN_CHAT, LEGACY_CHAT], ids=["modern", "legacy"])
def test_sillytavern_chat_renders_back_byte_for_byte(text: str) -> None:
    chat = parse_chat(text)

    assert chat.render().encode("utf-8", "surrogatepass") == text.encode("utf-8", "surrogatepass")


def test_modern_chat_fields_read_as_sillytavern_reads_them() -> None:
    chat = parse_chat(MODERN_CHAT)
    greeting, question, hidden, narrator, comment, thanks = chat.messages

    assert chat.header.present
    assert chat.header.user_name == "unused"
    assert chat.header.chat_metadata["note_depth"] == 4
    assert chat.header.create_date is None
    assert greeting.swipe_id == 1
    assert greeting.swipes is not None and len(greeting.swipes) == 2
    assert greeting.swipe_info is not None and greeting.swipe_info[1]["extra"]["token_count"] == 24
    assert greeting.active_text.endswith("Rest now… 🌿")
    assert greeting.sent_at == datetime(2026, 2, 15, 10, 0, 0, 123000, tzinfo=UTC)
    assert "\u2028(東の森)" in question.mes
    assert [m.role for m in chat.messages] == [
        "character",
        "user",
        "character",
        "narrator",
        "system",
        "user",
    ]
    assert [m.is_hidden for m in chat.messages] == [False, False, True, False, True, False]
    # Kept as read for writing back; read as text every later step can encode.
    assert comment.data["mes"].endswith("\ud83d") and comment.mes.endswith("\ufffd")
    assert thanks.extra["weights"] == [1, -2.5, 1e21, 1.5e-7, 0]
    assert hidden.extra["temperature"] == 0.7
    assert narrator.name == "System"


def test_legacy_chat_header_and_old_send_dates() -> None:
    chat = parse_chat(LEGACY_CHAT)

    assert chat.header.character_name == "Seraphina"
    assert chat.header.create_date == "2023-6-19@14h20m05s"
    assert chat.messages[0].sent_at == datetime(2023, 6, 19, 14, 20)
    assert chat.messages[1].send_date == 1687184405123
    assert chat.messages[1].sent_at == datetime(2023, 6, 19, 14, 20, 5, 123000, tzinfo=UTC)
    assert chat.messages[1].is_system is False
    assert chat.messages[1].extra == {}


# Reference JSON.stringify: the standard library's encoder agrees with JavaScript for
# every value generated below (non-integral floats between 1e-4 and 1e16 print the
# same in both languages; the other float ranges are pinned in the tests further down).
def reference_stringify(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


TRICKY = '"\\/\n\r\t\b\f\x00\x1f\x7f\u2028\u2029😀👩\u200d東한é\ufeff\U0010ffff'
tricky_chars = st.sampled_from(TRICKY)
texts = st.text(st.characters(codec="utf-8") | tricky_chars, max_size=30)
# A JavaScript object lists integer-like keys first, so SillyTavern never writes
# one after another key; keep generated objects to orders it can produce.
keys = texts.filter(lambda k: not re.fullmatch(r"0|[1-9][0-9]*", k))
plain_floats = st.floats(min_value=1e-4, max_value=1e15).filter(lambda x: not x.is_integer())
# JavaScript numbers: integers are exact only up to 2**53.
numbers = st.integers(-(2**53), 2**53) | plain_floats | plain_floats.map(lambda x: -x)
scalars = st.none() | st.booleans() | numbers | texts
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(keys, inner, max_size=3),
    max_leaves=10,
)


@st.composite
def with_unknown_keys(draw: st.DrawFn, known: dict[str, Any]) -> dict[str, Any]:
    """`known` plus keys no SillyTavern version wrote, all in a random order."""
    unknown = draw(st.dictionaries(texts.map(lambda k: "x" + k), json_values, max_size=3))
    return dict(draw(st.permutations([*known.items(), *unknown.items()])))


headers = st.builds(
    lambda user, character, created, metadata: {
        "user_name": user,
        "character_name": character,
        "create_date": created,
        "chat_metadata": metadata,
    },
    texts,
    texts,
    texts | st.integers(0, 2**50),
    st.dictionaries(keys, json_values, max_size=4),
).flatmap(with_unknown_keys)

messages = st.builds(
    lambda name, is_user, is_system, sent, mes, extra, swipes: {
        "name": name,
        "is_user": is_user,
        "is_system": is_system,
        "send_date": sent,
        "mes": mes,
        "extra": extra,
        "swipes": [mes, *swipes],
        "swipe_id": 0,
    },
    texts,
    st.booleans(),
    st.booleans(),
    texts | st.integers(0, 2**50),
    texts,
    st.dictionaries(keys, json_values, max_size=4),
    st.lists(texts, max_size=2),
).flatmap(with_unknown_keys)


@settings(max_examples=150, deadline=None)
@given(header=headers, lines=st.lists(messages, max_size=5))
def test_generated_chats_render_as_json_stringify_and_parse_back_equal(
    header: dict[str, Any], lines: list[dict[str, Any]]
) -> None:
    text = "\n".join(reference_stringify(item) for item in [header, *lines])

    chat = parse_chat(text)

    assert chat.render().encode("utf-8") == text.encode("utf-8")
    assert [m.data for m in chat.messages] == lines
    assert list(chat.header.data) == list(header)
    assert parse_chat(chat.render()) == chat


# --- JSON.stringify details -------------------------------------------------------

# Each right-hand side is what node's JSON.stringify printed for the left-hand side.
JS_NUMBERS = [
    (0.0, "0"),
    (-0.0, "0"),
    (100.0, "100"),
    (1e16, "10000000000000000"),
    (1e20, "100000000000000000000"),
    (1e21, "1e+21"),
    (1.2345e22, "1.2345e+22"),
    (123456789012345680000.0, "123456789012345680000"),
    (0.1, "0.1"),
    (1 / 3, "0.3333333333333333"),
    (0.000001, "0.000001"),
    (1.5e-7, "1.5e-7"),
    (1e-7, "1e-7"),
    (-2.5e-10, "-2.5e-10"),
    (5e-324, "5e-324"),
    (1.7976931348623157e308, "1.7976931348623157e+308"),
    (float("inf"), "null"),
    (float("nan"), "null"),
]


@pytest.mark.parametrize(("number", "expected"), JS_NUMBERS)
def test_floats_are_written_the_way_javascript_writes_them(number: float, expected: str) -> None:
    assert js_number_text(number) == expected
    assert js_stringify([number]) == f"[{expected}]"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("\ud800", '"\\ud800"'),
        ("a\udfffb", '"a\\udfffb"'),
        ("\ud83d\ude00", '"😀"'),  # a surrogate pair is one character to JavaScript
        ("\x01\x1f\x7f", '"\\u0001\\u001f\x7f"'),
        ("\b\f\n\r\t", '"\\b\\f\\n\\r\\t"'),
        ("</script>\u2028", '"</script>\u2028"'),
        (12345678901234567891, "12345678901234567000"),  # a double in JavaScript
        ({"b": [True, None], "a": {}}, '{"b":[true,null],"a":{}}'),
    ],
)
def test_json_stringify_escapes_like_javascript(value: Any, expected: str) -> None:
    assert js_stringify(value) == expected


def test_values_json_cannot_hold_are_refused_on_render() -> None:
    chat = parse_chat('{"name":"A","mes":"x"}')
    chat.messages[0].set_extra("when", datetime(2026, 1, 1))

    with pytest.raises(TypeError, match="datetime"):
        chat.render()


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_json_stringify_matches_node_on_random_doubles_and_strings() -> None:
    rng = random.Random(20260215)
    doubles = [struct.unpack("<d", struct.pack("<Q", rng.getrandbits(64)))[0] for _ in range(3000)]
    doubles += [rng.random() * 10 ** rng.randint(-25, 25) for _ in range(3000)]
    units = [*map(chr, range(0x80)), "\u2028", "\ud800", "\udc00", "😀", "東", "\x85"]
    strings = ["".join(rng.choices(units, k=rng.randint(0, 10))) for _ in range(1000)]
    values: list[Any] = [[d] for d in doubles] + strings
    script = (
        "const lines = require('fs').readFileSync(0, 'utf8').split('\\n');"
        "process.stdout.write(lines.map(l => JSON.stringify(JSON.parse(l))).join('\\n'));"
    )
    # ASCII-only input carries lone surrogates to node as escapes.
    stdin = "\n".join(json.dumps(v) for v in values).encode("ascii")
    result = subprocess.run(["node", "-e", script], input=stdin, capture_output=True, check=True)

    assert result.stdout.decode("utf-8").split("\n") == [js_stringify(v) for v in values]


# --- structure and errors ---------------------------------------------------------


def test_empty_file_is_a_chat_without_header_or_messages() -> None:
    chat = parse_chat("")

    assert not chat.header.present
    assert chat.messages == []
    assert chat.render() == ""


def test_header_only_file_round_trips() -> None:
    text = '{"chat_metadata":{},"user_name":"unused","character_name":"unused"}'
    chat = parse_chat(text)

    assert chat.header.present
    assert chat.messages == []
    assert chat.render() == text


def test_file_starting_with_a_message_gets_no_header_written() -> None:
    # Group chats saved before group headers existed start with a message.
    text = '{"name":"A","is_user":false,"mes":"one"}\n{"name":"B","is_user":true,"mes":"two"}'
    chat = parse_chat(text)

    assert not chat.header.present
    assert [m.mes for m in chat.messages] == ["one", "two"]
    assert chat.render() == text


def test_line_separator_inside_a_message_does_not_split_lines() -> None:
    chat = parse_chat('{"user_name":"u"}\n{"mes":"a\u2028b\u2029c\x85d"}')

    assert len(chat.messages) == 1
    assert chat.messages[0].mes == "a\u2028b\u2029c\x85d"


def test_blank_lines_and_trailing_newline_are_skipped_like_sillytavern() -> None:
    chat = parse_chat('{"user_name":"u"}\n\n{"mes":"a"}\n')

    assert [m.mes for m in chat.messages] == ["a"]
    assert chat.render() == '{"user_name":"u"}\n{"mes":"a"}'


def test_non_canonical_input_is_written_back_canonically() -> None:
    chat = parse_chat('{"user_name":"u"}\n{ "mes" : "a\\/b\\u00E9\\uD83D", "n": 1.0, "e": 1E3 }')

    assert chat.render() == '{"user_name":"u"}\n{"mes":"a/bé\\ud83d","n":1,"e":1000}'


def test_malformed_line_reports_source_and_line_number() -> None:
    text = '{"user_name":"u"}\n{"mes":"ok"}\n{"mes": "broken'

    with pytest.raises(FormatError) as caught:
        parse_chat(text, source="chats/Seraphina/x.jsonl")

    assert caught.value.line == 3
    assert caught.value.source == "chats/Seraphina/x.jsonl"
    assert str(caught.value).startswith("chats/Seraphina/x.jsonl:3: not valid JSON")


@pytest.mark.parametrize(
    ("line", "message"),
    [("[1, 2]", "found list"), ('"text"', "found str"), ('{"n": NaN}', "NaN")],
)
def test_lines_that_are_not_json_objects_are_refused(line: str, message: str) -> None:
    with pytest.raises(FormatError, match=message) as caught:
        parse_chat('{"user_name":"u"}\n' + line)

    assert caught.value.line == 2


@pytest.mark.parametrize(
    "line",
    ['{"mes":"a"}{"mes":"b"}', '{"mes":"a"}}', '{"mes":"a",}', '{"n":Infinity}', '{"mes":"a"'],
)
def test_a_line_holding_more_or_less_than_one_object_is_refused(line: str) -> None:
    with pytest.raises(FormatError, match="not valid JSON") as caught:
        parse_chat('{"user_name":"u"}\n' + line + '\n{"mes":"b"}')

    assert caught.value.line == 2


@pytest.mark.parametrize("line", [' {"mes":"a"}', '{"mes":"a"}\t ', '\t{"mes":"a"} '])
def test_space_around_a_line_s_object_is_read_past(line: str) -> None:
    chat = parse_chat('{"user_name":"u"}\n' + line)

    assert [m.data for m in chat.messages] == [{"mes": "a"}]


# --- reading messages -------------------------------------------------------------


def test_mes_wins_when_swipes_disagree() -> None:
    message = Message({"mes": "edited text", "swipes": ["first", "second"], "swipe_id": 1})

    assert message.active_text == "edited text"


@pytest.mark.parametrize(
    ("data", "hidden"),
    [
        ({"is_system": True}, True),
        ({"is_system": False}, False),
        ({"is_system": ""}, False),  # /sys stores `bias && ...`, which can be ""
        ({"is_system": []}, True),  # JavaScript truthiness, not Python's
        ({}, False),
    ],
)
def test_hidden_follows_javascript_truthiness_of_is_system(
    data: dict[str, Any], hidden: bool
) -> None:
    assert Message({"mes": "x", **data}).is_hidden is hidden


def test_hidden_narrator_keeps_narrator_role() -> None:
    message = Message({"mes": "x", "is_system": True, "extra": {"type": "narrator"}})

    assert message.role == "narrator"
    assert message.is_hidden


def test_odd_known_values_read_as_defaults_and_survive() -> None:
    text = '{"name":null,"is_user":0,"mes":5,"extra":{"type":[]},"swipes":"x","swipe_id":true}'
    message = parse_chat(text).messages[0]

    assert (message.name, message.is_user, message.mes) == ("", False, "")
    assert (message.role, message.swipes, message.swipe_id) == ("character", None, None)
    assert parse_chat(text).render() == text


def test_read_only_views_refuse_writes() -> None:
    message = Message({"mes": "x", "extra": {"a": 1}})

    with pytest.raises(TypeError):
        message.extra["b"] = 2  # type: ignore[index]


# --- changing a chat --------------------------------------------------------------


def test_set_extra_changes_only_that_line_and_keeps_key_order() -> None:
    chat = parse_chat(MODERN_CHAT)
    before = message_lines(MODERN_CHAT)

    chat.messages[2].set_extra("charmemory", {"extracted": True})
    after = message_lines(chat.render())

    assert [i for i, (a, b) in enumerate(zip(before, after, strict=True)) if a != b] == [3]
    assert after[3] == before[3].replace(
        '"bias":null}', '"bias":null,"charmemory":{"extracted":true}}', 1
    )


def test_set_extra_on_message_without_extra_adds_it_last() -> None:
    chat = parse_chat('{"user_name":"u"}\n{"name":"A","mes":"hi","zz":1}')

    chat.messages[0].set_extra("k", 1.5)

    assert chat.render() == '{"user_name":"u"}\n{"name":"A","mes":"hi","zz":1,"extra":{"k":1.5}}'


def test_set_metadata_keeps_other_header_keys() -> None:
    chat = parse_chat(LEGACY_CHAT)

    chat.header.set_metadata("charmemory_cast", ["Seraphina"])

    assert message_lines(chat.render())[0] == (
        '{"user_name":"You","character_name":"Seraphina","create_date":"2023-6-19@14h20m05s",'
        '"chat_metadata":{"note_prompt":"","objective":{"currentObjectiveId":0},'
        '"charmemory_cast":["Seraphina"]}}'
    )


def test_append_writes_new_message_after_untouched_lines() -> None:
    chat = parse_chat(MODERN_CHAT)
    message = Message.new(
        name="Ana", mes="Goodbye.", is_user=True, send_date="2026-02-15T10:05:00.000Z"
    )

    message_id = chat.append(message)

    assert message_id == 6
    assert chat.render() == MODERN_CHAT + (
        '\n{"name":"Ana","is_user":true,"is_system":false,'
        '"send_date":"2026-02-15T10:05:00.000Z","mes":"Goodbye.","extra":{}}'
    )


def test_append_to_empty_chat_writes_no_header() -> None:
    chat = Chat(ChatHeader(present=False))
    chat.append(Message({"mes": "a"}))

    assert chat.render() == '{"mes":"a"}'


# --- fingerprints -----------------------------------------------------------------


def test_fingerprint_is_pinned_so_stored_values_stay_valid() -> None:
    message = Message({"name": "Seraphina", "is_user": False, "mes": "Hello."})

    assert message_fingerprint(message) == message_fingerprint(Message(dict(message.data)))
    assert message_fingerprint(message) == "a5e2689feb629531"


def test_fingerprint_ignores_bookkeeping() -> None:
    chat = parse_chat(MODERN_CHAT)
    before = chat_fingerprints(chat)

    greeting = chat.messages[0]
    greeting.data["send_date"] = "2030-01-01T00:00:00.000Z"
    greeting.data["swipe_info"] = []
    greeting.set_extra("token_count", 99)
    greeting.data["is_system"] = True

    assert chat_fingerprints(chat) == before


@pytest.mark.parametrize(
    "change",
    [
        lambda m: m.data.update(mes="Edited."),
        lambda m: m.data.update(mes=m.data["swipes"][0], swipe_id=0),
        lambda m: m.data.update(name="Someone else"),
        lambda m: m.data.update(is_user=True),
    ],
    ids=["edited", "swiped", "renamed", "speaker"],
)
def test_fingerprint_changes_when_what_was_said_changes(change: Any) -> None:
    greeting = parse_chat(MODERN_CHAT).messages[0]
    before = message_fingerprint(greeting)

    change(greeting)

    assert message_fingerprint(greeting) != before


def test_chat_fingerprints_show_a_deleted_message() -> None:
    chat = parse_chat(MODERN_CHAT)
    before = chat_fingerprints(chat)

    del chat.messages[1]

    after = chat_fingerprints(chat)
    assert len(before) == 6
    assert after == before[:1] + before[2:]
    assert len(set(before)) == 6


@pytest.mark.parametrize(
    ("value", "named"),
    [
        ("Wren", "Wren"),
        ("unused", None),
        ("Unused ", None),
        ("", None),
        ("  ", None),
        (None, None),
        (42, None),
        ("unused person", "unused person"),
    ],
)
def test_header_names_leave_out_the_unused_placeholder(value: Any, named: str | None) -> None:
    header = ChatHeader({"user_name": value, "character_name": value})

    assert header.named_user == named
    assert header.named_character == named


def test_header_names_of_both_header_forms() -> None:
    assert parse_chat(MODERN_CHAT).header.named_character is None
    assert parse_chat(MODERN_CHAT).header.named_user is None
    assert parse_chat(LEGACY_CHAT).header.named_character == "Seraphina"
    assert parse_chat(LEGACY_CHAT).header.named_user == "You"


@pytest.mark.parametrize("text", [MODERN_CHAT, LEGACY_CHAT], ids=["modern", "legacy"])
def test_last_send_date_is_the_last_message_s_as_a_full_parse_reads_it(text: str) -> None:
    expected = parse_chat(text).messages[-1].send_date

    assert last_message_send_date(text) == expected
    assert last_message_send_date(text + "\n\n") == expected
    assert last_message_send_date(text.replace("\n", "\r\n")) == expected


def test_last_send_date_reads_only_the_last_line() -> None:
    text = '{"user_name":"u"}\nnot json at all\n{"mes":"b","send_date":1684445521323}'

    assert last_message_send_date(text) == 1684445521323


def test_last_send_date_accepts_a_tail_that_starts_inside_a_line() -> None:
    last_line = MODERN_CHAT.rsplit("\n", 1)[1]

    assert last_message_send_date(MODERN_CHAT[-len(last_line) - 30 :]) == "2026-02-15T10:04:00.000Z"
    assert last_message_send_date(last_line) == "2026-02-15T10:04:00.000Z"


@pytest.mark.parametrize(
    "text",
    [
        "",
        "\n",
        '{"chat_metadata":{},"user_name":"unused","character_name":"unused"}',
        '{"user_name":"u"}\n{"mes":"no date"}',
        '{"user_name":"u"}\n{"mes":"a","send_date":"June 19, 2023 2:20pm"}\n{"mes":"trunc',
        '{"user_name":"u"}\n["a list"]',
        '{"user_name":"u"}\n{"mes":"a","send_date":NaN}',
    ],
    ids=["empty", "blank", "header only", "no date", "truncated", "not an object", "NaN"],
)
def test_last_send_date_is_none_when_the_last_line_gives_none(text: str) -> None:
    assert last_message_send_date(text) is None


def test_a_headerless_group_chat_s_only_line_is_a_message() -> None:
    assert last_message_send_date('{"mes":"hi","send_date":"2024-07-05@14h20m05s"}') == (
        "2024-07-05@14h20m05s"
    )


@given(
    st.recursive(
        st.none()
        | st.booleans()
        | st.integers(-(2**60), 2**60)
        | st.floats(allow_nan=False)
        | st.text(st.characters(exclude_categories=())),  # lone surrogates too
        lambda inner: (
            st.lists(inner, max_size=4)
            | st.dictionaries(
                st.text(max_size=5) | st.from_regex(r"[0-9]{1,3}", fullmatch=True),
                inner,
                max_size=4,
            )
        ),
        max_leaves=20,
    ),
    st.sampled_from([None, 4]),
)
def test_the_fast_path_writes_what_the_javascript_emitter_writes(
    value: Any, indent: int | None
) -> None:
    from charmemory.formats.js_json import _emit

    parts: list[str] = []
    _emit(value, parts, " " * (indent or 0), "")
    assert js_stringify(value, indent=indent) == "".join(parts)


def test_lone_surrogates_are_read_as_replacement_characters_and_written_back_as_they_were() -> None:
    text = (
        '{"user_name":"Al\\udc00ex","character_name":"Mira","chat_metadata":{}}\n'
        '{"name":"Mi\\ud800ra","is_user":false,"is_system":false,"send_date":"x",'
        '"mes":"hums \\ud800 a tune","extra":{}}'
    )
    chat = parse_chat(text)
    assert chat.header.user_name == "Al\ufffdex"
    assert (chat.messages[0].name, chat.messages[0].mes) == ("Mi\ufffdra", "hums \ufffd a tune")
    assert chat.render() == text
