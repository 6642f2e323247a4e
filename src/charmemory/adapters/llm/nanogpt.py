"""NanoGPT: the OpenAI dialect, plus a model list that can be filtered.

The detailed list (`GET /api/v1/models?detailed=true`) carries names,
descriptions and capabilities. The `subscription` filter asks NanoGPT's
subscription-only list (`GET /api/subscription/v1/models?detailed=true`)
instead, so membership is NanoGPT's own word; the other filters are judged
from the entries (see `core.model_catalog`). Filters combine as an intersection.
"""

from __future__ import annotations

from charmemory.adapters.llm.openai_compat import OpenAICompatibleModel, model_infos
from charmemory.core.model_catalog import matching
from charmemory.errors import ConfigError
from charmemory.ports import ModelInfo

API_ROOT = "/api/v1"


def subscription_models_url(base_url: str) -> str:
    if not base_url.endswith(API_ROOT):
        raise ConfigError(
            f"the subscription filter needs NanoGPT's own API address ending in {API_ROOT}, "
            f"not {base_url}"
        )
    return base_url.removesuffix(API_ROOT) + "/api/subscription/v1/models"


class NanoGPTModel(OpenAICompatibleModel):
    async def list_models(self, *, filters: frozenset[str] = frozenset()) -> list[ModelInfo]:
        if "subscription" not in filters:
            return matching(await super().list_models(), filters)
        url = subscription_models_url(self.settings.base_url)
        data = await self.transport.request_json("GET", url, params={"detailed": "true"})
        return matching(model_infos(data), filters)

    async def fetch_models(self) -> list[ModelInfo]:
        data = await self.transport.request_json("GET", "/models", params={"detailed": "true"})
        return model_infos(data)
