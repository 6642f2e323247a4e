"""Searching memories as a person does: the file's collection synced first, then asked."""

from pathlib import Path
from typing import Any

import pytest

from charmemory.adapters.workspace import Workspace
from charmemory.errors import ConfigError, NotFoundError
from tests.support.extraction_fixtures import (
    CHARACTER,
    alternating,
    make_app,
    make_workspace,
    write_chat,
)
from tests.support.scripted_embeddings import Scripted

MEMORIES = (
    '<memory chat="c" date="2026-02-15 10:42">\n'
    "- Mira owns a brass compass.\n- Alex fears deep water.\n</memory>\n"
)


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    ws = make_workspace(tmp_path / "ws")
    (ws.files_dir / f"{CHARACTER}-memories.md").write_text(MEMORIES, encoding="utf-8")
    return ws


def bag_of_letters(path: str, body: dict[str, Any]) -> tuple[int, Any]:
    """An OpenAI-compatible answer: each text as counts of the letters a-z."""
    vectors = [
        [text.lower().count(c) + 0.01 for c in "abcdefghijklmnopqrstuvwxyz"]
        for text in body["input"]
    ]
    data = [{"index": i, "embedding": vector} for i, vector in enumerate(vectors)]
    return 200, {"data": data, "model": body["model"]}


async def test_an_embedding_server_can_replace_the_local_model(
    ws: Workspace, embedding_server: Scripted
) -> None:
    embedding_server.reply = bag_of_letters
    app = make_app(ws)
    app.settings.set("retrieval.embedder", "openai")
    app.settings.set("retrieval.embedder_url", embedding_server.url + "/v1")
    app.settings.set("retrieval.embedder_model", "letters-1")
    app.settings.set("retrieval.min_cosine", "0")

    searched = await app.memory_search.search(CHARACTER, ["brass compass"], 1)

    assert searched.synced.model == "openai/letters-1" and searched.synced.embedded == 2
    assert [r.text for r in searched.answers[0]] == ["Mira owns a brass compass."]
    paths = {path for path, _, body in embedding_server.requests}
    assert paths == {"/v1/embeddings"}
    assert {body["model"] for _, _, body in embedding_server.requests} == {"letters-1"}


def test_an_embedding_server_needs_its_model_named(ws: Workspace) -> None:
    app = make_app(ws)
    app.settings.set("retrieval.embedder", "ollama")
    with pytest.raises(ConfigError, match=r"retrieval\.embedder_model NAME"):
        app.retrieval  # noqa: B018  (building it is what fails)


async def test_search_and_inject_answer_from_the_file_as_it_is_now(
    ws: Workspace, embedding_server: Scripted
) -> None:
    embedding_server.reply = bag_of_letters
    app = make_app(ws)
    for name, value in (
        ("retrieval.embedder", "openai"),
        ("retrieval.embedder_url", embedding_server.url),
        ("retrieval.embedder_model", "letters-1"),
        ("retrieval.min_cosine", "0"),
    ):
        app.settings.set(name, value)
    with pytest.raises(NotFoundError, match="has no chats yet"):
        await app.memory_search.inject(CHARACTER)
    write_chat(ws, alternating(4))
    injected = await app.memory_search.inject(CHARACTER)
    assert injected.located.chat_chosen and injected.retrieval.injection.text
    (ws.files_dir / f"{CHARACTER}-memories.md").write_text(
        MEMORIES.replace("brass compass", "silver sextant"), encoding="utf-8"
    )
    searched = await app.memory_search.search(CHARACTER, ["sextant"], 5)
    assert "Mira owns a silver sextant." in [r.text for r in searched.answers[0]]
    assert "Mira owns a brass compass." not in [r.text for r in searched.answers[0]]
