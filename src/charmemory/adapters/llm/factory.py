"""A ChatModel for resolved settings: the preset's dialect picks the adapter.

The embedded local model (`local`) is a module of its own,
`charmemory.adapters.llm.embedded`, with a `build(settings) -> ChatModel`
function; until it is installed, choosing `local` is a clear error.
"""

from __future__ import annotations

import importlib
import importlib.util

from charmemory.adapters.llm.anthropic import AnthropicModel
from charmemory.adapters.llm.http_model import HttpChatModel
from charmemory.adapters.llm.nanogpt import NanoGPTModel
from charmemory.adapters.llm.openai_compat import OpenAICompatibleModel
from charmemory.adapters.llm.retry import RetryPolicy
from charmemory.core.model_settings import ModelSettings
from charmemory.errors import ConfigError
from charmemory.ports import ChatModel

EMBEDDED_MODULE = "charmemory.adapters.llm.embedded"


def build_chat_model(
    settings: ModelSettings, api_key: str | None, *, retry: RetryPolicy | None = None
) -> ChatModel:
    preset = settings.preset
    if preset.dialect == "embedded":
        return _embedded_model(settings)
    if preset.key_required and not api_key:
        raise ConfigError(
            f"no API key for {preset.name}: store one with `charmemory secrets set {preset.name}` "
            "(or set CHARMEMORY_API_KEY)"
        )
    adapter: type[HttpChatModel]
    if preset.dialect == "anthropic":
        adapter = AnthropicModel
    elif preset.model_filters:
        adapter = NanoGPTModel
    else:
        adapter = OpenAICompatibleModel
    return adapter(settings, api_key, retry=retry)


def _embedded_model(settings: ModelSettings) -> ChatModel:
    if importlib.util.find_spec(EMBEDDED_MODULE) is None:
        raise ConfigError(
            "the embedded local model is not installed yet; choose another provider "
            "(see `charmemory providers`)"
        )
    model: ChatModel = importlib.import_module(EMBEDDED_MODULE).build(settings)
    return model
