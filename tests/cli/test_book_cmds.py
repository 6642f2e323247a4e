"""Memory books from the command line, against a scripted OpenAI-compatible server."""

import io
import json
from pathlib import Path

import pytest

from charmemory.adapters.workspace import Workspace
from charmemory.cli.application import run
from tests.support.books import (
    CHARACTER,
    book_workspace,
    chat_header,
    read_book,
    scene_json,
    speaker_lines,
    write_book,
    write_chat,
)
from tests.support.extraction_fixtures import CHAT_ID
from tests.support.scripted_llm import ScriptedLLMServer

BOOK = "Mira Memories"


@pytest.fixture
def ws_root(tmp_path: Path, llm_server: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch) -> Path:
    ws = book_workspace(tmp_path / "ws")
    write_chat(ws, speaker_lines(30), {"world_info": BOOK})
    write_book(ws, BOOK)
    ws.close()
    for name, value in (
        ("CHARMEMORY_PROVIDER", "custom"),
        ("CHARMEMORY_BASE_URL", llm_server.base_url),
        ("CHARMEMORY_MODEL", "scripted"),
        ("CHARMEMORY_MAX_RETRIES", "0"),
        ("CHARMEMORY_HOME", str(ws.root)),
    ):
        monkeypatch.setenv(name, value)
    return ws.root


def result(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = run(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def out_of(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    code, out, err = result(capsys, *args)
    assert code == 0, err
    return out


def test_scene_writes_the_entry_and_prints_it(
    ws_root: Path, llm_server: ScriptedLLMServer, capsys: pytest.CaptureFixture[str]
) -> None:
    llm_server.reply_text(scene_json("The Harbour", "- Mira met Alex.", ["harbour"]))
    out = out_of(capsys, "scene", CHARACTER, "0-9", "--yes")
    assert out == f"{BOOK}#0 001 - The Harbour\n"
    request = llm_server.requests[0].json
    assert request["response_format"]["type"] == "json_schema"
    assert request["response_format"]["json_schema"]["name"] == "scene_memory"
    entry = read_book(Workspace.open(ws_root), BOOK).entries[0]
    assert entry.content == "- Mira met Alex."


def test_scene_json_preview_and_refusals(
    ws_root: Path, llm_server: ScriptedLLMServer, capsys: pytest.CaptureFixture[str]
) -> None:
    llm_server.reply_text(scene_json("Just looking"))
    out = out_of(capsys, "scene", CHARACTER, "0-9", "--preview")
    assert "title: Just looking" in out and out.endswith("(preview: nothing was saved)\n")
    assert read_book(Workspace.open(ws_root), BOOK).entries == {}
    llm_server.reply_text(scene_json("Saved", "- It happened.", ["it"]))
    shown = json.loads(out_of(capsys, "scene", CHARACTER, "0-9", "--yes", "--json"))
    assert shown["range"] == "0-9" and shown["chat"] == CHAT_ID
    assert shown["entries"] == [
        {"book": BOOK, "uid": 0, "title": "001 - Saved", "canonical": True, "inclusion_group": None}
    ]
    code, _, err = result(capsys, "scene", CHARACTER, "5-12", "--yes")
    assert code == 2 and "messages 5-12 overlap '001 - Saved'" in err and err.count("\n") == 1
    code, _, err = result(capsys, "scene", CHARACTER, "12-5", "--yes")
    assert code == 2 and "runs backwards" in err


def test_scene_asks_before_saving_and_can_retry_or_cancel(
    ws_root: Path,
    llm_server: ScriptedLLMServer,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    llm_server.reply_text(scene_json("First"))
    llm_server.reply_text(scene_json("Second"))
    monkeypatch.setattr("sys.stdin", io.StringIO("r\na\n"))
    out = out_of(capsys, "scene", CHARACTER, "0-9")
    assert "title: First" in out and "title: Second" in out
    assert out.endswith(f"{BOOK}#0 001 - Second\n")
    llm_server.reply_text(scene_json("Third"))
    monkeypatch.setattr("sys.stdin", io.StringIO("c\n"))
    assert out_of(capsys, "scene", CHARACTER, "10-19").endswith("nothing was saved\n")
    llm_server.reply_text(scene_json("Fourth", "- As written.", ["four"]))
    monkeypatch.setenv("EDITOR", "sed -i -e s/Fourth/Mine/ -e s/written/I/ -e s/four/five/")
    monkeypatch.setattr("sys.stdin", io.StringIO("e\n"))
    assert out_of(capsys, "scene", CHARACTER, "10-19").endswith(f"{BOOK}#1 002 - Mine\n")
    entry = read_book(Workspace.open(ws_root), BOOK).entries[1]
    assert (entry.content, entry.keys) == ("- As I.", ("five",))


def test_books_list_show_history_and_undo(
    ws_root: Path, llm_server: ScriptedLLMServer, capsys: pytest.CaptureFixture[str]
) -> None:
    llm_server.reply_text(scene_json("One", "- First.", ["one"]))
    out_of(capsys, "scene", CHARACTER, "0-9", "--yes")
    assert out_of(capsys, "books", "list") == f"{BOOK}: 1 entries, 1 memories, from 1 chat(s)\n"
    shown = out_of(capsys, "books", "show", BOOK)
    assert shown.splitlines()[:3] == [
        f"{BOOK}: 1 entries",
        "#0 001 - One [memory 0-9]",
        "    keywords: one",
    ]
    data = json.loads(out_of(capsys, "books", "show", BOOK, "--json"))
    [entry] = data["entries"]
    assert (entry["memory"], entry["range"], entry["tier"], entry["vectorized"]) == (
        True,
        [0, 9],
        "memory",
        True,
    )
    history = out_of(capsys, "books", "history", BOOK)
    assert "v2" in history and "scene memory" in history
    assert out_of(capsys, "books", "undo", BOOK) == f"{BOOK}: back to v1 (found)\n"
    assert read_book(Workspace.open(ws_root), BOOK).entries == {}
    code, _, err = result(capsys, "books", "show", "Nope")
    assert code == 2 and "no lorebook named 'Nope'" in err


def test_books_bind_and_catch_up(
    ws_root: Path, llm_server: ScriptedLLMServer, capsys: pytest.CaptureFixture[str]
) -> None:
    write_book(Workspace.open(ws_root), "Other")
    out = out_of(capsys, "books", "bind", CHARACTER, "Other")
    assert out == f"the chat's book of {CHAT_ID}: Other\n"
    for title in ("One", "Two", "Three"):
        llm_server.reply_text(scene_json(title))
    out = out_of(capsys, "scene", "catch-up", CHARACTER, "--interval", "10")
    assert out.splitlines() == [
        "Other#0 001 - One",
        "Other#1 002 - Two",
        "Other#2 003 - Three",
        "3 scene memories saved",
    ]
    header = chat_header(Workspace.open(ws_root))
    assert header["chat_metadata"]["STMemoryBooks"]["highestMemoryProcessed"] == 29


def test_profiles_list_show_and_set(ws_root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert out_of(capsys, "profiles", "list") == "Default (default)\n"
    out = out_of(
        capsys,
        "profiles",
        "set",
        "Terse",
        "--preset",
        "minimal",
        "--mode",
        "blue",
        "--order-mode",
        "reverse",
        "--title-format",
        "#000 {{title}}",
        "--default",
    )
    assert out.splitlines()[0] == "Terse (default)"
    assert "entries: blue, position 0, order reverse from 9999" in out
    shown = json.loads(out_of(capsys, "profiles", "show", "Terse", "--json"))
    assert (shown["constVectMode"], shown["preset"], shown["titleFormat"]) == (
        "blue",
        "minimal",
        "#000 {{title}}",
    )
    code, _, err = result(capsys, "profiles", "set", "Bad", "--position", "4")
    assert code == 2 and "@depth" in err
    code, _, err = result(capsys, "profiles", "set", "Bad", "--preset", "poem")
    assert code == 2 and "no scene preset 'poem'" in err


def test_diagnose_shows_the_memory_book_entries_a_reply_was_given(
    ws_root: Path, llm_server: ScriptedLLMServer, capsys: pytest.CaptureFixture[str]
) -> None:
    out_of(capsys, "settings", "set", "extraction.auto_extract", "off")
    out_of(capsys, "profiles", "set", "Keys", "--mode", "green", "--default")
    llm_server.reply_text(scene_json("The Harbour", "- Mira owes the harbourmaster.", ["harbour"]))
    out_of(capsys, "scene", CHARACTER, "0-9", "--yes")
    llm_server.reply_stream(["Ten crowns, yes."])
    out_of(capsys, "say", CHARACTER, "What about the harbour debt?")
    sent = json.dumps(llm_server.requests[-1].json["messages"])
    assert "Mira owes the harbourmaster." in sent
    out = out_of(capsys, "diagnose", CHARACTER)
    assert f"    {BOOK} (chat, 1 entries)" in out
    assert "1 of 1 entries activated, 1 of them memory-book entries" in out
    assert f"+ {BOOK}#0 001 - The Harbour [memory 0-9]: key 'harbour' matched in message 30" in out


def test_entry_commands_and_consolidation(
    ws_root: Path, llm_server: ScriptedLLMServer, capsys: pytest.CaptureFixture[str]
) -> None:
    for number, title in enumerate(("One", "Two")):
        llm_server.reply_text(scene_json(title, f"- {title}.", [title.lower()]))
        out_of(capsys, "scene", CHARACTER, f"{number * 10}-{number * 10 + 9}", "--yes")
    out = out_of(capsys, "books", "edit", BOOK, "0", "--keywords", "first, one")
    assert out == f"edited {BOOK}#0 001 - One [memory 0-9]\n"
    llm_server.reply_text(scene_json("Two again", "- Two, redone."))
    out = out_of(capsys, "books", "regenerate", BOOK, "1", "--yes")
    assert out == f"{BOOK}#1 002 - Two again\n- Two, redone.\nsaved\n"
    llm_server.reply_text(scene_json("Two again", "- Short."))
    out = out_of(capsys, "books", "compact", BOOK, "1", "--preview")
    assert out == "- Short.\n(preview: nothing was saved)\n"
    llm_server.reply_text(scene_json("The Beginning", "It began.", ["beginning"]))
    out = out_of(capsys, "books", "consolidate", BOOK, "--yes", "--disable-sources")
    assert out.splitlines() == [
        "arc of entries 0, 1: The Beginning",
        "It began.",
        f"{BOOK}#2 [ARC 001] - The Beginning",
        "disabled: 0, 1",
    ]
    out = out_of(capsys, "books", "clip", BOOK, "The map is in the drawer.", "--title", "Map")
    assert out == f"clipped to {BOOK}#3 Map [STMB Clip]\n"
    assert out_of(capsys, "books", "delete", BOOK, "3") == f"deleted {BOOK}#3 Map [STMB Clip]\n"
    shown = out_of(capsys, "books", "show", BOOK)
    assert (
        "#0 001 - One [memory 0-9, disabled]" in shown
        and "#2 [ARC 001] - The Beginning [arc]" in shown
    )


def test_branch_says_which_memory_books_it_copied(
    ws_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = out_of(capsys, "branch", CHARACTER, "--at", "20")
    assert out.splitlines() == [
        f"branch: {CHAT_ID} - Branch #20",
        f"memory book {BOOK} copied as {BOOK} Branch 1",
    ]
