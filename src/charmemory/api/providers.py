"""LLM providers: the presets and their keys' status, a provider's models, a connection test."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query
from pydantic import BaseModel

from charmemory.api.deps import Services
from charmemory.api.encoding import jsonable

router = APIRouter(prefix="/api/providers", tags=["providers"])


class TestBody(BaseModel):
    provider: str | None = None
    model: str | None = None


@router.get("", summary="Every provider preset, its base URL and whether its key is there")
def presets(services: Services) -> Any:
    return jsonable(services.providers.presets())


@router.get("/models", summary="The models a provider offers")
async def models(
    services: Services,
    provider: str | None = None,
    filters: Annotated[list[str] | None, Query()] = None,
) -> Any:
    overrides = {"provider": provider} if provider else None
    listing = await services.providers.list_models(overrides, filters=filters or ())
    return {
        "provider": listing.provider,
        "models": [{"id": m.id, "owner": m.owner} for m in listing.models],
    }


@router.post("/test", summary="A tiny request with a known answer")
async def test(body: TestBody, services: Services) -> Any:
    overrides = {k: v for k, v in (("provider", body.provider), ("model", body.model)) if v}
    return jsonable(await services.providers.test_model(overrides or None))
