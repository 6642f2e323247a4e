"""Counting a text's tokens: with the embedded model's tokenizer where it is installed.

Only the model's vocabulary is loaded (`vocab_only`), in a fraction of a second
and a few MB. Counts are remembered per text, since a chat's older messages are
counted again on every turn. Without the embedded model, the documented estimate
(`core.injection.approximate_tokens`: a token per four characters) stands in.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
import threading
from collections import OrderedDict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from charmemory.adapters.llm.embedded import runtime_installed
from charmemory.adapters.model_install import (
    DEFAULT_LOCAL_LLM,
    LLM_FILE,
    ModelNotInstalledError,
    load_installed,
)
from charmemory.core.injection import approximate_tokens
from charmemory.ports import TokenCounter

REMEMBERED = 20_000  # texts whose count is kept


class VocabularyCounter:
    """Counts with a GGUF model's own tokenizer."""

    def __init__(self, model_path: str):
        import llama_cpp  # a heavy, optional import: only where a counter is built

        with _native_stderr_silenced():  # llama.cpp warns about a context it does not use
            self._vocabulary: Any = llama_cpp.Llama(
                model_path=model_path, vocab_only=True, verbose=False
            )
        self._counts: OrderedDict[str, int] = OrderedDict()
        self._lock = threading.Lock()

    def __call__(self, text: str) -> int:
        with self._lock:
            if text in self._counts:
                self._counts.move_to_end(text)
                return self._counts[text]
            tokens = self._vocabulary.tokenize(
                text.encode("utf-8", "surrogatepass"), add_bos=False, special=False
            )
            self._counts[text] = len(tokens)
            if len(self._counts) > REMEMBERED:
                self._counts.popitem(last=False)
            return len(tokens)


@contextlib.contextmanager
def _native_stderr_silenced() -> Iterator[None]:
    """Nothing written to standard error, by C code or through Python's `sys.stderr`."""
    saved = os.dup(2)
    try:
        with Path(os.devnull).open("wb") as null:
            os.dup2(null.fileno(), 2)
        with contextlib.redirect_stderr(io.StringIO()):
            yield
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)


def token_counter() -> TokenCounter:
    """The embedded model's tokenizer when installed, else the estimate."""
    if not runtime_installed():
        return approximate_tokens
    try:
        installed = load_installed(DEFAULT_LOCAL_LLM)
    except ModelNotInstalledError:
        return approximate_tokens
    return VocabularyCounter(str(installed.path(LLM_FILE)))
