"""The FastAPI application over one workspace's services.

`create_api(open_app, token=...)` opens the workspace (`open_app()` returns a
`composition.App`), reads the server settings (CORS origins, the body size
limit) and mounts every router. Shutting down lets running generations end or
be cancelled by the server, waits a while for background extractions (they are
journalled, so one cut short is finished or discarded next time) and closes
the workspace.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

from fastapi import FastAPI
from starlette.middleware.cors import CORSMiddleware

from charmemory.api import (
    activity,
    books,
    characters,
    chats,
    consolidation,
    diagnostics,
    drafts,
    extraction,
    groups,
    history,
    lorebooks,
    memories,
    openai_endpoint,
    persona,
    profiles,
    prompts,
    providers,
    scenes,
    settings,
)
from charmemory.api.errors import install_error_handlers
from charmemory.api.middleware import CollapseSlashes, LimitBody, RequestLog, RequireToken
from charmemory.composition import App

log = logging.getLogger("charmemory.server")
EXTRACTION_GRACE_S = 30.0

DESCRIPTION = """\
Long-term memory for role-play characters.

**Memory endpoint** (OpenAI-compatible): point a frontend's custom OpenAI-compatible
connection at `/characters/{character}/v1`, or at `/v1` to have the character recognised
from each request. Conversations are recorded as the character's chats and its memories
are added to every request before it goes to the configured provider.

**REST**: characters, chats, group chats, the persona, memories, extraction, consolidation,
history, memory books (scene memories, entries, drafts, profiles), prompts, settings,
providers, lorebooks, diagnostics and the activity log. Mutable resources carry an `ETag`;
send it back as `If-Match` to change them only if nobody else did (412 otherwise).
"""


def create_api(open_app: Callable[[], App], *, token: str | None = None) -> FastAPI:
    app = open_app()

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        try:
            yield
        finally:
            await _finish_background_work(app)
            app.close()
            log.info("stopped: background work done, workspace closed")

    api = FastAPI(
        title="charmemory",
        description=DESCRIPTION,
        version="1",
        lifespan=lifespan,
        docs_url="/docs",
        redoc_url=None,
    )
    api.state.app = app
    install_error_handlers(api)
    for module in (
        openai_endpoint,
        characters,
        chats,
        groups,
        persona,
        memories,
        extraction,
        consolidation,
        history,
        books,
        scenes,
        drafts,
        profiles,
        prompts,
        settings,
        providers,
        lorebooks,
        diagnostics,
        activity,
    ):
        api.include_router(module.router)
    # Added innermost first: the log line sees everything, CORS answers preflights
    # before the token is asked for, and the size limit guards the reading of bodies.
    api.add_middleware(LimitBody, limit=int(app.settings.value("server.max_body_bytes")))
    if token:
        api.add_middleware(RequireToken, token=token)
    from charmemory.web import install_web  # the pages import the API's parts

    install_web(api, token=token)
    api.add_middleware(CollapseSlashes)
    origins = list(app.settings.value("server.cors_origins") or [])
    if origins:
        api.add_middleware(
            CORSMiddleware,
            allow_origins=origins,
            allow_methods=["*"],
            allow_headers=["*"],
            expose_headers=["ETag", "X-Charmemory-Character", "X-Charmemory-Chat"],
        )
    api.add_middleware(RequestLog)
    return api


async def _finish_background_work(app: App) -> None:
    """Wait for background extractions a while; cancel the rest (they are journalled)."""
    if "chat" not in app.__dict__:
        return
    try:
        failures = await asyncio.wait_for(
            app.chat.extractions_finished(), timeout=EXTRACTION_GRACE_S
        )
    except TimeoutError:
        log.warning(
            "background extractions still running after %.0f s: cancelled", EXTRACTION_GRACE_S
        )
        app.chat.cancel_extractions()
        return
    for failure in failures:
        log.warning("%s", failure)
