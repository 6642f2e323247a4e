"""The prompts people replace: extraction's, consolidation's per strategy, and the scene
presets of memory books (`variant` names the strategy or the preset).

A prompt's `ETag` is its text's; a change sent with it as `If-Match` is
refused (412) when the prompt changed since.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request, Response
from pydantic import BaseModel

from charmemory.api.deps import Services, require_current, with_etag
from charmemory.core.books.presets import SUMMARY, preset_names
from charmemory.core.consolidation_prompt import CONSERVATIVE, STRATEGIES
from charmemory.services.prompts import PromptKind

router = APIRouter(prefix="/api/prompts", tags=["prompts"])
VariantQuery = Annotated[
    str | None,
    Query(description="The consolidation strategy or the scene preset (default: the first)"),
]
VARIANTS: dict[PromptKind, tuple[str | None, ...]] = {
    "extraction": (None,),
    "consolidation": STRATEGIES,
    "scene": preset_names(),
}


class PromptBody(BaseModel):
    text: str


@router.get("", summary="Every prompt, and whether the built-in one is in force")
def list_prompts(services: Services) -> list[dict[str, Any]]:
    return [
        {
            "kind": kind,
            "variant": variant,
            "default": services.prompts.is_default(kind, variant or CONSERVATIVE),
        }
        for kind, variants in VARIANTS.items()
        for variant in variants
    ]


@router.get("/{kind}", summary="The prompt in force (ETag: its text), or the built-in one")
def show(
    kind: PromptKind,
    services: Services,
    response: Response,
    variant: VariantQuery = None,
    builtin: bool = False,
) -> dict[str, Any]:
    chosen = _variant(kind, variant)
    prompts = services.prompts
    text = prompts.default(kind, chosen) if builtin else prompts.text(kind, chosen)
    with_etag(response, prompts.text(kind, chosen))
    return {
        "kind": kind,
        "variant": _shown_variant(kind, chosen),
        "text": text,
        "default": prompts.is_default(kind, chosen),
    }


@router.put("/{kind}", summary="Use this prompt (warnings name placeholders it lacks)")
def replace(
    kind: PromptKind,
    body: PromptBody,
    request: Request,
    response: Response,
    services: Services,
    variant: VariantQuery = None,
) -> dict[str, Any]:
    chosen = _unchanged_variant(kind, variant, request, services)
    warnings = services.prompts.replace(kind, body.text, chosen)
    return {**show(kind, services, response, variant), "warnings": warnings}


@router.delete("/{kind}", summary="Go back to the built-in prompt")
def reset(
    kind: PromptKind,
    request: Request,
    response: Response,
    services: Services,
    variant: VariantQuery = None,
) -> dict[str, Any]:
    chosen = _unchanged_variant(kind, variant, request, services)
    services.prompts.reset(kind, chosen)
    return show(kind, services, response, variant)


def _variant(kind: PromptKind, variant: str | None) -> str:
    if variant is not None:
        return variant
    return SUMMARY if kind == "scene" else CONSERVATIVE


def _unchanged_variant(
    kind: PromptKind, variant: str | None, request: Request, services: Services
) -> str:
    """The variant a change is for, once the request's `If-Match` holds for its text."""
    chosen = _variant(kind, variant)
    require_current(request, services.prompts.text(kind, chosen))
    return chosen


def _shown_variant(kind: PromptKind, variant: str) -> str | None:
    return None if kind == "extraction" else variant
