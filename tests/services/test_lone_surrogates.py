"""A lone surrogate (valid JSON, not UTF-8) in a chat reaches nothing past the edge.

One in a model's answer is cleaned where it enters, by the HTTP chat model
(tests/adapters/llm/test_openai_compat.py).
"""

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from tests.support.extraction_fixtures import (
    CHARACTER,
    alternating,
    make_app,
    make_workspace,
    message,
    write_chat,
)
from tests.support.word_hash_embedder import WordHashEmbedder


class StrictEmbedder(WordHashEmbedder):
    """Refuses text that is not UTF-8, as the local model's tokenizer does."""

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        for text in texts:
            text.encode("utf-8")
        return await super().embed(texts)


def workspace_with_a_surrogate(tmp_path: Path):
    ws = make_workspace(tmp_path / "ws", messages_per_call=10)
    messages = alternating(3)
    messages.append(message(3, is_user=False, text="Mira hums \ud800 a tune.", name="Mi\udc00ra"))
    path = write_chat(ws, [])
    # JSON escapes, as SillyTavern's JSON.stringify writes a lone surrogate.
    lines = [path.read_text(encoding="utf-8"), *(json.dumps(m) for m in messages)]
    path.write_text("\n".join(lines), encoding="utf-8")
    # More memories than the prompt can show, so the chunk's text is embedded to rank them.
    bullets = "".join(f"- Mira remembers harbour number {n}.\n" for n in range(400))
    (ws.files_dir / f"{CHARACTER}-memories.md").write_text(
        '<memory chat="c" date="2026-01-01 10:00">\n- Mira hums when nervous.\n'
        f"{bullets}</memory>\n",
        encoding="utf-8",
    )
    return ws


async def test_a_dry_run_over_a_chat_with_a_lone_surrogate_embeds_clean_text(
    tmp_path: Path,
) -> None:
    ws = workspace_with_a_surrogate(tmp_path)
    embedder = StrictEmbedder()
    app = make_app(ws, embedder=embedder)

    report = await app.extraction.extract(CHARACTER, dry_run=True)

    prompt = "\n".join(m.content for m in report.prompts[0])
    assert "Mira hums \ufffd a tune." in prompt
    assert any("Mira hums \ufffd a tune." in text for call in embedder.calls for text in call)
