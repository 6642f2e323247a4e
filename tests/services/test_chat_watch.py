"""The watcher runs the automatic trigger for chats that grow, and only for those."""

import asyncio
from datetime import UTC, datetime, timedelta
from pathlib import Path

from charmemory.composition import App
from charmemory.ports import Completion
from charmemory.services.chat_watch import ChatWatcher, Triggered
from tests.support.extraction_fixtures import (
    CHARACTER,
    CHAT_ID,
    alternating,
    make_workspace,
    memory_block,
    write_chat,
)
from tests.support.fake_chat_model import ChatRequest, FakeChatModel

OTHER_CHAT = "Mira - 2026-03-01@09h00m00s000ms"


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2026, 3, 1, 12, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now


def answer(request: ChatRequest) -> Completion:
    if "line 40." in request.messages[-1].content:
        return Completion("I'm sorry, but I can't help with that.")
    return Completion(memory_block("Mira named her ship the Kestrel."))


async def watch_until(
    watcher: ChatWatcher, change: object, count: int, *, timeout: float = 10.0
) -> list[Triggered]:
    """Run the watcher, make `change` (a callable) once it has looked, collect `count`."""
    stop = asyncio.Event()
    seen: list[Triggered] = []

    def collect(triggered: Triggered) -> None:
        seen.append(triggered)
        if len(seen) >= count:
            stop.set()

    task = asyncio.create_task(
        watcher.run(None, interval=0.02, stop=stop, on_trigger=collect, seen=watcher.stamps(None))
    )
    change()  # type: ignore[operator]
    if count == 0:  # watch a few rounds, expecting nothing
        await asyncio.sleep(0.2)
        stop.set()
    await asyncio.wait_for(task, timeout)
    return seen


async def test_a_growing_chat_is_extracted_when_the_trigger_allows(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path / "ws", interval=3, cooldown_minutes=10, messages_per_call=50)
    write_chat(ws, alternating(4))  # 2 character messages: under the interval
    write_chat(ws, alternating(2, start=100), chat_id=OTHER_CHAT)
    model = FakeChatModel(answer)
    clock = Clock()
    app = App(ws, env={}, chat_model=lambda: model, clock=clock, index_for_extraction=False)
    watcher = app.chat_watcher

    # Starting to watch extracts nothing, whatever is pending.
    assert await watch_until(watcher, lambda: None, 0) == []

    [grown] = await watch_until(watcher, lambda: write_chat(ws, alternating(6)), 1)
    assert (grown.character, grown.chat, grown.extracted) == (CHARACTER, CHAT_ID, True)
    assert grown.report is not None and grown.report.saved == 1
    assert len(model.requests) == 1

    # Within the cooldown the trigger skips; the watcher keeps going.
    clock.now += timedelta(minutes=1)
    [held] = await watch_until(watcher, lambda: write_chat(ws, alternating(12)), 1)
    assert not held.extracted and held.report is not None and held.report.decision is not None
    assert held.report.decision.reason == "cooldown"
    assert len(model.requests) == 1


async def test_a_failing_chat_is_reported_and_watching_goes_on(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path / "ws", interval=3, cooldown_minutes=0)
    write_chat(ws, alternating(2, start=40), chat_id=OTHER_CHAT)
    model = FakeChatModel(answer)
    app = App(ws, env={}, chat_model=lambda: model, index_for_extraction=False)

    def both_grow() -> None:
        write_chat(ws, alternating(8, start=40), chat_id=OTHER_CHAT)  # refused
        write_chat(ws, alternating(8))  # a new chat appears

    found = await watch_until(app.chat_watcher, both_grow, 2)
    by_chat = {t.chat: t for t in found}
    assert "declined" in by_chat[OTHER_CHAT].error
    assert by_chat[CHAT_ID].extracted
    assert [e.kind for e in app.activity.entries() if e.kind == "extract.watch"] == [
        "extract.watch"
    ]
