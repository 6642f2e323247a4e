from hypothesis import given, settings
from hypothesis import strategies as st

from charmemory.core.memory_endpoint.recording import align, choose_chat, mirror
from charmemory.core.memory_endpoint.request import Turn
from charmemory.formats.chat import Message
from tests.core.memory_endpoint.frontend import (
    SPEAKERS,
    Frontend,
    Shown,
    empty_chat,
    exchange,
    visible,
)

GREETING = Turn(False, "Hello, traveller.")


def turns(*texts: str) -> list[Turn]:
    """Alternating turns after the greeting: user, assistant, user..."""
    return [GREETING, *(Turn(i % 2 == 0, text) for i, text in enumerate(texts))]


def recorded(*texts: str):
    chat = empty_chat()
    exchange(chat, turns(*texts), None)
    return chat


def test_a_first_request_records_every_turn_and_the_reply_goes_after_them():
    chat = empty_chat()
    history = turns("hi")
    mirrored = mirror(chat, history, align(chat, history), SPEAKERS, "reply")
    assert mirrored.added == (0, 1)
    assert mirrored.reply.kind == "new"
    assert visible(chat) == [(False, "Hello, traveller."), (True, "hi")]
    assert chat.messages[1].name == "Alex" and chat.messages[0].name == "Mira"


def test_the_next_request_appends_only_what_is_new():
    chat = recorded("hi", "Hi there.")
    history = turns("hi", "Hi there.", "how are you?")
    mirrored = mirror(chat, history, align(chat, history), SPEAKERS, "reply")
    assert mirrored.added == (3,) and not mirrored.edited and not mirrored.deleted
    assert len(chat.messages) == 4


def test_a_regeneration_keeps_the_reply_and_adds_a_swipe():
    chat = recorded("hi", "First answer.")
    index = exchange(chat, turns("hi"), "Second answer.")
    assert index == 2 and len(chat.messages) == 3
    assert chat.messages[2].swipes == ("First answer.", "Second answer.")
    assert chat.messages[2].mes == "Second answer."
    exchange(chat, turns("hi"), "Third answer.")
    assert chat.messages[2].swipes == ("First answer.", "Second answer.", "Third answer.")


def test_a_swipe_chosen_in_the_frontend_is_chosen_in_the_chat():
    chat = recorded("hi", "First answer.")
    exchange(chat, turns("hi"), "Second answer.")
    history = turns("hi", "First answer.", "and then?")
    mirrored = mirror(chat, history, align(chat, history), SPEAKERS, "reply")
    assert mirrored.swiped == (2,) and not mirrored.edited and not mirrored.deleted
    assert chat.messages[2].mes == "First answer." and chat.messages[2].swipe_id == 0
    assert len(chat.messages[2].swipes) == 2


def test_an_edited_earlier_message_is_edited_in_place_keeping_its_extra():
    chat = recorded("hi", "Hi there.", "where now?", "North.")
    chat.messages[1].set_extra("marker", 1)
    history = turns("hello!", "Hi there.", "where now?", "North.", "go")
    mirrored = mirror(chat, history, align(chat, history), SPEAKERS, "reply")
    assert mirrored.edited == (1,) and mirrored.added == (5,) and not mirrored.deleted
    assert chat.messages[1].mes == "hello!" and chat.messages[1].extra["marker"] == 1


def test_an_edited_reply_changes_its_shown_swipe():
    chat = recorded("hi", "Hi there.")
    exchange(chat, turns("hi"), "Second.")
    history = turns("hi", "Second, edited.", "ok")
    mirror(chat, history, align(chat, history), SPEAKERS, "reply")
    assert chat.messages[2].swipes == ("Hi there.", "Second, edited.")


def test_a_deleted_last_pair_is_deleted_and_the_new_message_follows():
    chat = recorded("hi", "Hi there.", "where now?", "North.")
    history = turns("hi", "Hi there.", "let us rest")
    mirrored = mirror(chat, history, align(chat, history), SPEAKERS, "reply")
    assert mirrored.reply.kind == "new"
    assert visible(chat)[-2:] == [(False, "Hi there."), (True, "let us rest")]
    assert len(chat.messages) == 4


def test_a_message_deleted_in_the_middle_is_deleted():
    chat = recorded("hi", "Hi there.", "where now?", "North.")
    history = [t for t in turns("hi", "Hi there.", "where now?", "North.", "go") if t.text != "hi"]
    mirrored = mirror(chat, history, align(chat, history), SPEAKERS, "reply")
    assert mirrored.deleted == 1 and mirrored.added == (4,)
    assert [text for _, text in visible(chat)] == [
        "Hello, traveller.",
        "Hi there.",
        "where now?",
        "North.",
        "go",
    ]


def test_hidden_and_narrator_messages_stay_where_they_were():
    chat = recorded("hi", "Hi there.")
    hidden = Message.new(name="Alex", mes="(hidden aside)", is_user=True, send_date="x")
    hidden.data["is_system"] = True
    narrator = Message.new(name="System", mes="Night falls.", is_user=False, send_date="x")
    narrator.set_extra("type", "narrator")
    chat.messages[2:2] = [hidden, narrator]
    history = turns("hi", "Hi there.", "go on")
    mirror(chat, history, align(chat, history), SPEAKERS, "reply")
    assert [m.mes for m in chat.messages] == [
        "Hello, traveller.",
        "hi",
        "(hidden aside)",
        "Night falls.",
        "Hi there.",
        "go on",
    ]


def test_a_continuation_goes_onto_the_last_reply():
    chat = recorded("hi", "Hi")
    index = exchange(chat, turns("hi", "Hi"), " there.", "continue")
    assert index == 2 and chat.messages[2].mes == "Hi there." and len(chat.messages) == 3


def test_an_assistant_message_last_without_the_nudge_gets_a_new_reply():
    chat = recorded("hi", "Hi")
    index = exchange(chat, turns("hi", "Hi"), "More.")
    assert index == 3


def test_whitespace_differences_are_the_same_message():
    chat = recorded("hi  there", "Hello.")
    history = turns("hi there ", "Hello.\n", "next")
    alignment = align(chat, history)
    assert alignment.untouched and alignment.shared == 2


def test_choose_chat_prefers_the_most_shared_turns():
    short = recorded("hi", "Hi there.")
    long = recorded("hi", "Hi there.", "where now?", "North.")
    history = turns("hi", "Hi there.", "where now?", "North.", "go")
    chosen = choose_chat([("short", short), ("long", long)], history)
    assert chosen is not None and chosen[0] == "long"


def test_a_greeting_alone_is_a_new_conversation():
    chat = recorded("hi", "Hi there.")
    assert choose_chat([("old", chat)], turns("something else")) is None


def test_a_shared_opening_line_does_not_truncate_a_long_chat():
    chat = recorded("hi", "a", "b", "c", "d", "e")
    assert choose_chat([("old", chat)], turns("hi", "other")) is None


def test_a_deleted_last_pair_still_continues_the_chat():
    chat = recorded("hi", "a", "b", "c")
    chosen = choose_chat([("old", chat)], turns("hi", "a", "new"))
    assert chosen is not None and chosen[1].removed == 2


# -- a frontend doing anything SillyTavern lets a user do ---------------------------------

operation = st.one_of(
    st.tuples(st.just("send"), st.integers(0, 3)),
    st.tuples(st.just("regenerate"), st.just(0)),
    st.tuples(st.just("edit"), st.integers(0, 50)),
    st.tuples(st.just("delete_last"), st.integers(1, 3)),
    st.tuples(st.just("delete"), st.integers(0, 50)),
    st.tuples(st.just("swipe_back"), st.just(0)),
    st.tuples(st.just("continue"), st.just(0)),
)


@settings(max_examples=150, deadline=None)
@given(st.lists(operation, min_size=1, max_size=25))
def test_the_chat_follows_whatever_the_frontend_does(operations):
    front = Frontend([Shown(False, ["Hello, traveller."])])
    chat = empty_chat()
    counter = 0
    for name, arg in operations:
        counter += 1
        reply = f"reply {counter}"
        last = front.messages[-1] if front.messages else None
        if name == "send":
            # Some sends repeat an earlier message word for word: people do.
            front.messages.append(
                Shown(True, [f"message {counter % (arg + 2) if arg else counter}"])
            )
            exchange(chat, front.turns(), reply)
            front.messages.append(Shown(False, [reply]))
        elif (
            name == "regenerate"
            and last is not None
            and not last.is_user
            and len(front.messages) > 1
        ):
            exchange(chat, front.turns()[:-1], reply)
            last.swipes.append(reply)
            last.swipe_id = len(last.swipes) - 1
        elif name == "swipe_back" and last is not None and not last.is_user and last.swipe_id > 0:
            last.swipe_id -= 1
        elif name == "continue" and last is not None and not last.is_user:
            exchange(chat, front.turns(), f" more {counter}", "continue")
            last.swipes[last.swipe_id] += f" more {counter}"
        elif name == "edit" and front.messages:
            shown = front.messages[arg % len(front.messages)]
            shown.swipes[shown.swipe_id] = f"edited {counter}"
        elif name == "delete_last" and len(front.messages) > arg:
            del front.messages[-arg:]
        elif name == "delete" and len(front.messages) > 1:
            del front.messages[1 + arg % (len(front.messages) - 1)]
        else:
            continue
    # Whatever happened last, the next request brings the chat up to date.
    front.messages.append(Shown(True, ["the last word"]))
    exchange(chat, front.turns(), "the end")
    front.messages.append(Shown(False, ["the end"]))
    assert visible(chat) == front.texts()
