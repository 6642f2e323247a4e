"""Chats: list, create, import, read messages page by page, and every chat operation.

Generating operations (send, generate) answer JSON, or server-sent events with
`"stream": true`; `stop` ends the one under way and keeps what came. Changes
take the chat's `ETag` as `If-Match` and are refused (412) if it changed.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query, Request, Response
from pydantic import BaseModel, Field

from charmemory.api.characters import import_file
from charmemory.api.deps import Services, require_current, with_etag
from charmemory.api.generation_stream import generate, running
from charmemory.errors import NotFoundError
from charmemory.formats.chat import Message

router = APIRouter(prefix="/api/characters/{character}/chats", tags=["chats"])


class SendBody(BaseModel):
    text: str
    stream: bool = False


class GenerateBody(BaseModel):
    kind: Literal["normal", "swipe", "regenerate", "continue"] = "normal"
    stream: bool = False


class EditBody(BaseModel):
    text: str


class SwipeBody(BaseModel):
    number: int = Field(ge=1, description="1-based swipe number of the last reply")


class HideBody(BaseModel):
    first: int
    last: int
    hidden: bool = True


class DeleteLastBody(BaseModel):
    count: int = Field(ge=1)


class BranchBody(BaseModel):
    at: int | None = None


def message_json(index: int, message: Message) -> dict[str, Any]:
    shown: dict[str, Any] = {
        "index": index,
        "name": message.name,
        "is_user": message.is_user,
        "hidden": message.is_hidden,
        "send_date": message.send_date,
        "mes": message.mes,
    }
    if message.swipes is not None:
        shown["swipes"] = list(message.swipes)
        shown["swipe_id"] = message.swipe_id
    return shown


@router.get("", summary="The character's chats, oldest first")
def list_chats(character: str, services: Services) -> list[str]:
    library = services.library
    return [ref.id for ref in library.chats(library.character(character))]


@router.post("", status_code=201, summary="A new chat, opening with the card's greeting")
def create_chat(character: str, services: Services) -> dict[str, Any]:
    return {"chat": services.chat.new_chat(character).ref.id}


@router.post("/import", status_code=201, summary="Import a chat (SillyTavern JSONL, as the body)")
async def import_chat(
    character: str,
    request: Request,
    services: Services,
    filename: Annotated[
        str, Query(description="The chat's file name, e.g. Mira - 2026-01-01.jsonl")
    ],
) -> dict[str, Any]:
    name = services.library.character(character).name
    return await import_file(request, services, filename, (".jsonl",), name)


@router.get("/{chat}/messages", summary="A page of the chat's messages (ETag: the chat's version)")
def messages(
    character: str,
    chat: str,
    services: Services,
    response: Response,
    offset: Annotated[int, Query(ge=0)] = 0,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
) -> dict[str, Any]:
    loaded = services.chat.open_chat(character, chat)
    with_etag(response, loaded.version.digest)
    shown = loaded.chat.messages[offset : offset + limit]
    return {
        "chat": loaded.ref.id,
        "total": len(loaded.chat.messages),
        "offset": offset,
        "messages": [message_json(offset + i, m) for i, m in enumerate(shown)],
        "status": services.chat.status_line(character, loaded.ref.id),
    }


@router.post("/{chat}/send", summary="Send a message and get the reply (SSE with stream)")
async def send(
    character: str, chat: str, body: SendBody, request: Request, services: Services
) -> Any:
    ref = _current(request, services, character, chat)
    return await generate(
        request,
        (ref.character.name, ref.id),
        body.stream,
        lambda on_delta, stop: services.chat.send(
            character, body.text, ref.id, on_delta=on_delta, stop=stop
        ),
    )


@router.post("/{chat}/generate", summary="A reply, a swipe, a regeneration or a continuation")
async def generate_reply(
    character: str, chat: str, body: GenerateBody, request: Request, services: Services
) -> Any:
    ref = _current(request, services, character, chat)
    return await generate(
        request,
        (ref.character.name, ref.id),
        body.stream,
        lambda on_delta, stop: services.chat.generate(
            character, ref.id, kind=body.kind, on_delta=on_delta, stop=stop
        ),
    )


@router.post("/{chat}/stop", summary="Stop the reply being generated; what came is kept")
def stop(character: str, chat: str, request: Request, services: Services) -> dict[str, Any]:
    ref = services.chat.chat_ref(character, chat)
    switch = running(request).get((ref.character.name, ref.id))
    if switch is None:
        raise NotFoundError(f"no reply is being generated in {ref.id!r}")
    switch.set()
    return {"stopped": True}


@router.post("/{chat}/swipe", summary="Show another swipe of the last reply")
async def swipe(
    character: str, chat: str, body: SwipeBody, request: Request, services: Services
) -> dict[str, Any]:
    ref = _current(request, services, character, chat)
    return {"text": await services.chat.choose_swipe(character, body.number, ref.id)}


@router.put("/{chat}/messages/{index}", summary="Edit a message")
async def edit(
    character: str, chat: str, index: int, body: EditBody, request: Request, services: Services
) -> dict[str, Any]:
    ref = _current(request, services, character, chat)
    return {"text": await services.chat.edit(character, index, body.text, ref.id)}


@router.delete("/{chat}/messages/{index}", summary="Delete a message")
async def delete_message(
    character: str, chat: str, index: int, request: Request, services: Services
) -> dict[str, Any]:
    ref = _current(request, services, character, chat)
    return {"deleted": await services.chat.delete_message(character, index, ref.id)}


@router.post("/{chat}/delete-last", summary="Delete the last messages")
async def delete_last(
    character: str, chat: str, body: DeleteLastBody, request: Request, services: Services
) -> dict[str, Any]:
    ref = _current(request, services, character, chat)
    return {"deleted": await services.chat.delete_last(character, body.count, ref.id)}


@router.post("/{chat}/hide", summary="Hide messages from the prompt (or show them again)")
async def hide(
    character: str, chat: str, body: HideBody, request: Request, services: Services
) -> dict[str, Any]:
    ref = _current(request, services, character, chat)
    changed = await services.chat.set_hidden(character, body.first, body.last, body.hidden, ref.id)
    return {"changed": changed}


@router.post("/{chat}/branch", status_code=201, summary="A new chat holding messages 0..at")
async def branch(
    character: str, chat: str, body: BranchBody, request: Request, services: Services
) -> dict[str, Any]:
    ref = _current(request, services, character, chat)
    return {"chat": await services.chat.branch(character, body.at, ref.id)}


def _current(request: Request, services: Services, character: str, chat: str) -> Any:
    """The chat, checked against the request's `If-Match`."""
    loaded = services.chat.open_chat(character, chat)
    require_current(request, loaded.version.digest)
    return loaded.ref
