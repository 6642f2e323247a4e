import pytest

from charmemory.core.redaction import REDACTED, Redactor, without_secrets

OPENAI = "sk-proj-4f9a8b7c6d5e4f3a2b1c"
NVIDIA = "nvapi-Zq81TxLw0PmY4rKc9sVb"
PLAIN = "m1stral0key7d6c5b4a39281"  # a key with no known prefix


def test_every_occurrence_of_every_secret_is_removed() -> None:
    redact = Redactor([OPENAI, NVIDIA, PLAIN])
    text = (
        f"{OPENAI} then {PLAIN}{PLAIN} (twice, touching), {NVIDIA}; again {OPENAI}, "
        f"inside a word x{PLAIN}y and once more {NVIDIA}{OPENAI}"
    )
    shown = redact(text)
    for key in (OPENAI, NVIDIA, PLAIN):
        assert key not in shown
        # Not even a part of one: its middle would identify it.
        assert key[6:14] not in shown
    assert shown.count(REDACTED) == 8


def test_a_key_containing_another_is_replaced_whole() -> None:
    assert Redactor(["abcdef123456", "abcdef123456789"])("[abcdef123456789]") == f"[{REDACTED}]"


def test_a_replacement_is_never_searched_again() -> None:
    # "redact" is inside "[redacted]": a second pass would mangle the first one's marker.
    assert Redactor(["tokenABCDEFGH", "redact"])("tokenABCDEFGH") == REDACTED


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("Authorization: Bearer abc.def-123_456", f"Authorization: Bearer {REDACTED}"),
        ('{"api_key": "0123456789abcdef"}', f'{{"api_key": "{REDACTED}"}}'),
        ("x-api-key: 0123456789abcdef", f"x-api-key: {REDACTED}"),
        ("your key sk-HOSTILE-KEY-93afb2c1d0e9f8", f"your key {REDACTED}"),
        ("groq gsk_abcdefghijklmnop1234", f"groq {REDACTED}"),
        ("xai-ABCDEFGHIJKL0123 and nvapi-abcdefghijkl0123", f"{REDACTED} and {REDACTED}"),
        ("sk-ant-api03-Zx9" + "q" * 90, REDACTED),
    ],
)
def test_credentials_are_removed_whoever_they_belong_to(text: str, shown: str) -> None:
    assert Redactor()(text) == shown


@pytest.mark.parametrize(
    "text",
    [
        "a task-force of twelve",
        "risk-assessment-report",
        "sk-short1",
        "ask-me-anything-now",
        "the sk-learn-tutorial-for-beginners",  # long, but no digit
    ],
)
def test_ordinary_words_are_left_alone(text: str) -> None:
    assert Redactor()(text) == text


def test_memories_revealing_a_secret_are_dropped_with_a_warning_that_shows_none() -> None:
    kept, warnings = without_secrets(
        ["Mira owns a compass.", f"The key is {PLAIN}.", "Alex said sk-abcdefghijklmnop7."],
        Redactor([PLAIN]),
    )
    assert kept == ["Mira owns a compass."]
    assert len(warnings) == 2 and all(w.startswith("secret: ") for w in warnings)
    assert PLAIN not in " ".join(warnings) and "sk-abcdefghijklmnop7" not in " ".join(warnings)
