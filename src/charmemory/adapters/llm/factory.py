"""A ChatModel for resolved settings: the preset's dialect picks the adapter.

The embedded local model (`local`) runs in-process (`adapters/llm/embedded.py`);
it loads llama-cpp-python and the model only when it is built, and says how to
install whichever is missing.
"""

from __future__ import annotations

from charmemory.adapters.llm import embedded
from charmemory.adapters.llm.anthropic import AnthropicModel
from charmemory.adapters.llm.http_model import HttpChatModel
from charmemory.adapters.llm.nanogpt import NanoGPTModel
from charmemory.adapters.llm.openai_compat import OpenAICompatibleModel
from charmemory.adapters.llm.provider_errors import Redact
from charmemory.adapters.llm.retry import RetryPolicy
from charmemory.core.model_settings import ModelSettings
from charmemory.errors import ConfigError
from charmemory.ports import ChatModel


def build_chat_model(
    settings: ModelSettings,
    api_key: str | None,
    *,
    retry: RetryPolicy | None = None,
    redact: Redact | None = None,
) -> ChatModel:
    """The model for `settings`; `redact` scrubs its error messages (default: `api_key`)."""
    preset = settings.preset
    if preset.dialect == "embedded":
        return embedded.build(settings)
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
    return adapter(settings, api_key, retry=retry, redact=redact)
