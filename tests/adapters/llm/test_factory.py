import pytest

from charmemory.adapters.llm.anthropic import AnthropicModel
from charmemory.adapters.llm.factory import build_chat_model
from charmemory.adapters.llm.nanogpt import NanoGPTModel
from charmemory.adapters.llm.openai_compat import OpenAICompatibleModel
from charmemory.core.model_settings import ModelSettings
from charmemory.errors import ConfigError


@pytest.mark.parametrize(
    ("provider", "kind"),
    [
        ("anthropic", AnthropicModel),
        ("nanogpt", NanoGPTModel),
        ("openrouter", OpenAICompatibleModel),
        ("local-server", OpenAICompatibleModel),
    ],
)
def test_the_preset_picks_the_adapter(provider: str, kind: type) -> None:
    model = build_chat_model(ModelSettings(provider, "m", "http://127.0.0.1:9/v1"), "sk-123")
    assert type(model) is kind
    assert (model.provider, model.model) == (provider, "m")


def test_a_provider_that_needs_a_key_says_how_to_store_one() -> None:
    with pytest.raises(ConfigError, match="charmemory secrets set groq"):
        build_chat_model(ModelSettings("groq", "m", "https://api.groq.com/openai/v1"), None)
