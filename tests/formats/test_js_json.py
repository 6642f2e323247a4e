"""JSON.stringify emulation: the quick path through json.dumps and its remembered checks."""

from __future__ import annotations

from charmemory.formats.js_json import _AlikeTexts, js_stringify


def test_a_number_after_a_string_with_escaped_quotes_is_still_found() -> None:
    value = {"a": 'x"', "n": 1e16, "b": "y\\"}
    expected = '{"a":"x\\"","n":10000000000000000,"b":"y\\\\"}'
    assert js_stringify(value) == expected


def test_only_texts_written_alike_are_remembered() -> None:
    differing = {"n": 1e16, "id": 12345678901234567891}
    first = js_stringify(differing)
    assert first == '{"n":10000000000000000,"id":12345678901234567000}'
    assert js_stringify(differing) == first


def test_remembered_texts_stay_within_their_bound() -> None:
    alike = _AlikeTexts(max_chars=10)
    for text in ["abcdef", "ghijkl", "abcdef", "mn"]:
        assert alike.written_alike(text)
        assert alike._chars <= 10
    assert not alike.written_alike("[1.5e+30]")
