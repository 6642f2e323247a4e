"""World Info lorebooks, checked against SillyTavern's own default lorebook."""

from __future__ import annotations

import json
import shutil
import subprocess
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from charmemory.errors import FormatError, NotFoundError
from charmemory.formats.js_json import js_stringify, loads_json
from charmemory.formats.lorebook import (
    ENTRY_TEMPLATE,
    Lorebook,
    new_entry,
    parse_lorebook,
)
from tests.support.sillytavern_samples import sillytavern_sample


@pytest.fixture(scope="module")
def eldoria_text() -> str:
    return sillytavern_sample("Eldoria.json").read_text(encoding="utf-8")


def sillytavern_write(document: Any) -> str:
    """What SillyTavern's `JSON.stringify(data, null, 4)` gives for plain data
    (no integer-like keys out of order, no floats), via the standard library."""
    return json.dumps(document, indent=4, ensure_ascii=False)


def test_eldoria_round_trips_byte_for_byte(eldoria_text: str):
    assert parse_lorebook(eldoria_text).render() == eldoria_text


def test_eldoria_entries_are_typed(eldoria_text: str):
    book = parse_lorebook(eldoria_text, source="Eldoria.json")

    assert list(book.entries) == [0, 1, 2, 3]
    first = book.entries[0]
    assert first.keys == ("eldoria", "wood", "forest", "magical forest")
    assert first.secondary_keys == ()
    assert first.comment == "eldoria"
    assert first.content.startswith('{{user}}: "What is Eldoria?"')
    assert (first.constant, first.selective, first.disable) == (False, True, False)
    assert (first.order, first.position, first.depth) == (100, 0, 4)


def test_render_writes_like_sillytavern_whatever_the_input_layout():
    text = '{"name":"Atlas","entries":{"10":{"uid":10,"content":"b"},"2":{"uid":2,"content":"a"}}}'

    rendered = parse_lorebook(text).render()

    assert rendered == (
        "{\n"
        '    "name": "Atlas",\n'
        '    "entries": {\n'
        '        "2": {\n            "uid": 2,\n            "content": "a"\n        },\n'
        '        "10": {\n            "uid": 10,\n            "content": "b"\n        }\n'
        "    }\n"
        "}"
    )


def test_deleting_an_entry_leaves_the_others_byte_identical(eldoria_text: str):
    book = parse_lorebook(eldoria_text)

    removed = book.delete(1)

    expected = json.loads(eldoria_text)
    del expected["entries"]["1"]
    assert removed.comment == "shadowfang"
    assert book.render() == sillytavern_write(expected) + "\n"


def test_updating_an_entry_changes_only_the_named_fields_in_place(eldoria_text: str):
    book = parse_lorebook(eldoria_text)

    entry = book.update(2, content="The glade is warded.", key=["glade"], sticky=3)

    expected = json.loads(eldoria_text)
    expected["entries"]["2"].update(content="The glade is warded.", key=["glade"], sticky=3)
    assert entry.keys == ("glade",)
    assert book.render() == sillytavern_write(expected) + "\n"


def test_changing_a_typed_field_writes_only_that_field(eldoria_text: str):
    book = parse_lorebook(eldoria_text)

    book.entries[3].disable = True

    expected = json.loads(eldoria_text)
    expected["entries"]["3"]["disable"] = True
    assert book.render() == sillytavern_write(expected) + "\n"


def test_missing_entries_cannot_be_updated_or_deleted(eldoria_text: str):
    book = parse_lorebook(eldoria_text)

    with pytest.raises(NotFoundError, match="entry 9"):
        book.delete(9)
    with pytest.raises(NotFoundError, match="entry 9"):
        book.update(9, content="x")


def test_a_new_entry_has_every_sillytavern_default_in_their_order():
    entry = new_entry("Mira lost her compass.", ["Mira", "compass"], comment="memory", uid=7)

    stored = entry.to_dict()
    assert list(stored) == ["uid", *ENTRY_TEMPLATE]
    assert stored == {
        **ENTRY_TEMPLATE,
        "uid": 7,
        "key": ["Mira", "compass"],
        "comment": "memory",
        "content": "Mira lost her compass.",
    }


def test_fields_given_to_a_new_entry_override_defaults_or_are_added():
    entry = new_entry("x", [], position=4, depth=2, characterFilter={"names": ["Mira"]})

    stored = entry.to_dict()
    assert (stored["position"], stored["depth"], entry.position, entry.depth) == (4, 2, 4, 2)
    assert list(stored)[-1] == "characterFilter"


def test_add_takes_the_smallest_free_uid(eldoria_text: str):
    book = parse_lorebook(eldoria_text)
    book.delete(1)

    entry = book.add("Shadowfangs fear fire.", ["shadowfang"], comment="fear")

    assert entry.uid == 1
    assert list(book.entries) == [0, 1, 2, 3]
    assert book.add("next", []).uid == 4
    assert json.loads(book.render())["entries"]["1"]["content"] == "Shadowfangs fear fire."


def test_a_new_lorebook_renders_like_sillytavern_creates_one():
    book = Lorebook()
    book.add("first", ["a"])

    rendered = json.loads(book.render())

    assert Lorebook().render() == '{\n    "entries": {}\n}'
    assert list(rendered) == ["entries"]
    assert rendered["entries"]["0"]["uid"] == 0


def test_unknown_fields_and_nulls_survive(eldoria_text: str):
    document = json.loads(eldoria_text)
    document["extensions"] = {"charmemory": {"version": 1}}
    document["entries"]["0"]["extensions"] = {"cast": ["Mira"], "weights": [0.25, 1e-7]}
    document["entries"]["0"]["characterFilter"] = {"isExclude": False, "names": []}
    document["entries"]["0"]["comment"] = None
    text = js_stringify(document, indent=4)

    book = parse_lorebook(text)

    assert book.entries[0].comment == ""
    assert book.render() == text


def test_an_entry_without_a_uid_takes_its_key():
    book = parse_lorebook('{"entries": {"5": {"content": "x"}}}')

    assert book.entries[5].uid == 5
    assert json.loads(book.render())["entries"]["5"] == {"uid": 5, "content": "x"}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"entries": {', "invalid JSON"),
        ("[]", "no 'entries' object"),
        ('{"entries": []}', "lorebook in an unsupported shape: its 'entries' is a list"),
        ('{"entries": {"first": {"uid": 0}}}', "'first' is not a uid"),
        ('{"entries": {"01": {"uid": 1}}}', "'01' is not a uid"),
        ('{"entries": {"0": "text"}}', "'0' is not a uid and an object"),
        ('{"entries": {"0": {"uid": 1}}}', "stored under '0' has uid 1"),
        ('{"entries": {"0": {"uid": -1}}}', "no valid uid"),
        ('{"entries": {"0": {"uid": 0, "key": "mira"}}}', "'key' must be a list of text"),
        ('{"entries": {"0": {"uid": 0, "disable": 0}}}', "'disable' must be true or false"),
        ('{"entries": {"0": {"uid": 0, "order": "1"}}}', "'order' must be a number"),
        ('{"entries": {"0": {"uid": 0, "order": NaN}}}', "NaN is not a JSON value"),
    ],
)
def test_malformed_lorebooks_are_format_errors_naming_the_source(text: str, message: str):
    with pytest.raises(FormatError, match=message) as caught:
        parse_lorebook(text, source="worlds/bad.json")
    assert str(caught.value).startswith("worlds/bad.json")


def test_a_json_error_reports_its_line():
    with pytest.raises(FormatError) as caught:
        parse_lorebook('{\n  "entries": {\n    "0": {,}\n  }\n}', source="bad.json")

    assert caught.value.line == 3


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (1.0, "1"),
        (-0.0, "0"),
        (0.5, "0.5"),
        (1e21, "1e+21"),
        (1e20, "100000000000000000000"),
        (1e16, "10000000000000000"),
        (0.000001, "0.000001"),
        (1.5e-7, "1.5e-7"),
        (5e-324, "5e-324"),
        (float("nan"), "null"),
        (float("inf"), "null"),
        (2**64, "18446744073709552000"),
        ("\ud83d", '"\\ud83d"'),
        ("tab\tand\x01", '"tab\\tand\\u0001"'),
        ("é \u2028 /", '"é \u2028 /"'),
        ({"b": 1, "4294967295": 2, "4294967294": 3, "-1": 4, "0": 5}, None),
    ],
)
def test_js_stringify_formats_like_javascript(value: Any, expected: str | None):
    if expected is None:  # key order: array indexes first, ascending
        expected = '{"0":5,"4294967294":3,"b":1,"4294967295":2,"-1":4}'
    assert js_stringify(value) == expected


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**53), max_value=2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=6), children, max_size=3)
    ),
    max_leaves=8,
)


@pytest.mark.skipif(shutil.which("node") is None, reason="needs Node.js to compare with")
def test_js_stringify_matches_node_json_stringify():
    values: list[Any] = [
        m * 10.0**e for m in (1, 1.5, 2.25, 9.87654321) for e in range(-330, 310, 7)
    ]
    values += [0.1 + 0.2, 2**53 + 1.0, 123456789.125, -1e-7, 2**64, -(10**30)]
    values += ["\ud800 lone", "\x00\x1f\x7f\u2029", '"\\/']
    values += [{"10": [], "9": {}, "a": {"2": 1, "1": [1.0, None, True]}, "01": 0, "": ""}]
    payload = json.dumps(values)  # ASCII: lone surrogates travel as escapes

    script = (
        "const s = require('fs').readFileSync(0, 'utf8');"
        "const out = JSON.parse(s).map(v => [JSON.stringify(v), JSON.stringify(v, null, 4)]);"
        "process.stdout.write(JSON.stringify(out));"
    )
    result = subprocess.run(
        ["node", "-e", script], input=payload, capture_output=True, text=True, check=True
    )

    ours = [[js_stringify(v), js_stringify(v, indent=4)] for v in loads_json(payload)]
    assert ours == json.loads(result.stdout)


entry_fields = st.fixed_dictionaries(
    {},
    optional={
        "key": st.lists(st.text(max_size=10), max_size=3),
        "keysecondary": st.lists(st.text(max_size=10), max_size=2),
        "comment": st.text(max_size=20) | st.none(),
        "content": st.text(max_size=60),
        "constant": st.booleans(),
        "disable": st.booleans(),
        "order": st.integers(-1000, 1000),
        "depth": st.integers(0, 100) | st.floats(0, 100),
        "sticky": st.none() | st.integers(0, 10),
        "extensions": st.dictionaries(st.text(max_size=6), json_values, max_size=3),
        "characterFilter": json_values,
    },
)
lorebooks = st.dictionaries(st.integers(0, 50), entry_fields, max_size=8).map(
    lambda entries: {
        "entries": {str(uid): {"uid": uid, **fields} for uid, fields in entries.items()},
        "name": "generated",
    }
)


@settings(max_examples=150)
@given(lorebooks)
def test_generated_lorebooks_survive_parse_render_parse(document: dict[str, Any]):
    first = parse_lorebook(json.dumps(document))
    rendered = first.render()
    second = parse_lorebook(rendered)

    assert second.to_dict() == first.to_dict() == document
    assert second.render() == rendered


@settings(max_examples=200)
@given(st.sets(st.integers(0, 30), max_size=25))
def test_next_uid_is_the_smallest_free_non_negative_integer(uids: set[int]):
    book = Lorebook()
    for uid in uids:
        book.put(new_entry("x", [], uid=uid))

    free = book.next_uid()

    assert free not in uids
    assert all(uid in uids for uid in range(free))
    assert book.add("y", []).uid == free
