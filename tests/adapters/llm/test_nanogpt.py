import pytest

from charmemory.errors import ConfigError
from tests.adapters.llm.conftest import ModelFactory
from tests.support.scripted_llm import ScriptedLLMServer

CATALOG = [
    {"id": "deepseek/deepseek-r1", "owned_by": "deepseek", "name": "DeepSeek R1"},
    {"id": "openai/gpt-5.2", "owned_by": "openai", "name": "GPT 5.2"},
    {"id": "thedrummer/cydonia-24b", "owned_by": "thedrummer", "name": "Cydonia 24B"},
    {
        "id": "sao10k/l3.3-euryale-70b",
        "owned_by": "sao10k",
        "capabilities": {"reasoning": True},
        "description": "A role-play fine-tune",
    },
]


@pytest.fixture
def nanogpt(llm_server: ScriptedLLMServer, make_model: ModelFactory):
    return make_model("nanogpt", base_url=llm_server.root_url + "/api/v1")


async def test_detailed_list_is_asked_for(llm_server: ScriptedLLMServer, nanogpt) -> None:
    llm_server.reply_models(CATALOG)
    models = await nanogpt.list_models()
    assert [m.id for m in models] == [
        "deepseek/deepseek-r1",
        "openai/gpt-5.2",
        "sao10k/l3.3-euryale-70b",
        "thedrummer/cydonia-24b",
    ]
    request = llm_server.requests[0]
    assert (request.path, request.query) == ("/api/v1/models", {"detailed": "true"})


async def test_subscription_list_comes_from_its_own_endpoint(
    llm_server: ScriptedLLMServer, nanogpt
) -> None:
    llm_server.reply_models(CATALOG[1:], path="/api/subscription/v1/models")
    models = await nanogpt.list_models(filters=frozenset({"subscription", "roleplay", "reasoning"}))
    assert [m.id for m in models] == ["sao10k/l3.3-euryale-70b"]
    assert llm_server.requests[0].query == {"detailed": "true"}


async def test_filters_without_subscription_use_the_main_list(
    llm_server: ScriptedLLMServer, nanogpt
) -> None:
    llm_server.reply_models(CATALOG, path="/api/v1/models")
    models = await nanogpt.list_models(filters=frozenset({"open-source"}))
    assert [m.id for m in models] == [
        "deepseek/deepseek-r1",
        "sao10k/l3.3-euryale-70b",
        "thedrummer/cydonia-24b",
    ]


async def test_subscription_filter_needs_nanogpts_address(make_model: ModelFactory) -> None:
    with pytest.raises(ConfigError, match="ending in /api/v1"):
        await make_model("nanogpt", base_url="http://proxy.example/v2").list_models(
            filters=frozenset({"subscription"})
        )
