"""Scene memories from the chat screen: markers, a preview to accept, edit or retry,
and catch-up with its progress.

A preview is a `ScenePlan` the model wrote and nothing saved yet; the page keeps
it here under a random id until it is accepted (the newest few are kept, so a
forgotten preview costs nothing). Accepting saves it as shown, with the person's
edits, then takes the markers away.
"""

from __future__ import annotations

import asyncio
import secrets
from collections import OrderedDict
from collections.abc import AsyncIterator
from typing import Annotated, Literal

from fastapi import Form, Request
from fastapi.responses import Response

from charmemory.api.deps import Services
from charmemory.api.streaming import StreamedResponse, sse
from charmemory.composition import App
from charmemory.core.books.scenes import SceneRange
from charmemory.core.narrator.scenes import ConfirmationNeededError
from charmemory.errors import CharMemoryError, NotFoundError
from charmemory.ports import ChatRef
from charmemory.services.scenes import CatchUp, SavedScene, ScenePlan
from charmemory.web.chat import chat_url
from charmemory.web.pages import new_router, notice
from charmemory.web.scene_bar import SceneBar, scene_bar_view
from charmemory.web.templating import fragment, render

router = new_router()
KEPT_PLANS = 16


class PendingPlans:
    """Previews not yet accepted, newest last; the oldest go when there are too many."""

    def __init__(self) -> None:
        self._plans: OrderedDict[str, ScenePlan] = OrderedDict()

    def keep(self, plan: ScenePlan) -> str:
        key = secrets.token_urlsafe(12)
        self._plans[key] = plan
        while len(self._plans) > KEPT_PLANS:
            self._plans.popitem(last=False)
        return key

    def take(self, key: str) -> ScenePlan:
        """The preview, no longer kept (so it is saved once however often it is sent)."""
        plan = self._plans.pop(key, None)
        if plan is None:
            raise NotFoundError("that preview is gone (saved already, or too old): write it again")
        return plan

    def put_back(self, key: str, plan: ScenePlan) -> None:
        self._plans[key] = plan


def pending_plans(request: Request) -> PendingPlans:
    state = request.app.state
    if not hasattr(state, "scene_plans"):
        state.scene_plans = PendingPlans()
    return state.scene_plans


def current_bar(app: App, character: str, chat: str) -> SceneBar:
    _, loaded = app.books.chat(character, chat)
    url = chat_url(loaded.ref.character.name, loaded.ref.id)
    return scene_bar_view(app, loaded.ref.character.name, url, loaded.chat.header)


def scene_bar(app: App, character: str, chat: str) -> Response:
    return fragment("_scene_bar.html", bar=current_bar(app, character, chat))


# -- markers --------------------------------------------------------------------------------


@router.post("/chat/{character}/{chat}/scene/mark")
async def mark(
    character: str,
    chat: str,
    index: Annotated[int, Form()],
    edge: Annotated[Literal["start", "end"], Form()],
    services: Services,
) -> Response:
    """Mark a message as the scene's start or end (again: unmark it); the scene bar."""
    ref = services.chat.chat_ref(character, chat)
    async with services.chat.chat_lock(ref):
        services.scene_markers.mark(ref.character.name, index, edge, ref.id)
    return scene_bar(services, ref.character.name, ref.id)


@router.post("/chat/{character}/{chat}/scene/clear")
async def clear(character: str, chat: str, services: Services) -> Response:
    ref = services.chat.chat_ref(character, chat)
    async with services.chat.chat_lock(ref):
        services.scene_markers.clear(ref.character.name, ref.id)
    return scene_bar(services, ref.character.name, ref.id)


@router.post("/chat/{character}/{chat}/scene/book")
async def choose_book(
    character: str, chat: str, services: Services, book: Annotated[str, Form()] = ""
) -> Response:
    """The book the chat's scene memories go to: bound to the chat, or in manual mode
    chosen as its memory book."""
    ref = services.chat.chat_ref(character, chat)
    manual = services.books.settings(ref.character.name).lorebook_mode == "manual"
    async with services.chat.chat_lock(ref):
        services.books.bind(ref.character.name, book or None, ref.id, manual=manual)
    return scene_bar(services, ref.character.name, ref.id)


# -- writing the memory ---------------------------------------------------------------------


@router.post("/chat/{character}/{chat}/scene/preview")
async def preview(
    character: str,
    chat: str,
    request: Request,
    services: Services,
    participant: Annotated[list[str] | None, Form()] = None,
    confirmed: Annotated[bool, Form()] = False,
) -> Response:
    """Have the model write the marked scene's memory; nothing is saved yet. A narrator
    scene with unstamped replies first asks who was present (``confirmed`` with no
    ``participant``: nobody)."""
    name = services.library.character(character).name
    markers = await asyncio.to_thread(services.scene_markers.markers, name, chat)
    if markers.range is None:
        return notice("mark the scene's first and last message first", level="error")
    present = (participant or []) if confirmed else None
    url = chat_url(name, chat)
    try:
        plan = await services.scenes.prepare(name, markers.range, chat, participants=present)
    except ConfirmationNeededError as needed:
        cast = services.narrator.state(name, chat).config.current
        return fragment("_scene_participants.html", needed=needed, cast=cast, url=url)
    key = pending_plans(request).keep(plan)
    return fragment("_scene_preview.html", plan=plan, url=url, key=key, participants=present)


@router.post("/chat/{character}/{chat}/scene/{key}/save")
async def save(
    character: str,
    chat: str,
    key: str,
    request: Request,
    services: Services,
    title: Annotated[str, Form()] = "",
    keywords: Annotated[str, Form()] = "",
    content: Annotated[str, Form()] = "",
) -> Response:
    """Save the preview as shown (with the person's edits); the markers go. A preview
    that could not be saved stays, to be corrected or written again."""
    name = services.library.character(character).name
    plans = pending_plans(request)
    shown = plans.take(key)
    try:
        plan = _as_edited(shown, title, keywords, content)
        async with services.chat.chat_lock(plan.chat):
            saved = services.scenes.save(plan)
            services.scene_markers.clear(name, chat)
    except CharMemoryError:
        plans.put_back(key, shown)
        raise
    return fragment("_scene_saved.html", saved=saved, bar=current_bar(services, name, chat))


def _as_edited(plan: ScenePlan, title: str, keywords: str, content: str) -> ScenePlan:
    same = (title, content) == (plan.answer.title, plan.answer.content)
    if same and keywords == ", ".join(plan.answer.keywords):
        return plan
    if not title.strip() or not content.strip():
        raise CharMemoryError("a scene memory needs a title and content; nothing was saved")
    return plan.edited(title, content, keywords.split(","))


@router.post("/chat/{character}/{chat}/scene/catch-up")
def catch_up(
    character: str,
    chat: str,
    services: Services,
    first: Annotated[int | None, Form()] = None,
    last: Annotated[int | None, Form()] = None,
    participant: Annotated[list[str] | None, Form()] = None,
) -> Response:
    """Scene memories for everything since the last one, each shown as it is saved; the
    chat is held meanwhile (a reply waits until the catch-up is done). A narrator scene
    with unstamped replies stops it and asks who was present; the answer comes back with
    that scene's ``first`` and ``last`` message (no ``participant``: nobody), and the
    catch-up writes that scene with them and goes on."""
    ref = services.chat.chat_ref(character, chat)
    confirmed = (
        (SceneRange(first, last), participant or [])
        if first is not None and last is not None
        else None
    )
    return StreamedResponse(_catch_up(services, ref, confirmed))


async def _catch_up(
    app: App, ref: ChatRef, confirmed: tuple[SceneRange, list[str]] | None
) -> AsyncIterator[bytes]:
    saved: list[SavedScene] = []
    changed = asyncio.Event()
    url = chat_url(ref.character.name, ref.id)

    def one_more(scene: SavedScene) -> None:
        saved.append(scene)
        changed.set()

    async def run() -> CatchUp:
        name = ref.character.name
        async with app.chat.chat_lock(ref):
            if confirmed is not None:
                scene, present = confirmed
                plan = await app.scenes.prepare(name, scene, ref.id, participants=present)
                one_more(app.scenes.save(plan))
            return await app.scenes.catch_up(name, ref.id, on_saved=one_more)

    def shown(report: CatchUp | None, error: str) -> bytes:
        needed = report.confirmation if report is not None else None
        cast = app.narrator.state(ref.character.name, ref.id).config.current if needed else []
        html = render(
            "_catch_up.html",
            saved=saved,
            report=report,
            error="" if needed else error,
            needed=needed,
            cast=cast,
            url=url,
        )
        return sse(html, "html")

    task = asyncio.create_task(run())
    task.add_done_callback(lambda _: changed.set())
    while not task.done():
        yield shown(None, "")
        await changed.wait()
        changed.clear()
    try:
        report = task.result()
        error = report.error or ""
    except CharMemoryError as failure:
        report, error = None, str(failure)
    yield shown(report, error)
