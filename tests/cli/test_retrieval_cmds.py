import json
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import pytest

from charmemory.adapters import embed_onnx
from charmemory.adapters.embed_onnx import OnnxEmbedder
from charmemory.adapters.model_install import MINILM_L6_V2_INT8, ModelInstaller
from charmemory.adapters.settings_store import SettingsStore
from charmemory.adapters.workspace import Workspace
from charmemory.cli.application import run
from tests.support.extraction_fixtures import CHAT_ID, make_workspace, message, write_chat

pytestmark = pytest.mark.local_model

MEMORIES = """<memory chat="Mira - 2026-02-15@10h00m00s123ms" date="2026-02-15 10:42">
- [Mira, Alex — the drowned brother]
- Mira is afraid of deep water.
- Her brother Tomas drowned in the mill pond when she was nine.
</memory>

<memory chat="Mira - 2026-03-01@09h00m00s" date="2026-03-01 09:30">
- Mira learned to read from the temple scribe.
- Kael owes the blacksmith forty silver coins.
- The dragon burned the merchant ships in the harbour.
</memory>
"""
MAIN_FILE = "user/files/Mira-memories.md"


class CountingEmbedder:
    """The real model, loaded once for every command of the module, counting its calls."""

    def __init__(self, inner: OnnxEmbedder) -> None:
        self.inner = inner
        self.model_name = inner.model_name
        self.dimensions = inner.dimensions
        self.calls: list[int] = []

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.calls.append(len(texts))
        return await self.inner.embed(texts)


@pytest.fixture(scope="module")
def minilm() -> OnnxEmbedder:
    return OnnxEmbedder(ModelInstaller().install(MINILM_L6_V2_INT8), intra_op_threads=1)


@pytest.fixture
def embedder(minilm: OnnxEmbedder, monkeypatch: pytest.MonkeyPatch) -> CountingEmbedder:
    counting = CountingEmbedder(minilm)
    # Every `OnnxEmbedder()` a command makes is this one.
    monkeypatch.setattr(embed_onnx, "OnnxEmbedder", lambda: counting)
    return counting


@pytest.fixture
def ws_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, embedder: CountingEmbedder
) -> Iterator[Path]:
    ws = make_workspace(tmp_path / "ws")
    (ws.root / MAIN_FILE).write_text(MEMORIES, encoding="utf-8")
    write_chat(
        ws,
        [
            message(0, is_user=True, text="Where were we? The harbour, I think."),
            message(1, is_user=False, text="Did Kael ever pay the blacksmith what he owed?"),
            message(2, is_user=True, text="Let us go swimming in the lake!", is_system=True),
        ],
    )
    ws.close()
    monkeypatch.setenv("CHARMEMORY_HOME", str(ws.root))
    yield ws.root


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = run(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def set_stored(root: Path, key: str, value: object, scope: str = "") -> None:
    ws = Workspace.open(root)
    SettingsStore(ws.db).set(key, value, scope=scope)
    ws.close()


def test_index_embeds_only_what_changed(ws_root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(capsys, "index", "Mira")
    assert code == 0
    assert out.startswith("char:Mira: 5 memories indexed with all-minilm-l6-v2-int8 (5 embedded")
    assert "(0 embedded, 0 removed, 5 kept)" in cli(capsys, "index", "Mira")[1]

    edited = MEMORIES.replace("forty silver coins", "fifty silver coins")
    (ws_root / MAIN_FILE).write_text(edited, encoding="utf-8")

    assert "(1 embedded, 1 removed, 4 kept)" in cli(capsys, "index", "Mira")[1]


def test_search_answers_in_text_json_and_one_json_line_per_query(
    ws_root: Path, embedder: CountingEmbedder, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = cli(capsys, "search", "Mira", "Who owes money to the smith?", "-k", "2")
    assert code == 0
    first = out.splitlines()[0]
    assert "Kael owes the blacksmith forty silver coins." in first
    assert first.endswith("[Mira - 2026-03-01@09h00m00s 2026-03-01 09:30]")
    assert "5 memories indexed" in err  # a collection never indexed is built first

    code, out, err = cli(capsys, "search", "Mira", "Why does she avoid swimming?", "--json")
    results = json.loads(out)
    assert results[0]["text"] == "Mira is afraid of deep water."
    assert results[0]["block_chat"] == "Mira - 2026-02-15@10h00m00s123ms"
    assert results[0]["block_date"] == "2026-02-15 10:42"
    assert results[0]["score"] >= results[-1]["score"] and err == ""
    # Provenance down to the bullet, and both signals with their ranks.
    assert results[0]["file"] == MAIN_FILE
    assert (results[0]["block_index"], results[0]["bullet_index"]) == (0, 1)  # 0: the tag
    assert results[0]["vector_rank"] >= 1 and "bm25_rank" in results[0]

    queries = ws_root / "queries.txt"
    queries.write_text("dragon attack\n\nthe brother who drowned\nreading lessons\n", "utf-8")
    before = len(embedder.calls)
    code, out, _ = cli(capsys, "search", "Mira", "--queries", str(queries), "--json", "-k", "1")
    lines = [json.loads(line) for line in out.splitlines()]
    assert [line["query"] for line in lines] == [
        "dragon attack",
        "the brother who drowned",
        "reading lessons",
    ]
    assert [line["results"][0]["text"].split()[0] for line in lines] == ["The", "Her", "Mira"]
    assert embedder.calls[before:] == [3]  # one process, one embedding call


def test_revectorize_embeds_everything_again(
    ws_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cli(capsys, "index", "Mira")
    code, out, _ = cli(capsys, "revectorize", "Mira")
    assert code == 0 and "(5 embedded, 0 removed, 5 kept)" in out
    code, out, _ = cli(capsys, "revectorize", "Mira", "--purge")
    assert code == 0 and "(5 embedded, 0 removed, 0 kept)" in out


def test_inject_uses_the_visible_chat_and_diagnose_shows_it(
    ws_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = cli(capsys, "diagnose", "Mira")
    assert code == 0
    assert f"memory file: {MAIN_FILE} (" in out and "2 blocks, 6 bullets)" in out
    assert "index: not built yet" in out and "last retrieval: none yet" in out

    code, out, _ = cli(capsys, "inject", "Mira")
    assert code == 0
    assert f"chat: {CHAT_ID}" in out
    # The hidden message about swimming is not part of the query.
    assert "query: Did Kael ever pay the blacksmith what he owed? / Where were we?" in out
    assert "position in_prompt, depth 4, role system" in out
    injected = out.split("---\n", 1)[1]
    assert injected.startswith("Related information:\n- ")
    assert "- Kael owes the blacksmith forty silver coins." in injected

    (ws_root / MAIN_FILE).write_text(MEMORIES + "<memory>\n- Mira sings.\n</memory>\n", "utf-8")
    code, out, _ = cli(capsys, "diagnose", "Mira")
    assert "index: 5 memories, all-minilm-l6-v2-int8 (384 dimensions)" in out
    assert "behind the memory file: 1 to embed, 0 to remove" in out
    assert "query: Did Kael ever pay the blacksmith what he owed?" in out
    best = next(line for line in out.splitlines() if line.startswith("  * score"))
    assert "Kael owes the blacksmith" in best  # ranked first, and injected
    assert "    - Kael owes the blacksmith forty silver coins." in out

    # A block left open by hand: its bullet is text, and diagnose says where.
    lines = (MEMORIES + "<memory>\n- Mira sings.\n").count("\n")
    (ws_root / MAIN_FILE).write_text(MEMORIES + "<memory>\n- Mira sings.\n", "utf-8")
    code, out, _ = cli(capsys, "diagnose", "Mira")
    assert "2 blocks, 6 bullets)" in out
    assert f"warning: line(s) {lines - 1} hold a <memory> tag without its pair" in out

    code, out, _ = cli(capsys, "inject", "Mira", "--json")
    shown = json.loads(out)
    assert (shown["position"], shown["depth"], shown["role"]) == ("in_prompt", 4, "system")
    assert shown["text"].startswith("Related information:\n") and shown["tokens"] > 0


def test_per_chat_memories_have_their_own_collection(
    ws_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    set_stored(ws_root, "extraction.per_chat", True)
    chat_file = ws_root / "user/files/Mira-chatMira_-_2026-02-15_10h00m00s123ms-memories.md"
    chat_file.write_text("<memory>\n- Mira hid the silver key under the mill.\n</memory>\n")

    code, out, _ = cli(capsys, "index", "Mira", "--chat", CHAT_ID)
    assert code == 0 and out.startswith(f"char:Mira/chat:{CHAT_ID}: 1 memory indexed")
    code, out, _ = cli(capsys, "search", "Mira", "silver", "--chat", CHAT_ID, "--json")
    assert [result["text"] for result in json.loads(out)] == [
        "Mira hid the silver key under the mill."
    ]
    # Without --chat, per-chat memories are the latest chat's, as extraction writes them.
    code, out, _ = cli(capsys, "search", "Mira", "silver", "--json")
    assert "silver key" in out and "Kael owes the blacksmith" not in out


def test_chunk_granularity_retrieves_sillytavern_style_chunks(
    ws_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli(capsys, "settings", "set", "retrieval.granularity", "chunk", "-c", "Mira")[0] == 0
    assert cli(capsys, "settings", "set", "retrieval.chunk_threshold_kb", "0")[0] == 0
    assert cli(capsys, "settings", "set", "retrieval.chunk_size", "200")[0] == 0
    assert cli(capsys, "settings", "set", "retrieval.chunk_count", "1", "-c", "Mira")[0] == 0

    code, out, _ = cli(capsys, "index", "Mira")
    assert code == 0 and out.startswith("char:Mira/chunks: 4 chunks indexed")
    code, out, _ = cli(capsys, "inject", "Mira")
    injected = out.split("---\n", 1)[1]
    assert injected.startswith('Related information:\n<memory chat="Mira - 2026-03-01@09h00m00s"')
    assert "- Kael owes the blacksmith forty silver coins." in injected
    assert "1 injected" in out and "Tomas" not in injected

    code, out, _ = cli(capsys, "settings", "show", "retrieval", "-c", "Mira")
    assert out.splitlines()[0].split()[:3] == ["retrieval.granularity", "chunk", "character"]
    assert any(
        line.startswith("retrieval.chunk_size") and "workspace" in line for line in out.splitlines()
    )


def test_settings_are_checked_before_they_are_stored(
    ws_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = cli(capsys, "settings", "set", "retrieval.top_k", "0")
    assert code == 2 and err.strip().endswith("must be between 1 and 50, not 0")
    code, _, err = cli(capsys, "settings", "set", "retrieval.template", "no macro")
    assert code == 2 and "must be text holding {{text}}" in err
    assert cli(capsys, "settings", "set", "retrieval.template", "Memories:\\n{{text}}")[0] == 0
    assert cli(capsys, "settings", "set", "retrieval.top_k", "1")[0] == 0

    code, out, _ = cli(capsys, "inject", "Mira")
    assert out.split("---\n", 1)[1].startswith("Memories:\n- ") and "1 injected" in out

    assert cli(capsys, "settings", "unset", "retrieval.template")[0] == 0
    code, out, _ = cli(capsys, "settings", "show", "retrieval")
    assert any(
        line.startswith("retrieval.template ") and "default" in line for line in out.splitlines()
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["index", "Nobody"], "unknown character 'Nobody'; known: Mira"),
        (["search", "Nobody", "dragon"], "unknown character 'Nobody'"),
        (["search", "Mira"], "give one query, or --queries FILE"),
        (["search", "Mira", "  "], "the query is empty"),
        (["inject", "Mira", "--chat", "nope"], "Mira has no chat 'nope'"),
        (["settings", "set", "retrieval.colour", "red"], "unknown setting 'retrieval.colour'"),
    ],
)
def test_user_errors_are_one_line(
    ws_root: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    code, _, err = cli(capsys, *args)
    assert code == 2
    assert err.startswith("error: ") and message in err and err.count("\n") == 1


def test_a_character_without_memories_is_told_so(
    ws_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (ws_root / MAIN_FILE).unlink()
    for command in (["index", "Mira"], ["search", "Mira", "dragon"], ["inject", "Mira"]):
        code, _, err = cli(capsys, *command)
        assert code == 2
        assert (
            err
            == f"error: Mira has no memory file yet ({MAIN_FILE}); extract or pin memories first\n"
        )
    code, out, _ = cli(capsys, "diagnose", "Mira")
    assert code == 0 and f"memory file: {MAIN_FILE} (none yet)" in out
