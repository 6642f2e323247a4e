"""Long-running commands freeze what the first reply loads, as they freeze what startup loaded."""

import asyncio
import gc
from collections.abc import Iterator
from pathlib import Path

import pytest

from charmemory.composition import App
from charmemory.ports import Completion
from tests.services.test_chat import card_with
from tests.support.extraction_fixtures import CHARACTER, make_workspace
from tests.support.fake_chat_model import FakeChatModel


@pytest.fixture(autouse=True)
def unfrozen() -> Iterator[None]:
    """Frozen objects are never collected: give them back to the collector afterwards."""
    gc.unfreeze()
    yield
    gc.unfreeze()


def chat_app(root: Path) -> App:
    ws = make_workspace(root)
    card_with(ws)
    return App(ws, env={}, chat_model=lambda: FakeChatModel(lambda _: Completion("Aye.")))


async def replies(app: App, count: int) -> list[int]:
    """The number of frozen objects after each of `count` replies (and what follows them)."""
    frozen = []
    for turn in range(count):
        await app.chat.send(CHARACTER, f"Question {turn}?", new=turn == 0)
        await app.chat.extractions_finished()
        frozen.append(gc.get_freeze_count())
    return frozen


def test_the_first_reply_freezes_once_more_and_later_ones_do_not(tmp_path: Path) -> None:
    app = chat_app(tmp_path / "ws")
    app.freeze_after_first_reply()
    first, second, third = asyncio.run(replies(app, 3))
    assert first > 0
    # Frozen objects that die leave the count; none join it after the first reply.
    assert third <= second <= first


def test_an_app_not_asked_to_freezes_nothing(tmp_path: Path) -> None:
    app = chat_app(tmp_path / "ws")
    assert asyncio.run(replies(app, 2)) == [0, 0]
