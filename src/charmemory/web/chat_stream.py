"""Replies as they are written: send, swipe, continue, regenerate, and stop.

Each answers with server-sent events (`delta` as the reply streams, then `turn`,
or `error`), the same stream the REST API gives, and the generation is stopped by
`stop` or by the browser leaving. A chat command typed in the input box answers
with a notice instead (`/continue` streams like a reply).
"""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import Form, Request
from fastapi.responses import Response

from charmemory.api.deps import Services
from charmemory.api.generation_stream import generate, running
from charmemory.core.chat.commands import is_command, parse_command
from charmemory.errors import NotFoundError
from charmemory.web.pages import new_router, notice

router = new_router()


@router.post("/chat/{character}/{chat}/send")
async def send(
    character: str,
    chat: str,
    text: Annotated[str, Form()],
    request: Request,
    services: Services,
) -> Response:
    ref = services.chat.chat_ref(character, chat)
    key = (ref.character.name, ref.id)
    if is_command(text):
        command = parse_command(text)
        if command.name == "continue":
            return await generate(
                request,
                key,
                True,
                lambda on_delta, stop: services.chat.generate(
                    character, ref.id, kind="continue", on_delta=on_delta, stop=stop
                ),
            )
        said = await services.chat_commands.run(ref.character.name, ref.id, command)
        return notice(said)
    return await generate(
        request,
        key,
        True,
        lambda on_delta, stop: services.chat.send(
            character, text, ref.id, on_delta=on_delta, stop=stop
        ),
    )


@router.post("/chat/{character}/{chat}/generate")
async def generate_reply(
    character: str,
    chat: str,
    kind: Annotated[Literal["swipe", "continue", "regenerate"], Form()],
    request: Request,
    services: Services,
) -> Response:
    ref = services.chat.chat_ref(character, chat)
    return await generate(
        request,
        (ref.character.name, ref.id),
        True,
        lambda on_delta, stop: services.chat.generate(
            character, ref.id, kind=kind, on_delta=on_delta, stop=stop
        ),
    )


@router.post("/chat/{character}/{chat}/stop")
def stop(character: str, chat: str, request: Request, services: Services) -> Response:
    ref = services.chat.chat_ref(character, chat)
    switch = running(request).get((ref.character.name, ref.id))
    if switch is None:
        raise NotFoundError("no reply is being written in this chat")
    switch.set()
    return Response(status_code=204)
