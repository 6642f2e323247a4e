"""The OpenAI-compatible memory endpoint: `/characters/{character}/v1` and the shared `/v1`.

A frontend's custom OpenAI-compatible connection points at either base URL;
`/models` lists the upstream's models and `/chat/completions` chats, streamed
only when the body says `"stream": true`. The response says whose memory was
used in `X-Charmemory-Character` (`none` when the request passed through).
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import quote

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response

from charmemory.api.deps import Services
from charmemory.api.streaming import StreamedResponse
from charmemory.errors import FormatError
from charmemory.services.memory_endpoint import Exchange

router = APIRouter(tags=["memory endpoint (OpenAI-compatible)"])

BODY_DOC = {
    "requestBody": {
        "required": True,
        "content": {
            "application/json": {
                "schema": {
                    "type": "object",
                    "required": ["messages"],
                    "properties": {
                        "messages": {"type": "array", "items": {"type": "object"}},
                        "model": {"type": "string"},
                        "stream": {"type": "boolean"},
                    },
                    "additionalProperties": True,
                }
            }
        },
    }
}


@router.get("/v1/models", summary="The upstream provider's models")
async def shared_models(services: Services) -> Any:
    return await services.memory_endpoint.models()


@router.get("/characters/{character}/v1/models", summary="The upstream provider's models")
async def character_models(character: str, services: Services) -> Any:
    return await services.memory_endpoint.models(character)


@router.post(
    "/v1/chat/completions",
    summary="Chat, the character recognised from the request",
    openapi_extra=BODY_DOC,
)
async def shared_completions(request: Request, services: Services) -> Response:
    return await _completion(request, services, None)


@router.post(
    "/characters/{character}/v1/chat/completions",
    summary="Chat with the character's memory",
    openapi_extra=BODY_DOC,
)
async def character_completions(character: str, request: Request, services: Services) -> Response:
    return await _completion(request, services, character)


async def _completion(request: Request, services: Services, character: str | None) -> Response:
    endpoint = services.memory_endpoint
    exchange = await endpoint.open(await _json_body(request), character)
    headers = _headers(exchange)
    if exchange.request.stream:
        return StreamedResponse(await endpoint.stream(exchange), headers=headers)
    return JSONResponse(await endpoint.complete(exchange), headers=headers)


async def _json_body(request: Request) -> Any:
    raw = await request.body()
    try:
        return json.loads(raw)
    except (ValueError, RecursionError) as error:
        raise FormatError(f"the request body is not valid JSON ({error})") from None


def _headers(exchange: Exchange) -> dict[str, str]:
    character = exchange.character
    headers = {"X-Charmemory-Character": quote(character.name) if character else "none"}
    if exchange.chat is not None:
        headers["X-Charmemory-Chat"] = quote(exchange.chat)
    return headers
