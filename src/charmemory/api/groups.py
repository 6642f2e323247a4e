"""Group chats: groups and their members, reply order, chats, and each round of replies.

A group's `ETag` is its file's version; a change sent with it as `If-Match` is
refused (412) when the group changed since. Rounds (send, trigger) and redos
(swipe, continue) answer JSON, or server-sent events with `"stream": true`: a
`speaker` event before each member's reply, its `delta`s, then `turn` with the
whole round. `stop` ends the round under way; what came is kept. A group
chat's messages are read as any member's chat
(`/api/characters/{member}/chats/{chat}/messages`).
"""

from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter, Request, Response
from pydantic import BaseModel, Field

from charmemory.api.deps import Services, require_current, with_etag
from charmemory.api.encoding import jsonable
from charmemory.api.generation_stream import generate, running, turn_json
from charmemory.core.chat.group_order import Strategy
from charmemory.errors import CharMemoryError, NotFoundError
from charmemory.services.group_chat import GroupReply, GroupRound, GroupView

router = APIRouter(prefix="/api/groups", tags=["group chats"])


class NewGroup(BaseModel):
    name: str
    members: list[str] = Field(min_length=1)
    order: Strategy = "natural"
    allow_self_responses: bool = False


class MembersBody(BaseModel):
    members: list[str] = Field(min_length=1)


class MuteBody(BaseModel):
    members: list[str] = Field(min_length=1)
    muted: bool = True


class OrderBody(BaseModel):
    order: Strategy
    allow_self_responses: bool | None = None


class SendBody(BaseModel):
    text: str
    stream: bool = False


class TriggerBody(BaseModel):
    member: str | None = None  # who speaks (muted or not); none: the reply order drafts
    stream: bool = False


class RedoBody(BaseModel):
    kind: Literal["swipe", "continue"] = "swipe"
    stream: bool = False


@router.get("", summary="Every group of the workspace")
def list_groups(services: Services) -> Any:
    return jsonable(services.group_chat.groups())


@router.post("", status_code=201, summary="A new group, its first chat opening with greetings")
def create(body: NewGroup, response: Response, services: Services) -> Any:
    view = services.group_chat.create(
        body.name,
        body.members,
        strategy=body.order,
        allow_self_responses=body.allow_self_responses,
    )
    return _shown(services, view, response)


@router.get("/{group}", summary="A group: members (muted, joined late), reply order, chats")
def show(group: str, response: Response, services: Services) -> Any:
    return _shown(services, services.group_chat.view(group), response)


@router.post("/{group}/members", summary="Add members; chats under way are heard from now on")
def add(
    group: str, body: MembersBody, request: Request, response: Response, services: Services
) -> Any:
    _check(request, services, group)
    return _shown(services, services.group_chat.add(group, body.members), response)


@router.delete("/{group}/members/{member}", summary="Take a member out (its memories stay)")
def remove(
    group: str, member: str, request: Request, response: Response, services: Services
) -> Any:
    _check(request, services, group)
    return _shown(services, services.group_chat.remove(group, [member]), response)


@router.post("/{group}/mute", summary="Mute members (they still hear and remember), or unmute")
def mute(
    group: str, body: MuteBody, request: Request, response: Response, services: Services
) -> Any:
    _check(request, services, group)
    view = services.group_chat.mute(group, body.members, muted=body.muted)
    return _shown(services, view, response)


@router.put("/{group}/order", summary="Who replies and in what order")
def order(
    group: str, body: OrderBody, request: Request, response: Response, services: Services
) -> Any:
    _check(request, services, group)
    view = services.group_chat.set_strategy(
        group, body.order, allow_self_responses=body.allow_self_responses
    )
    return _shown(services, view, response)


@router.post("/{group}/chats", status_code=201, summary="A new chat, made the group's current one")
def new_chat(group: str, request: Request, services: Services) -> dict[str, Any]:
    _check(request, services, group)
    return {"chat": services.group_chat.new_chat(group)}


@router.post("/{group}/chats/{chat}/send", summary="Your message, then the drafted replies")
async def send(group: str, chat: str, body: SendBody, request: Request, services: Services) -> Any:
    view = _current_chat(request, services, group, chat)
    return await generate(
        request,
        _key(view, chat),
        body.stream,
        lambda sink, stop: services.group_chat.send(
            view.id, body.text, chat, on_delta=sink, on_speaker=sink.speaker, stop=stop
        ),
        round_json,
    )


@router.post("/{group}/chats/{chat}/trigger", summary="Replies without a message of yours")
async def trigger(
    group: str, chat: str, body: TriggerBody, request: Request, services: Services
) -> Any:
    view = _current_chat(request, services, group, chat)
    return await generate(
        request,
        _key(view, chat),
        body.stream,
        lambda sink, stop: services.group_chat.trigger(
            view.id, chat, member=body.member, on_delta=sink, on_speaker=sink.speaker, stop=stop
        ),
        round_json,
    )


@router.post("/{group}/chats/{chat}/generate", summary="Swipe or continue the last reply")
async def redo(group: str, chat: str, body: RedoBody, request: Request, services: Services) -> Any:
    view = _current_chat(request, services, group, chat)
    return await generate(
        request,
        _key(view, chat),
        body.stream,
        lambda sink, stop: services.group_chat.redo(
            view.id, body.kind, chat, on_delta=sink, stop=stop
        ),
        reply_json,
    )


@router.post("/{group}/chats/{chat}/stop", summary="Stop the round under way; what came is kept")
def stop(group: str, chat: str, request: Request, services: Services) -> dict[str, Any]:
    view = services.group_chat.view(group)
    switch = running(request).get(_key(view, chat))
    if switch is None:
        raise NotFoundError(f"no reply is being generated in {view.name!r} chat {chat!r}")
    switch.set()
    return {"stopped": True}


def reply_json(reply: GroupReply) -> dict[str, Any]:
    return {"speaker": reply.speaker, **turn_json(reply.turn)}


def round_json(done: GroupRound) -> dict[str, Any]:
    return {
        "group": done.group,
        "chat": done.chat,
        "replies": [reply_json(reply) for reply in done.replies],
    }


def _key(view: GroupView, chat: str) -> tuple[str, str]:
    return (f"group:{view.id}", chat)


def _shown(services: Services, view: GroupView, response: Response) -> Any:
    with_etag(response, services.library.group(view.id).version.digest)
    return jsonable(view)


def _check(request: Request, services: Services, group: str) -> None:
    require_current(request, services.library.group(group).version.digest)


def _current_chat(request: Request, services: Services, group: str, chat: str) -> GroupView:
    """The group, with its chat checked against the request's `If-Match` (the chat's ETag)."""
    view = services.group_chat.view(group)
    if chat not in view.chats:
        raise NotFoundError(f"group {view.name!r} has no chat {chat!r}; chats: {view.chats}")
    member = next((m for m in view.members if m.present), None)
    if member is None:
        raise CharMemoryError(f"none of the members of {view.name!r} is here")
    require_current(request, services.chat.open_chat(member.name, chat).version.digest)
    return view
