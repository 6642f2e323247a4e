from charmemory.core.pronoun_names import name_pronouns

CHAT = (
    "Kael: *I shake the rain off my cloak.* \"My father wasn't a blacksmith. "
    "I'm the last heir of House Dunmere. Nobody knows but you.\"\n\n"
    'Thalindra: *She hands you a map.* "Bring it back, or I will haunt you."'
)


def test_i_is_the_speaker_and_you_the_other_one() -> None:
    assert name_pronouns(CHAT, "Thalindra", "Kael") == (
        "Kael: *Kael shake the rain off Kael's cloak.* \"Kael's father wasn't a blacksmith. "
        'Kael is the last heir of House Dunmere. Nobody knows but Thalindra."\n\n'
        'Thalindra: *She hands Kael a map.* "Bring it back, or Thalindra will haunt Kael."'
    )


def test_contractions_and_curly_apostrophes_become_whole_phrases() -> None:
    chat = "Mira: I\u2019ve sworn it, and you\u2019re the one I\u2019d trust. It's yours."
    assert name_pronouns(chat, "Mira", "Alex") == (
        "Mira: Mira has sworn it, and Alex is the one Mira would trust. It's Alex's."
    )


def test_words_that_only_contain_a_pronoun_stay_and_so_does_mine() -> None:
    chat = "Mira: Determined youth. The old mine? Myself, I doubt it."
    assert name_pronouns(chat, "Mira", "Alex") == (
        "Mira: Determined youth. The old mine? Myself, Mira doubt it."
    )


def test_a_paragraph_without_a_name_continues_the_message_before_it() -> None:
    chat = "Alex: I lost my key.\n\nI think you took it.\n\nMira: I did not."
    assert name_pronouns(chat, "Mira", "Alex") == (
        "Alex: Alex lost Alex's key.\n\nAlex think Mira took it.\n\nMira: Mira did not."
    )


def test_with_a_third_speaker_you_is_left_alone_and_i_is_still_named() -> None:
    chat = "Alex: I owe you.\n\nBrin: You owe me too.\n\nMira: I know."
    assert name_pronouns(chat, "Mira", "Alex") == (
        "Alex: Alex owe you.\n\nBrin: You owe me too.\n\nMira: Mira know."
    )


def test_text_that_is_not_a_rendered_chat_is_unchanged() -> None:
    assert name_pronouns("I walked in.", "Mira", "Alex") == "I walked in."
    assert name_pronouns(CHAT, "Kael", "Kael") == CHAT
    assert name_pronouns(CHAT, "", "Kael") == CHAT
