import json
import re
from pathlib import Path

import pytest

from charmemory.cli.application import run
from tests.services.test_consolidation import MEMORIES, without_repeats
from tests.support.extraction_fixtures import CHARACTER, make_workspace
from tests.support.scripted_llm import RecordedRequest, ScriptedLLMServer, Step, openai_completion


@pytest.fixture
def memory_file(
    tmp_path: Path, llm_server: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch
) -> Path:
    ws = make_workspace(tmp_path / "ws")
    path = ws.files_dir / "Mira-memories.md"
    path.write_text(MEMORIES, encoding="utf-8")
    ws.close()
    monkeypatch.setenv("CHARMEMORY_PROVIDER", "custom")
    monkeypatch.setenv("CHARMEMORY_BASE_URL", llm_server.base_url)
    monkeypatch.setenv("CHARMEMORY_MODEL", "scripted")
    monkeypatch.setenv("CHARMEMORY_HOME", str(ws.root))
    return path


def drop_repeats(request: RecordedRequest) -> Step:
    """A provider that keeps every block and drops memories an earlier block already holds."""
    return Step(json=openai_completion(without_repeats(request.json["messages"][-1]["content"])))


def memory_id(capsys: pytest.CaptureFixture[str], text: str) -> str:
    assert run(["memories", "show", CHARACTER]) == 0
    found = re.search(rf"(\w{{12}})  - {re.escape(text)}\n", capsys.readouterr().out)
    assert found, text
    return found[1]


def test_add_edit_and_delete_memories_then_walk_the_history(
    memory_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(["memories", "add", CHARACTER, "Mira hates fog.\n- Alex sings.", "--date", "x"]) == 0
    assert "added 2 memories in user/files/Mira-memories.md (v2)" in capsys.readouterr().out
    fog = memory_id(capsys, "Mira hates fog.")
    assert run(["memories", "edit", CHARACTER, fog, "Mira hates sea fog."]) == 0
    assert "edited in user/files/Mira-memories.md (v3)" in capsys.readouterr().out
    assert run(["memories", "delete", CHARACTER, memory_id(capsys, "Alex sings.")]) == 0
    assert "deleted in user/files/Mira-memories.md (v4)" in capsys.readouterr().out
    text = memory_file.read_text(encoding="utf-8")
    assert "- Mira hates sea fog.\n</memory>" in text and "Alex sings." not in text

    assert run(["history", CHARACTER]) == 0
    out = capsys.readouterr().out
    assert [line.split()[2] for line in out.splitlines()[1:]] == ["found", "add", "edit", "delete"]
    assert run(["diff", CHARACTER, "2", "3"]) == 0
    assert "-- Mira hates fog.\n+- Mira hates sea fog.\n" in capsys.readouterr().out
    assert run(["undo", CHARACTER]) == 0
    assert "restored v3 (edit) as v5" in capsys.readouterr().out
    assert "Alex sings." in memory_file.read_text(encoding="utf-8")


def test_consolidate_previews_then_applies(
    memory_file: Path, llm_server: ScriptedLLMServer, capsys: pytest.CaptureFixture[str]
) -> None:
    llm_server.reply_with(drop_repeats)
    assert run(["consolidate", CHARACTER, "--strategy", "balanced", "--preview"]) == 0
    out = capsys.readouterr().out
    assert "preview 1: user/files/Mira-memories.md, balanced, 1 call" in out
    assert "5 memories in 3 blocks -> 4 memories in 3 blocks" in out
    lines = out.splitlines()
    assert "- Mira owns a brass compass." in lines
    assert "  Mira owns a brass compass." in lines
    assert "  Alex is from Cinderfall." in lines  # kept: marked apart even when piped
    assert f"apply it with: charmemory consolidate {CHARACTER} --apply 1" in out
    assert memory_file.read_text(encoding="utf-8") == MEMORIES

    assert run(["consolidate", CHARACTER, "--apply", "1"]) == 0
    assert "applied preview 1 to user/files/Mira-memories.md (v2)" in capsys.readouterr().out
    assert memory_file.read_text(encoding="utf-8").count("Mira owns a brass compass.") == 1


def test_a_preview_of_a_plain_answer_shows_what_goes_what_comes_and_the_notes_that_stay(
    memory_file: Path, llm_server: ScriptedLLMServer, capsys: pytest.CaptureFixture[str]
) -> None:
    memory_file.write_text(
        MEMORIES.replace(
            "- Mira captains the Kestrel.\n", "- Mira captains the Kestrel.\nsee log\n"
        ),
        encoding="utf-8",
    )
    plain = "<memory>\n- Mira owns a brass compass and captains the Kestrel.\n</memory>"
    llm_server.reply_with(lambda _: Step(json=openai_completion(plain)))
    assert run(["consolidate", CHARACTER, "--preview"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "  blocks 0, 1, 2 replaced as a whole (the answer named no sources)" in lines
    assert "+ Mira owns a brass compass and captains the Kestrel." in lines
    assert "- Mira fears deep water." in lines
    assert "  (note, kept as typed) see log" in lines


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["memories", "edit", CHARACTER, "000000000000", "x"], "no memory with id"),
        (["memories", "add", CHARACTER, " \n "], "nothing to add"),
        (["consolidate", CHARACTER, "--blocks", "two"], "not a block number"),
        (["consolidate", CHARACTER, "--blocks", "9"], "block 9 does not exist"),
        (["consolidate", CHARACTER, "--strategy", "reckless"], "unknown consolidation strategy"),
        (["consolidate", CHARACTER, "--apply", "7"], "no consolidation preview 7"),
        (["consolidate", CHARACTER, "--preview", "--apply", "1"], "separate runs"),
        (["undo", CHARACTER], "nothing to undo: v1 is the oldest"),
        (["diff", CHARACTER, "1", "4"], "has no version 4"),
        (["history", "Nobody"], "Nobody"),
    ],
)
def test_mistakes_are_one_line_errors_with_exit_code_2(
    memory_file: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    assert run(args) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_show_lists_the_notes_typed_in_a_block(
    memory_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = memory_file.read_text(encoding="utf-8")
    memory_file.write_text(
        text.replace("- Mira captains the Kestrel.\n", "- Mira captains the Kestrel.\nAsk Alex.\n"),
        encoding="utf-8",
    )

    assert run(["memories", "show", CHARACTER]) == 0
    assert "  (note)        Ask Alex.\n" in capsys.readouterr().out
    assert run(["memories", "show", CHARACTER, "--json"]) == 0
    blocks = json.loads(capsys.readouterr().out)["blocks"]
    assert [block["notes"] for block in blocks] == [[], ["Ask Alex."], []]
