"""Chatting from the command line against a scripted OpenAI-compatible server."""

import gc
import json
from pathlib import Path

import pytest

from charmemory.cli.application import run
from charmemory.formats.chat import parse_chat
from tests.services.test_chat import card_with
from tests.support.cli import out_of, use_scripted_provider
from tests.support.extraction_fixtures import CHARACTER, make_workspace
from tests.support.scripted_llm import ScriptedLLMServer


@pytest.fixture
def ws_root(tmp_path: Path, llm_server: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch) -> Path:
    ws = make_workspace(tmp_path / "ws", interval=50)
    card_with(ws)
    ws.close()
    use_scripted_provider(monkeypatch, llm_server.base_url, ws.root)
    return ws.root


def the_chat_id(root: Path) -> str:
    [path] = (root / "chats" / CHARACTER).glob("*.jsonl")
    return path.stem


def the_chat(root: Path):
    [path] = (root / "chats" / CHARACTER).glob("*.jsonl")
    return parse_chat(path.read_text(encoding="utf-8"))


def test_say_streams_the_reply_and_saves_the_turn(
    ws_root: Path, llm_server: ScriptedLLMServer, capsys: pytest.CaptureFixture[str]
) -> None:
    llm_server.reply_stream(["Aye, ", "at dawn."])
    out = out_of(capsys, "persona", "set", "Alex", "--description", "A navigator.")
    assert out == "persona: Alex\n"
    assert out_of(capsys, "say", CHARACTER, "When do we sail?") == "Aye, at dawn.\n"
    request = llm_server.requests[0].json
    assert request["stream"] is True and request["model"] == "scripted"
    assert "A navigator." in json.dumps(request["messages"])
    assert [m.mes for m in the_chat(ws_root).messages] == [
        "Welcome aboard, {{user}}.",
        "When do we sail?",
        "Aye, at dawn.",
    ]


def test_say_json_and_dry_run(
    ws_root: Path, llm_server: ScriptedLLMServer, capsys: pytest.CaptureFixture[str]
) -> None:
    dry = json.loads(out_of(capsys, "say", CHARACTER, "Hello?", "--dry-run", "--json"))
    assert dry["messages"][-1] == {"role": "user", "content": "Hello?"}
    assert dry["memories"] == [] and dry["world_info"] == []
    assert llm_server.requests == [] and not (ws_root / "chats" / CHARACTER).exists()

    llm_server.reply_stream(["Hello, Alex."])
    said = json.loads(out_of(capsys, "say", CHARACTER, "Hello?", "--json"))
    assert set(said) == {"chat", "index", "reply", "memories", "world_info", "extraction"}
    assert (said["index"], said["reply"], said["extraction"]) == (
        2,
        "Hello, Alex.",
        "skipped: 2/50 msgs",
    )
    # The dry run sends exactly what a real turn sends.
    assert llm_server.requests[0].json["messages"] == dry["messages"]

    out_of(capsys, "settings", "set", "extraction.auto_extract", "false")
    llm_server.reply_stream(["Still here."])
    said = json.loads(out_of(capsys, "say", CHARACTER, "Hello?", "--json"))
    assert said["extraction"] == "none"  # automatic extraction is off: no trigger ran
    assert "extraction_members" not in said


def test_swipe_continue_regenerate_delete_and_branch(
    ws_root: Path, llm_server: ScriptedLLMServer, capsys: pytest.CaptureFixture[str]
) -> None:
    for pieces in (["First."], ["Second."], [" More."], ["Third."]):
        llm_server.reply_stream(pieces)
    out_of(capsys, "say", CHARACTER, "Hi.")
    assert out_of(capsys, "swipe", CHARACTER) == "Second.\n"
    assert out_of(capsys, "continue", CHARACTER) == " More.\n"
    reply = the_chat(ws_root).messages[-1]
    assert (reply.mes, reply.swipes) == ("Second. More.", ("First.", "Second. More."))
    assert out_of(capsys, "regenerate", CHARACTER) == "Third.\n"
    assert the_chat(ws_root).messages[-1].swipes == ("Third.",)
    branch = out_of(capsys, "branch", CHARACTER, "--at", "1")
    assert branch.startswith("branch: Mira - ") and branch.endswith(" - Branch #1\n")
    chat_id = branch.removeprefix("branch: ").strip()
    assert out_of(capsys, "delete-messages", CHARACTER, "--last", "1", "--chat", chat_id) == (
        "deleted 1 message\n"
    )


def test_chat_errors_are_one_line(
    ws_root: Path, llm_server: ScriptedLLMServer, capsys: pytest.CaptureFixture[str]
) -> None:
    llm_server.reply(401, json={"error": {"message": "bad key"}})
    capsys.readouterr()
    assert run(["say", CHARACTER, "Hello?"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1
    # The failed generation saved no reply.
    assert [m.is_user for m in the_chat(ws_root).messages] == [False, True]
    assert run(["swipe", "Nobody"]) == 2


def test_diagnose_shows_what_the_last_reply_was_given(
    tmp_path: Path,
    llm_server: ScriptedLLMServer,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from tests.support.sillytavern_samples import sillytavern_sample

    root = tmp_path / "st"
    assert run(["init", "-w", str(root)]) == 0
    chat = "Seraphina - 2026-11-28@19h02m11s482ms.jsonl"
    sample = [sillytavern_sample("default_Seraphina.png"), sillytavern_sample(chat)]
    assert run(["import", *map(str, sample), "-w", str(root)]) == 0
    for name, value in (
        ("CHARMEMORY_PROVIDER", "custom"),
        ("CHARMEMORY_BASE_URL", llm_server.base_url),
        ("CHARMEMORY_MODEL", "scripted"),
        ("CHARMEMORY_HOME", str(root)),
    ):
        monkeypatch.setenv(name, value)
    llm_server.reply_stream(["The spring lies east, past Eldoria's old oaks."])
    out_of(capsys, "say", "Seraphina", "Tell me about Eldoria and the forest.")

    out = out_of(capsys, "diagnose", "Seraphina", "--raw")
    assert "generation 1 of chat Seraphina - 2026-11-28@19h02m11s482ms (normal" in out
    assert "Eldoria (character, 4 entries)" in out  # the card's own book, embedded
    assert "+ Eldoria#" in out and "--- reply ---\nThe spring lies east" in out
    # --raw prints the prompt exactly as it was sent, World Info sections included.
    sent = llm_server.requests[0].json["messages"]
    assert all(message["content"] in out for message in sent)
    assert "(world_info_before)" in out or "(world_info_after)" in out
    capsys.readouterr()
    assert run(["diagnose", "Seraphina", "--generation", "9"]) == 2
    assert "no generation 9" in capsys.readouterr().err


def test_diagnose_lists_the_characters_lorebooks_with_their_keys(
    ws_root: Path, llm_server: ScriptedLLMServer, capsys: pytest.CaptureFixture[str]
) -> None:
    from charmemory.adapters.generation_log import SqliteGenerationLog
    from charmemory.adapters.workspace import Workspace
    from charmemory.formats.lorebook import Lorebook, new_entry

    book = Lorebook()
    book.put(new_entry("The boiler is Old Maud.", ["boiler", "Old Maud"], uid=0))
    book.put(new_entry("Brassport takes bribes.", [], uid=1, constant=True))
    book.put(new_entry("The Isles lie south.", ["saltglass", "boiler"], uid=2))
    (ws_root / "worlds" / "Kestrel.json").write_text(book.render(), encoding="utf-8")
    ws = Workspace.open(ws_root)
    card_with(ws, extensions={"world": "Kestrel"})
    llm_server.reply_stream(["Hm."])
    out_of(capsys, "say", CHARACTER, "How is the boiler?")

    out = out_of(capsys, "diagnose", CHARACTER)
    assert "    Kestrel (character, 3 entries)\n      keys: boiler, Old Maud, saltglass\n" in out

    # A generation kept before keys were recorded still shows, without them.
    [record] = SqliteGenerationLog(ws.db).last(CHARACTER, the_chat_id(ws_root))
    older = record.to_dict()
    for listed in older["lorebooks"]:
        del listed["keys"]
    ws.db.execute(
        "UPDATE generations SET data = ? WHERE number = ?", (json.dumps(older), record.number)
    )
    ws.db.commit()
    ws.close()
    out = out_of(capsys, "diagnose", CHARACTER)
    assert "    Kestrel (character, 3 entries)\n" in out and "keys:" not in out


def test_a_books_many_keys_are_cut_short_unless_raw() -> None:
    from charmemory.cli.diagnose_cmds import SHOWN_KEYS, generation_lines
    from charmemory.core.chat.diagnostics import GenerationRecord

    keys = [f"key{n}" for n in range(SHOWN_KEYS + 5)]
    books = [
        {"source": "global", "name": "Atlas", "entries": 50, "keys": keys},
        {"source": "chat", "name": "Notes", "entries": 2, "keys": []},
    ]
    record = GenerationRecord(
        CHARACTER, "c", "2026-03-01T12:00:00Z", "normal", "fake/m", [], "", [], [], {}, {}, books
    )

    short = "\n".join(generation_lines(record, raw=False))
    assert f"key{SHOWN_KEYS - 1} (+5 more, all with --raw)" in short
    assert f"key{SHOWN_KEYS}," not in short
    assert "Notes (chat, 2 entries)\n      keys: (none: its entries activate otherwise)" in short
    assert ", ".join(keys) + "\n" in "\n".join(generation_lines(record, raw=True))


def test_the_chat_command_freezes_again_after_its_first_reply_only(
    ws_root: Path, llm_server: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    import io

    import charmemory.composition

    after_reply: list[None] = []
    monkeypatch.setattr(
        charmemory.composition, "freeze_long_lived_objects", lambda: after_reply.append(None)
    )
    monkeypatch.setattr("sys.stdin", io.StringIO("When do we sail?\nAnd who steers?\n"))
    llm_server.reply_stream(["Aye, ", "at dawn."])
    llm_server.reply_stream(["You ", "do."])
    try:
        assert run(["chat", CHARACTER]) == 0
    finally:
        gc.unfreeze()  # the command's own freeze at startup
    assert [m.mes for m in the_chat(ws_root).messages][-1] == "You do."
    assert len(after_reply) == 1
