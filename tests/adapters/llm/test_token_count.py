"""Counting tokens with the embedded model's own vocabulary, and fitting prompts with it."""

from pathlib import Path

import pytest

from charmemory.adapters.llm import embedded, token_count
from charmemory.adapters.llm.token_count import VocabularyCounter, token_counter
from charmemory.adapters.model_install import MODELS_DIR_ENV
from charmemory.composition import App
from charmemory.core.injection import approximate_tokens
from charmemory.core.prompt import PromptSettings
from tests.support.extraction_fixtures import CHARACTER, make_workspace, message, write_chat
from tests.support.prompts import card, chat, prompt

JAPANESE = "日本語のテキスト"  # 8 characters, 6 tokens in Qwen 2.5's vocabulary


@pytest.fixture(scope="module")
def counter() -> VocabularyCounter:
    if not embedded.local_llm_ready():
        pytest.skip("the local model is not installed")
    counter = token_counter()
    assert isinstance(counter, VocabularyCounter)  # installed: its vocabulary counts
    return counter


class CountedCalls:
    """Stands between the counter and its vocabulary: how often the tokenizer ran."""

    def __init__(self, vocabulary: object) -> None:
        self.vocabulary = vocabulary
        self.texts: list[bytes] = []

    def tokenize(self, text: bytes, **options: bool) -> list[int]:
        self.texts.append(text)
        return self.vocabulary.tokenize(text, **options)  # type: ignore[attr-defined]


@pytest.mark.local_model
@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("", 0),
        ("Hello world", 2),  # "Hello", " world"
        ("Seraphina", 3),  # "Ser", "aph", "ina"
        ("a a a a a a a a", 8),  # "a" then seven " a"
        ("x" * 40, 5),  # five runs of eight
        (JAPANESE, 6),
        ("🙂🙂🙂🙂", 4),
        ("<|im_start|>", 6),  # typed by a user, a special token's name is plain text
    ],
)
def test_counts_are_the_vocabularys_tokenizations(
    counter: VocabularyCounter, text: str, tokens: int
) -> None:
    assert counter(text) == tokens


@pytest.mark.local_model
def test_a_text_is_tokenized_once_while_remembered(
    counter: VocabularyCounter, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = CountedCalls(counter._vocabulary)
    monkeypatch.setattr(counter, "_vocabulary", calls)
    monkeypatch.setattr(counter, "_counts", type(counter._counts)())
    monkeypatch.setattr(token_count, "REMEMBERED", 2)

    counts = [counter(text) for text in ("Hello world", "Hello world", "Seraphina")]
    assert counts == [2, 2, 3]
    assert calls.texts == [b"Hello world", b"Seraphina"]

    counter("Hello world")  # the newest again: "Seraphina" is now the oldest
    counter(JAPANESE)  # a third text: the oldest is forgotten
    counter("Hello world")  # still remembered
    counter("Seraphina")  # forgotten: tokenized again
    assert calls.texts == [b"Hello world", b"Seraphina", JAPANESE.encode(), b"Seraphina"]


def test_without_the_runtime_the_estimate_counts(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(embedded, "RUNTIME_MODULE", "llama_cpp_not_installed_here")
    assert token_counter() is approximate_tokens


def test_without_the_model_the_estimate_counts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not embedded.runtime_installed():
        pytest.skip("llama-cpp-python is not installed")
    monkeypatch.setenv(MODELS_DIR_ENV, str(tmp_path))
    assert token_counter() is approximate_tokens


def fitted_cost(counter: VocabularyCounter, messages: tuple) -> int:
    """What the messages cost as the model counts them, with SillyTavern's overheads."""
    return sum(counter(m.content) + 3 + (1 if m.name else 0) for m in messages) + 3


@pytest.mark.local_model
def test_a_prompt_fits_the_context_as_the_model_counts_it(counter: VocabularyCounter) -> None:
    # Japanese costs three times what the estimate guesses: fitted by the estimate, the
    # prompt would overflow the model's context.
    lines = chat(*[(("Wren" if i % 2 else "Seraphina"), JAPANESE * 3) for i in range(12)])
    settings = PromptSettings(context_size=200, response_length=40)

    counted = prompt(card(), lines, settings=settings, count_tokens=counter).prompt
    guessed = prompt(card(), lines, settings=settings).prompt

    budget = settings.context_size - settings.response_length
    assert counted.tokens == fitted_cost(counter, counted.messages) <= budget
    assert fitted_cost(counter, guessed.messages) > budget
    kept = [m.message_id for m in counted.messages if m.message_id is not None]
    assert 0 < len(kept) < 12 - len(guessed.dropped_message_ids)
    assert kept == list(range(12 - len(kept), 12))  # the newest messages stay


@pytest.mark.local_model
async def test_a_chat_turn_is_fitted_with_the_installed_vocabulary(
    tmp_path: Path, counter: VocabularyCounter
) -> None:
    ws = make_workspace(tmp_path / "ws")
    write_chat(ws, [message(i, is_user=i % 2 == 0, text=JAPANESE * 10) for i in range(30)])
    app = App(ws, env={})
    app.settings.set("model.context_size", "1024")
    app.settings.set("model.max_tokens", "24")

    # 30 messages of 80 characters: 600 tokens by the estimate, 1,800 by the vocabulary.
    preview = await app.chat.preview(CHARACTER, "こんにちは")

    contents = [m["content"] for m in preview["messages"]]
    history = [text for text in contents if JAPANESE in text]
    assert 0 < len(history) < 30
    assert sum(counter(text) + 3 for text in contents) + 3 <= 1024 - 24
