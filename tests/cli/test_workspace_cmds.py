import gc
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from charmemory.cli.application import collection_paused, run
from charmemory.cli.workspace_cmds import _json_block
from charmemory.services.memory_manager import Block, Memory, MemoryListing, MemoryManager
from tests.support.extraction_fixtures import CHARACTER, make_workspace
from tests.support.sillytavern_samples import sillytavern_sample

DEMO = Path(__file__).resolve().parents[2] / "src" / "charmemory" / "data" / "demo"
DEMO_CHAT = DEMO / "Captain Mira Vance - 2026-02-15@10h00m00s123ms.jsonl"


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    assert run(["init", "--workspace", str(root)]) == 0
    return root


def test_import_places_every_kind_where_sillytavern_keeps_it(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    files = [
        str(DEMO_CHAT),
        str(DEMO / "Captain Mira Vance.json"),
        str(sillytavern_sample("Eldoria.json")),
    ]
    assert run(["import", *files, "-w", str(ws)]) == 0
    assert (ws / "characters" / "Captain Mira Vance.json").is_file()
    assert (ws / "worlds" / "Eldoria.json").read_bytes() == (
        sillytavern_sample("Eldoria.json")
    ).read_bytes()
    assert (ws / "chats" / "Captain Mira Vance" / DEMO_CHAT.name).read_bytes() == (
        DEMO_CHAT.read_bytes()
    )
    capsys.readouterr()
    assert run(["--workspace", str(ws), "chats", "captain mira vance"]) == 0
    assert f"{DEMO_CHAT.stem}\t55 messages" in capsys.readouterr().out


def test_importing_the_same_file_twice_is_harmless(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    card = str(sillytavern_sample("default_Seraphina.png"))
    assert run(["import", card, "-w", str(ws)]) == 0
    assert run(["import", card, "-w", str(ws)]) == 0
    assert "already there" in capsys.readouterr().out
    assert run(["characters", "-w", str(ws)]) == 0
    assert capsys.readouterr().out.startswith("Seraphina\t0 chats\tdefault_Seraphina.png")


def test_user_errors_are_one_line_and_exit_2(
    ws: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"user_name":"A","character_name":"Nobody"}\n{"name": oops}\n')
    cases = [
        (["import", str(tmp_path / "missing.png")], "no such file"),
        (["import", str(broken)], "broken.jsonl:2: not valid JSON"),
        (["chats", "Nobody"], "unknown character 'Nobody'"),
        (["memories", "show", "Nobody"], "unknown character"),
    ]
    for argv, expected in cases:
        capsys.readouterr()
        assert run([*argv, "-w", str(ws)]) == 2
        err = capsys.readouterr().err
        assert expected in err
        assert err.count("\n") == 1 and "Traceback" not in err


def test_memories_show_lists_blocks_with_ids(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run(["import", str(sillytavern_sample("default_Seraphina.png")), "-w", str(ws)])
    (ws / "user" / "files" / "Seraphina-memories.md").write_text(
        '<memory chat="Seraphina - 2026-02-15@10h00m00s123ms" date="2026-02-15 10:42">\n'
        "- Seraphina healed the user's wounds.\n- The user promised to return the amulet.\n"
        "</memory>\n"
    )
    capsys.readouterr()
    assert run(["memories", "show", "Seraphina", "--json", "-w", str(ws)]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["file"] == "user/files/Seraphina-memories.md"
    [block] = shown["blocks"]
    assert block["chat"] == "Seraphina - 2026-02-15@10h00m00s123ms"
    assert [m["text"] for m in block["memories"]] == [
        "Seraphina healed the user's wounds.",
        "The user promised to return the amulet.",
    ]
    assert all(len(m["id"]) == 12 for m in block["memories"])

    # A block left open by hand: its bullets are text, and the listing says where.
    with (ws / "user" / "files" / "Seraphina-memories.md").open("a") as file:
        file.write('<memory chat="c" date="d">\n- Seraphina sang.\n')
    assert run(["memories", "show", "Seraphina", "-w", str(ws)]) == 0
    out, err = capsys.readouterr()
    assert "2 memories in 1 blocks" in out and "Seraphina sang" not in out
    assert err.startswith("warning: line(s) 5 hold a <memory> tag without its pair")


def test_sillytavern_folder_is_read_only_unless_allowed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    st = tmp_path / "data" / "default-user"
    (st / "characters").mkdir(parents=True)
    (st / "chats").mkdir()
    shutil.copy(sillytavern_sample("default_Seraphina.png"), st / "characters")
    before = sorted(p.relative_to(st) for p in st.rglob("*"))
    assert run(["characters", "-w", str(st)]) == 0
    assert run(["import", str(sillytavern_sample("Eldoria.json")), "-w", str(st)]) == 2
    assert "opened read-only" in capsys.readouterr().err
    assert sorted(p.relative_to(st) for p in st.rglob("*")) == before
    assert (
        run(["import", str(sillytavern_sample("Eldoria.json")), "-w", str(st), "--allow-write"])
        == 0
    )
    assert (st / "worlds" / "Eldoria.json").is_file()


def test_a_broken_card_is_named_as_broken_not_unknown(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (ws / "characters" / "Broken.json").write_text('{"spec": "chara_card_v2", "data": ')
    assert run(["chats", "Broken", "-w", str(ws)]) == 2
    err = capsys.readouterr().err
    assert "Broken.json" in err and "unknown character" not in err


def card_file(folder: Path, name: str, stem: str) -> Path:
    path = folder / f"{stem}.json"
    card = {"spec": "chara_card_v2", "spec_version": "2.0", "data": {"name": name}}
    path.write_text(json.dumps(card), encoding="utf-8")
    return path


def test_characters_whose_names_sanitise_alike_never_share_memories(
    ws: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(["import", str(card_file(tmp_path, "Ann B", "Ann B")), "-w", str(ws)]) == 0
    assert run(["pin", "Ann B", "Ann B keeps bees.", "-w", str(ws)]) == 0
    assert (ws / "user" / "files" / "Ann_B-memories.md").is_file()
    capsys.readouterr()

    assert run(["import", str(card_file(tmp_path, "Ann_B", "Ann_B")), "-w", str(ws)]) == 0
    note = capsys.readouterr().out
    assert "'Ann B' and 'Ann_B' sanitise to one file name" in note
    assert "Ann_B-memories.md holds 'Ann B''s memories from before: rename it to" in note
    assert run(["pin", "Ann_B", "Ann_B sails boats.", "-w", str(ws)]) == 0
    capsys.readouterr()

    assert run(["memories", "show", "Ann_B", "-w", str(ws)]) == 0
    shown = capsys.readouterr().out
    assert "Ann_B sails boats." in shown and "bees" not in shown
    assert run(["memories", "show", "Ann B", "-w", str(ws)]) == 0
    assert "sails boats" not in capsys.readouterr().out


LISTING = Path(__file__).resolve().parents[1] / "fixtures" / "listing"


@pytest.mark.parametrize(("flags", "printed"), [(["--json"], "show.json.out"), ([], "show.out")])
def test_memories_show_prints_byte_for_byte_what_it_always_printed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flags: list[str], printed: str
) -> None:
    ws = make_workspace(tmp_path / "ws")
    ws.close()
    shutil.copy(LISTING / "Mira-memories.md", ws.files_dir / "Mira-memories.md")
    warned = "" if flags else (LISTING / "show.err").read_text(encoding="utf-8")

    for listing in ("first", "kept"):
        assert run(["memories", "show", CHARACTER, *flags, "-w", str(ws.root)]) == 0, listing
        assert capsys.readouterr() == ((LISTING / printed).read_text(encoding="utf-8"), warned)
        assert len(list((ws.state_dir / "listings").iterdir())) == 1


def test_memories_show_lists_with_the_cycle_collector_paused_then_resumed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = make_workspace(tmp_path / "ws")
    ws.close()
    collecting: list[bool] = []
    listed = MemoryManager.list

    def spy(self: MemoryManager, *args: Any, **kwargs: Any) -> MemoryListing:
        collecting.append(gc.isenabled())
        return listed(self, *args, **kwargs)

    monkeypatch.setattr(MemoryManager, "list", spy)
    assert gc.isenabled()
    assert run(["memories", "show", CHARACTER, "-w", str(ws.root)]) == 0
    assert collecting == [False] and gc.isenabled()


def test_a_paused_collector_stays_as_it_was_found() -> None:
    gc.disable()
    try:
        with collection_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()
    with pytest.raises(RuntimeError), collection_paused():
        raise RuntimeError
    assert gc.isenabled()


@settings(max_examples=200, deadline=None)
@given(
    st.text(),
    st.text(),
    st.lists(st.tuples(st.text(max_size=12), st.text())),
    st.lists(st.text(), max_size=3),
)
def test_a_json_block_is_what_the_json_encoder_writes(
    chat: str, date: str, memories: list[tuple[str, str]], notes: list[str]
) -> None:
    block = Block(
        3, chat, date, tuple(Memory(i, t, 3, n) for n, (i, t) in enumerate(memories)), tuple(notes)
    )
    item = {
        "chat": chat,
        "date": date,
        "memories": [{"id": i, "text": t} for i, t in memories],
        "notes": notes,
    }
    assert _json_block(block) == json.dumps(item, ensure_ascii=False)
