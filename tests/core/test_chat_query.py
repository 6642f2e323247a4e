"""Which messages a chat turn's memory query reads: the greeting stays out."""

from charmemory.core.chat_query import query_messages
from charmemory.formats.chat import Chat, parse_chat
from tests.support.extraction_fixtures import line, message


def chat_of(*said: tuple[bool, str], hidden: tuple[int, ...] = ()) -> Chat:
    header = line({"user_name": "Alex", "character_name": "Mira", "chat_metadata": {}})
    lines = [
        line(message(index, is_user=by_user, text=text, is_system=index in hidden))
        for index, (by_user, text) in enumerate(said)
    ]
    return parse_chat("\n".join([header, *lines]))


def test_the_greeting_is_left_out_once_the_user_has_spoken() -> None:
    chat = chat_of((False, "Welcome aboard the Kestrel."), (True, "Where did my brother go?"))
    assert query_messages(chat) == ["Where did my brother go?"]


def test_every_opening_message_before_the_users_first_is_greeting() -> None:
    chat = chat_of(
        (False, "Mira waves."),
        (False, "Abel waves too."),
        (True, "Hello both."),
        (False, "Hi."),
        (True, "The brother?"),
    )
    assert query_messages(chat) == ["Hello both.", "Hi.", "The brother?"]


def test_a_chat_of_greetings_alone_is_queried_with_them() -> None:
    chat = chat_of((False, "Welcome aboard."), (False, "Mind the step."))
    assert query_messages(chat, "continue") == ["Welcome aboard.", "Mind the step."]


def test_hidden_messages_and_a_swiped_reply_stay_out() -> None:
    chat = chat_of(
        (False, "Welcome."),
        (True, "Hidden question."),
        (True, "Asked."),
        (False, "Replaced reply."),
        hidden=(1,),
    )
    assert query_messages(chat) == ["Asked.", "Replaced reply."]
    assert query_messages(chat, "swipe") == ["Asked."]
