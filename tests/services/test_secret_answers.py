"""A model answer that repeats an API key is never saved, printed or logged."""

from pathlib import Path

import pytest

from charmemory.adapters.secrets import SECRETS_FILE_NAME, ApiKeys, SecretsFile
from charmemory.adapters.workspace import Workspace
from charmemory.composition import App
from charmemory.core.consolidation_answer import UnusableConsolidationError
from charmemory.ports import Completion
from tests.support.extraction_fixtures import (
    CHARACTER,
    alternating,
    make_workspace,
    memory_block,
    write_chat,
)
from tests.support.fake_chat_model import FakeChatModel

ENV_KEY = "envkey0a1b2c3d4e5f6g7h8"  # no known prefix: only knowing it removes it
STORED_KEY = "storedkey9z8y7x6w5v4u3t"  # another provider's key, not the one in use


def app_answering(ws: Workspace, answer: str) -> App:
    keys = ApiKeys(SecretsFile(ws.state_dir / SECRETS_FILE_NAME, ws.locks), {})
    keys.store("mistral", STORED_KEY)
    model = FakeChatModel(lambda request: Completion(answer))
    env = {"CHARMEMORY_API_KEY": ENV_KEY}
    return App(ws, env=env, chat_model=lambda: model, index_for_extraction=False)


def everything_kept(ws: Workspace) -> str:
    """Every file and database row the workspace holds, as text."""
    rows = [
        " ".join(map(str, tuple(row)))
        for table in ("activity", "memory_versions", "consolidation_previews")
        for row in ws.db.execute(f"SELECT * FROM {table}")
    ]
    files = [p.read_bytes().decode("utf-8", "replace") for p in ws.files_dir.iterdir()]
    return "\n".join([*rows, *files])


async def test_extracted_memories_that_repeat_a_key_are_dropped_with_a_warning(
    tmp_path: Path,
) -> None:
    ws = make_workspace(tmp_path / "ws", messages_per_call=10, verbose_log=True)
    write_chat(ws, alternating(10))
    answer = memory_block(
        "Mira keeps a brass compass.",
        f"Alex's API key is {ENV_KEY}.",
        f"The other key is {STORED_KEY}, and again {STORED_KEY}.",
        "Alex pasted sk-live-0123456789abcdefgh into the chat.",
    )
    app = app_answering(ws, answer)

    report = await app.extraction.extract(CHARACTER)

    [chunk] = report.chunks
    assert chunk.saved == ["Mira keeps a brass compass."]
    assert sum(w.startswith("secret: ") for w in chunk.warnings) == 3
    shown = "\n".join([*chunk.saved, *chunk.warnings])
    kept = everything_kept(ws)
    assert "Mira keeps a brass compass." in kept
    for key in (ENV_KEY, STORED_KEY, "sk-live-0123456789abcdefgh"):
        assert key not in shown and key not in kept


async def test_consolidated_memories_that_repeat_a_key_are_dropped_with_a_warning(
    tmp_path: Path,
) -> None:
    ws = make_workspace(tmp_path / "ws")
    (ws.files_dir / f"{CHARACTER}-memories.md").write_text(
        '<memory chat="c1" date="2026-02-15 10:42">\n- Mira owns a compass.\n</memory>\n\n'
        '<memory chat="c2" date="2026-02-16 10:42">\n- Mira fears deep water.\n</memory>\n',
        encoding="utf-8",
    )
    answer = (
        '<memory sources="1,2">\n- Mira owns a compass and fears deep water.\n'
        f"- Alex's key is {STORED_KEY}.\n</memory>"
    )
    app = app_answering(ws, answer)

    preview = await app.consolidation.preview(CHARACTER)

    assert preview.diff.added == ("Mira owns a compass and fears deep water.",)
    assert any(w.startswith("secret: ") for w in preview.warnings)
    assert STORED_KEY not in preview.result and STORED_KEY not in " ".join(preview.warnings)
    await app.consolidation.apply(preview.id)
    assert STORED_KEY not in everything_kept(ws)


async def test_a_rejected_answer_quoting_a_key_does_not_quote_it_in_the_error(
    tmp_path: Path,
) -> None:
    ws = make_workspace(tmp_path / "ws")
    (ws.files_dir / f"{CHARACTER}-memories.md").write_text(
        '<memory chat="c1" date="2026-02-15 10:42">\n- Mira owns a compass.\n'
        "- Mira fears deep water.\n</memory>\n",
        encoding="utf-8",
    )
    app = app_answering(ws, f'<memory sources="1">\nthe key is {ENV_KEY}\n</memory>')
    with pytest.raises(UnusableConsolidationError) as caught:
        await app.consolidation.preview(CHARACTER)
    assert "[redacted]" in str(caught.value) and ENV_KEY not in str(caught.value)
