from pathlib import Path

from charmemory.core.memory_endpoint.recognition import recognise
from charmemory.formats.card import Card
from charmemory.ports import Character

MIRA_DESCRIPTION = (
    "{{char}} is a cartographer from the river town of Vell, mapping {{user}}'s road."
)


def character(name: str, description: str = "") -> Character:
    return Character(name, name, Path(f"/c/{name}.png"), Card(name=name, description=description))


PEOPLE = [
    character("Mira", MIRA_DESCRIPTION),
    character("Seraphina", "A guardian of the glade and its forest."),
]


def test_sillytavern_main_prompt_names_the_character():
    found = recognise("Write Mira's next reply in a fictional chat between Mira and Alex.", PEOPLE)
    assert found.character is PEOPLE[0] and "main prompt" in found.reason


def test_a_card_description_in_the_system_messages_names_its_character():
    text = (
        "Custom prompt.\nMira is a cartographer from the river town of Vell, mapping Alex's road."
    )
    found = recognise(text, PEOPLE)
    assert found.character is PEOPLE[0] and "describes" in found.reason


def test_two_matches_are_nobody_and_say_who():
    text = (
        "Write Mira's next reply in a fictional chat between Mira and Alex. "
        "A guardian of the glade and its forest."
    )
    found = recognise(text, PEOPLE)
    assert found.character is None and "Mira, Seraphina" in found.reason


def test_an_unknown_name_says_to_import_the_card():
    found = recognise("Write Bob's next reply in a fictional chat between Bob and Alex.", PEOPLE)
    assert found.character is None and "'Bob'" in found.reason and "import" in found.reason


def test_no_clue_is_nobody():
    found = recognise("You are a helpful assistant.", PEOPLE)
    assert found.character is None and "no character recognised" in found.reason


def test_a_short_description_is_too_common_to_tell_anyone_by():
    people = [character("Ann", "{{char}} is kind.")]
    assert recognise("Ann is kind.", people).character is None
