import pytest

from charmemory.core.memory_endpoint.request import Turn, read_request
from charmemory.errors import FormatError

MAIN = "Write Mira's next reply in a fictional chat between Mira and Alex."


def body(*messages, **fields):
    return {"messages": list(messages), **fields}


def test_the_conversation_is_the_user_and_assistant_turns_with_text():
    request = read_request(
        body(
            {"role": "system", "content": MAIN},
            {"role": "system", "name": "example_user", "content": "An example."},
            {"role": "assistant", "content": "Hello."},
            {
                "role": "user",
                "content": [{"type": "text", "text": "Hi "}, {"type": "text", "text": "you"}],
            },
            {"role": "assistant", "content": None, "tool_calls": [{"id": "x"}]},
            {"role": "user", "name": "Alex", "content": "and?"},
            model="m",
            stream=True,
        )
    )
    assert request.turns == (
        Turn(False, "Hello."),
        Turn(True, "Hi you"),
        Turn(True, "and?", "Alex"),
    )
    assert request.system_text == f"{MAIN}\n\nAn example."
    assert request.stream and request.model == "m" and request.kind == "reply"


def test_streaming_only_when_stream_is_true():
    assert not read_request(body({"role": "user", "content": "x"}, stream="yes")).stream
    assert not read_request(body({"role": "user", "content": "x"})).stream


def test_sillytavern_nudges_tell_a_continuation_and_an_impersonation():
    cont = "[Continue your last message without repeating its original content.]"
    imp = "[Write your next reply from the point of view of Alex, using the chat history...]"
    assert (
        read_request(
            body({"role": "assistant", "content": "a"}, {"role": "system", "content": cont})
        ).kind
        == "continue"
    )
    assert (
        read_request(
            body({"role": "user", "content": "a"}, {"role": "system", "content": imp})
        ).kind
        == "impersonate"
    )
    # A nudge before the conversation's end is part of the prompt, not an instruction now.
    assert (
        read_request(
            body({"role": "system", "content": cont}, {"role": "user", "content": "a"})
        ).kind
        == "reply"
    )


@pytest.mark.parametrize(
    "bad",
    [
        [],
        "text",
        {"model": "m"},
        {"messages": []},
        {"messages": ["hi"]},
        {"messages": [{"content": "x"}]},
    ],
)
def test_a_request_without_chat_messages_is_refused(bad):
    with pytest.raises(FormatError):
        read_request(bad)
