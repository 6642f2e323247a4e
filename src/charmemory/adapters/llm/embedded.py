"""The embedded local model (`local`): a small GGUF chat model run in-process by llama.cpp.

No server, no API key, no network: the weights come from `charmemory local-models
install` and run through llama-cpp-python on the CPU, off the event loop. Answers
are held by a grammar to the format the caller asks for (embedded_grammar.py), so
even a small model always answers in a shape the parser reads.

Options come from the provider's extra parameters, e.g.
`charmemory settings set model.extra_params '{"threads": 4}' --provider local`:
`threads` (CPU threads, default: every usable core), `context_size` (tokens,
default 8192), `repeat_penalty` (above 1 discourages the loops small models fall
into, default 1.1) and `extraction_prompt` (`compact`, the default: a request for
new memories that carries the extraction prompt's sections is asked again with a
short prompt suited to small models; `as-sent`: the prompt exactly as the caller
wrote it).
"""

from __future__ import annotations

import asyncio
import importlib
import importlib.util
import logging
import os
import threading
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from charmemory.adapters.llm.embedded_grammar import answer_grammar
from charmemory.adapters.llm.embedded_prompt import (
    compact_prompt,
    extraction_request,
    without_example_copies,
)
from charmemory.adapters.llm.system_prompt import with_system_prompt
from charmemory.adapters.model_install import (
    DEFAULT_LOCAL_LLM,
    LLM_FILE,
    LOCAL_LLMS,
    InstalledModel,
    ModelNotInstalledError,
    ModelSpec,
    load_installed,
)
from charmemory.core.model_settings import LOCAL_CONTEXT_SIZE, ModelSettings
from charmemory.core.providers import EMBEDDED
from charmemory.errors import CharMemoryError, ConfigError, NotFoundError
from charmemory.ports import (
    FREE_TEXT,
    AnswerFormat,
    ChatMessage,
    Completion,
    ModelInfo,
    NewMemories,
    StreamDelta,
    Usage,
)

RUNTIME_MODULE = "llama_cpp"
RUNTIME_HINT = (
    "run `make setup` in a charmemory checkout, or `pip install 'charmemory[local]'` "
    "(it compiles llama.cpp, about 5 minutes)"
)
DEFAULT_CONTEXT_SIZE = LOCAL_CONTEXT_SIZE
DEFAULT_REPEAT_PENALTY = 1.1
OPTION_NAMES = ("threads", "context_size", "repeat_penalty", "extraction_prompt")
PromptMode = Literal["compact", "as-sent"]
PROMPT_MODES: tuple[PromptMode, ...] = ("compact", "as-sent")

log = logging.getLogger("charmemory.llm")


class PromptTooLongError(CharMemoryError):
    """A request does not fit the local model's context window."""


def usable_cpus() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not every platform can tell which CPUs this process may use
        return max(1, os.cpu_count() or 1)


@dataclass(frozen=True)
class EmbeddedOptions:
    threads: int
    context_size: int = DEFAULT_CONTEXT_SIZE
    repeat_penalty: float = DEFAULT_REPEAT_PENALTY
    extraction_prompt: PromptMode = "compact"

    @classmethod
    def from_params(cls, params: Mapping[str, Any]) -> EmbeddedOptions:
        """Options from the `local` provider's extra parameters (unknown keys are an error)."""
        unknown = sorted(set(params) - set(OPTION_NAMES))
        if unknown:
            raise ConfigError(
                f"the local model has no option {unknown[0]!r}; known: {', '.join(OPTION_NAMES)}"
            )
        mode = params.get("extraction_prompt", "compact")
        if mode not in PROMPT_MODES:
            raise ConfigError(f"extraction_prompt must be one of {', '.join(PROMPT_MODES)}")
        return cls(
            threads=_whole(params, "threads", usable_cpus(), 1, 256),
            context_size=_whole(params, "context_size", DEFAULT_CONTEXT_SIZE, 512, 131_072),
            repeat_penalty=_penalty(params.get("repeat_penalty", DEFAULT_REPEAT_PENALTY)),
            extraction_prompt=mode,
        )


def _whole(params: Mapping[str, Any], name: str, default: int, low: int, high: int) -> int:
    value = params.get(name, default)
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ConfigError(f"{name} for the local model must be a whole number {low}..{high}")
    return value


def _penalty(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 1 <= value <= 2:
        raise ConfigError("repeat_penalty for the local model must be a number 1..2")
    return float(value)


def local_llm_spec(name: str) -> ModelSpec:
    try:
        return LOCAL_LLMS[name]
    except KeyError:
        known = ", ".join(LOCAL_LLMS)
        raise NotFoundError(f"no local chat model {name!r}; known: {known}") from None


def runtime_installed() -> bool:
    return importlib.util.find_spec(RUNTIME_MODULE) is not None


def local_llm_ready(models_dir: Path | None = None) -> bool:
    """Whether the default local chat model and its runtime are installed."""
    if not runtime_installed():
        return False
    try:
        load_installed(DEFAULT_LOCAL_LLM, models_dir)
    except ModelNotInstalledError:
        return False
    return True


def build(settings: ModelSettings, *, models_dir: Path | None = None) -> EmbeddedModel:
    """The `local` provider's ChatModel; a clear error names whatever is missing."""
    options = EmbeddedOptions.from_params(settings.extra_params)
    spec = local_llm_spec(settings.model or DEFAULT_LOCAL_LLM.name)
    if not runtime_installed():
        raise ModelNotInstalledError(
            f"the embedded local model needs llama-cpp-python, which is not installed: "
            f"{RUNTIME_HINT}"
        )
    try:
        installed = load_installed(spec, models_dir)
    except ModelNotInstalledError as error:
        raise ModelNotInstalledError(
            f"the local chat model {spec.name} is missing or incomplete: "
            f"run `charmemory local-models install {spec.name}`"
        ) from error
    return EmbeddedModel(installed, options, system_prompt=settings.system_prompt)


class EmbeddedModel:
    """One local GGUF model; loaded on first use, one generation at a time."""

    provider = EMBEDDED

    def __init__(
        self, installed: InstalledModel, options: EmbeddedOptions, *, system_prompt: str = ""
    ) -> None:
        self.model = installed.spec.name
        self.options = options
        self._path = installed.path(LLM_FILE)
        self._system_prompt = system_prompt
        self._lock = threading.Lock()
        self._llama: Any = None

    async def complete(
        self,
        messages: Sequence[ChatMessage],
        *,
        max_tokens: int,
        temperature: float,
        stop: Sequence[str] | None = None,
        answer_format: AnswerFormat = FREE_TEXT,
    ) -> Completion:
        prompt = self._prompt(messages, answer_format)

        def generate() -> Any:
            with self._lock, self._fitting_the_context():
                return self._generate(prompt, max_tokens, temperature, stop, answer_format)

        answer = await asyncio.to_thread(generate)
        choice = answer["choices"][0]
        usage = answer.get("usage") or {}
        text = choice["message"]["content"] or ""
        if isinstance(answer_format, NewMemories):
            answered, text = text, without_example_copies(text, prompt)
            if text != answered:
                log.info("memories copied from the worked example were dropped from: %s", answered)
        return Completion(
            text=text,
            finish_reason=choice.get("finish_reason"),
            usage=Usage(usage.get("prompt_tokens"), usage.get("completion_tokens")),
            model=self.model,
        )

    async def stream(
        self,
        messages: Sequence[ChatMessage],
        *,
        max_tokens: int,
        temperature: float,
        stop: Sequence[str] | None = None,
        answer_format: AnswerFormat = FREE_TEXT,
    ) -> AsyncIterator[StreamDelta]:
        """Deltas as the model writes them; closing the iterator stops the generation."""
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[StreamDelta | BaseException | None] = asyncio.Queue()
        stopped = threading.Event()
        prompt = self._prompt(messages, answer_format)

        def produce() -> None:
            try:
                with self._lock, self._fitting_the_context():
                    chunks = self._generate(
                        prompt, max_tokens, temperature, stop, answer_format, stream=True
                    )
                    for delta in _deltas(chunks):
                        if stopped.is_set():
                            break
                        loop.call_soon_threadsafe(queue.put_nowait, delta)
            except BaseException as error:  # handed to the consumer, raised there
                loop.call_soon_threadsafe(queue.put_nowait, error)
            else:
                loop.call_soon_threadsafe(queue.put_nowait, None)

        worker = asyncio.ensure_future(asyncio.to_thread(produce))
        try:
            while (item := await queue.get()) is not None:
                if isinstance(item, BaseException):
                    raise item
                yield item
        finally:
            stopped.set()
            await worker

    async def list_models(self) -> list[ModelInfo]:
        """The local chat models charmemory knows, each marked installed or not."""
        models = []
        for spec in LOCAL_LLMS.values():
            try:
                load_installed(spec)
                installed = True
            except ModelNotInstalledError:
                installed = False
            extra = {"summary": spec.summary, "installed": installed}
            models.append(ModelInfo(spec.name, owner="local", extra=extra))
        return models

    # -- inside the worker thread, holding the lock ------------------------------------

    def _generate(
        self,
        prompt: Sequence[ChatMessage],
        max_tokens: int,
        temperature: float,
        stop: Sequence[str] | None,
        answer_format: AnswerFormat,
        *,
        stream: bool = False,
    ) -> Any:
        llama_cpp = importlib.import_module(RUNTIME_MODULE)
        llama = self._loaded(llama_cpp)
        grammar = answer_grammar(answer_format)
        return llama.create_chat_completion(
            [{"role": m.role, "content": m.content} for m in prompt],
            max_tokens=max_tokens,
            temperature=temperature,
            repeat_penalty=self.options.repeat_penalty,
            stop=list(stop or []),
            grammar=None
            if grammar is None
            else llama_cpp.LlamaGrammar.from_string(grammar, verbose=False),
            stream=stream,
        )

    @contextmanager
    def _fitting_the_context(self) -> Iterator[None]:
        """llama.cpp's overflow error, explained with what to change."""
        try:
            yield
        except ValueError as error:
            if "context window" not in str(error):
                raise
            raise PromptTooLongError(
                f"the request does not fit the local model's context of "
                f"{self.options.context_size} tokens: send fewer messages per call "
                "(`charmemory settings set extraction.messages_per_call N`) or raise context_size "
                "in the local provider's extra_params"
            ) from None

    def _prompt(
        self, messages: Sequence[ChatMessage], answer_format: AnswerFormat
    ) -> list[ChatMessage]:
        """The prompt to send: a request for new memories in the short prompt's words,
        where it carries the sections that prompt needs and the options allow it."""
        prompt = list(messages)
        if isinstance(answer_format, NewMemories) and self.options.extraction_prompt == "compact":
            request = extraction_request(messages, answer_format)
            if request is not None:
                prompt = compact_prompt(request)
        return with_system_prompt(prompt, self._system_prompt)

    def _loaded(self, llama_cpp: Any) -> Any:
        if self._llama is None:
            self._llama = llama_cpp.Llama(
                model_path=str(self._path),
                n_ctx=self.options.context_size,
                n_threads=self.options.threads,
                n_threads_batch=self.options.threads,
                verbose=False,
            )
        return self._llama


def _deltas(chunks: Iterator[dict[str, Any]]) -> Iterator[StreamDelta]:
    for chunk in chunks:
        choice = chunk["choices"][0]
        text = choice.get("delta", {}).get("content") or ""
        if text or choice.get("finish_reason"):
            yield StreamDelta(text=text, finish_reason=choice.get("finish_reason"))
