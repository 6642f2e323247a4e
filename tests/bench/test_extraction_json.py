"""The JSON-per-fact candidate's answers become the bullets the parser and scorer read."""

import json

from bench.extraction_json import EXAMPLE_JSON, SYSTEM_JSON, facts_as_bullets, facts_format

from charmemory.core.extraction_answer import SENTINEL, parse_answer


def bullets(answer: str) -> list[str]:
    return parse_answer(facts_as_bullets(answer), max_bullets=8).bullets


def test_each_fact_becomes_one_bullet_in_order() -> None:
    assert bullets(EXAMPLE_JSON) == [item["fact"] for item in json.loads(EXAMPLE_JSON)["facts"]]


def test_no_fact_is_the_sentinel() -> None:
    assert facts_as_bullets('{"facts": []}') == SENTINEL
    assert facts_as_bullets('{"facts": [{"about": "Ivy", "fact": "  "}]}') == SENTINEL


def test_an_answer_cut_before_its_json_closed_keeps_its_complete_facts() -> None:
    cut = (
        '{"facts": [{"about": "Ivy", "fact": "Ivy said \\"no\\".\\nTwice."}, {"about": "Bram", "fa'
    )
    assert bullets(cut) == ['Ivy said "no". Twice.']


def test_the_rules_and_the_example_ask_for_the_format_the_grammar_holds() -> None:
    schema = facts_format(8).schema
    assert schema["properties"]["facts"]["maxItems"] == 8
    assert list(schema["properties"]["facts"]["items"]["properties"]) == ["about", "fact"]
    assert '{"facts": []}' in SYSTEM_JSON and "<memory>" not in SYSTEM_JSON
