import pytest

from charmemory.core.injection import Injection
from charmemory.core.memory_endpoint.injection import with_injection

MESSAGES = [
    {"role": "system", "content": "main"},
    {"role": "system", "content": "card"},
    {"role": "assistant", "content": "greeting"},
    {"role": "user", "content": "u1"},
    {"role": "assistant", "content": "a1"},
    {"role": "user", "content": "u2"},
    {"role": "system", "content": "post-history"},
]


def injection(position="in_chat", depth=4, role="system", text="Related information:\n- x"):
    return Injection(text, ("x",), (), 5, position, depth, role)


def contents(messages):
    return [m["content"] for m in messages]


@pytest.mark.parametrize(
    ("depth", "before"),
    [(0, "post-history"), (1, "u2"), (2, "a1"), (4, "greeting"), (9, "greeting")],
)
def test_in_chat_depth_counts_conversation_messages_from_the_end(depth, before):
    out = with_injection(MESSAGES, injection(depth=depth))
    at = contents(out).index("Related information:\n- x")
    assert out[at + 1]["content"] == before and len(out) == len(MESSAGES) + 1


def test_in_chat_takes_the_configured_role_other_positions_are_system():
    assert with_injection(MESSAGES, injection(role="user"))[2]["role"] == "user"
    before = with_injection(MESSAGES, injection("before_prompt", role="user"))
    assert before[0] == {"role": "system", "content": "Related information:\n- x"}
    in_prompt = with_injection(MESSAGES, injection("in_prompt"))
    assert contents(in_prompt)[:3] == ["main", "card", "Related information:\n- x"]


def test_nothing_to_inject_leaves_the_messages_as_they_are():
    assert with_injection(MESSAGES, injection(text="")) == MESSAGES


def test_the_original_messages_are_not_changed():
    copy = [dict(m) for m in MESSAGES]
    with_injection(MESSAGES, injection())
    assert copy == MESSAGES
