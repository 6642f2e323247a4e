"""Hostile names, bytes and files: every command answers with one clear line, never a traceback."""

import json
import sqlite3
from pathlib import Path

import pytest

from charmemory.cli.application import run
from tests.support.extraction_fixtures import alternating, line

LONG_NAME = "Captain" + " Mira Vance the Unbowed of the Northern Reach" * 7  # 322 characters


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    assert run(["init", "-w", str(root)]) == 0
    return root


def cli(capsys: pytest.CaptureFixture[str], ws: Path, *args: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = run([*args, "-w", str(ws)])
    out, err = capsys.readouterr()
    return code, out, err


def one_line_error(result: tuple[int, str, str], *expected: str) -> None:
    code, _, err = result
    assert code == 2 and err.startswith("error: ") and err.count("\n") == 1, err
    for text in expected:
        assert text in err


def add_character(ws: Path, name: str, *, stem: str = "card", chats: int = 0) -> None:
    card = {"name": name, "description": "An airship captain."}
    (ws / "characters" / f"{stem}.json").write_text(json.dumps(card), encoding="utf-8")
    for number in range(chats):
        header = {"user_name": "Alex", "character_name": name, "chat_metadata": {}}
        messages = [{**m, "name": name if not m["is_user"] else "Alex"} for m in alternating(4)]
        chat = ws / "chats" / stem / f"{name[:100]} - 2026-02-1{number}@10h00m00s000ms.jsonl"
        chat.parent.mkdir(parents=True, exist_ok=True)
        chat.write_text("\n".join(line(m) for m in [header, *messages]), encoding="utf-8")


# -- long names --------------------------------------------------------------------------


def test_a_character_with_a_very_long_name_gets_a_memory_file(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    add_character(ws, LONG_NAME)
    assert cli(capsys, ws, "pin", LONG_NAME, "Mira owns a compass.")[0] == 0
    code, out, _ = cli(capsys, ws, "memories", "show", LONG_NAME)
    assert code == 0 and "Mira owns a compass." in out
    assert cli(capsys, ws, "status", LONG_NAME)[0] == 0
    [memory_file] = (ws / "user" / "files").iterdir()
    assert len(memory_file.name.encode()) <= 240


def test_per_chat_files_of_a_long_name_fit_too(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    name = "C" * 120
    add_character(ws, name, chats=2)
    assert cli(capsys, ws, "settings", "set", "extraction.per_chat", "on")[0] == 0
    chats = sorted(p.stem for p in (ws / "chats" / "card").iterdir())
    for chat in chats:
        assert cli(capsys, ws, "pin", name, f"A fact of {chat[-20:]}.", "--chat", chat)[0] == 0
        code, out, _ = cli(capsys, ws, "memories", "show", name, "--chat", chat)
        assert code == 0 and f"A fact of {chat[-20:]}." in out
    assert cli(capsys, ws, "status", name)[0] == 0
    assert len(list((ws / "user" / "files").iterdir())) == 2


def test_an_override_too_long_for_a_file_name_is_refused_and_nothing_breaks(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    add_character(ws, "Mira")
    result = cli(capsys, ws, "settings", "set", "extraction.file_name_override", "n" * 300,
                 "--character", "Mira")  # fmt: skip
    one_line_error(result, "too long for a file name")
    assert cli(capsys, ws, "pin", "Mira", "Mira owns a compass.")[0] == 0
    assert cli(capsys, ws, "status", "Mira")[0] == 0


# -- bytes that are not UTF-8 --------------------------------------------------------------

NOT_UTF8 = "bad \udcff"  # how Python hands over the argument bytes b"bad \xff"


@pytest.mark.parametrize(
    "args",
    [
        ["pin", "Mira", NOT_UTF8],
        ["settings", "set", "model.system_prompt", NOT_UTF8],
        ["search", "Mira", NOT_UTF8],
        ["memories", "add", "Mira", NOT_UTF8],
        ["chats", "Mira\ud800"],
    ],
)
def test_arguments_that_are_not_utf8_are_refused(
    ws: Path, capsys: pytest.CaptureFixture[str], args: list[str]
) -> None:
    add_character(ws, "Mira")
    one_line_error(cli(capsys, ws, *args), "is not UTF-8 text")
    assert not list((ws / "user" / "files").iterdir())


def test_files_that_are_not_utf8_are_format_errors(
    ws: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    add_character(ws, "Mira")
    bad = tmp_path / "bad.txt"
    bad.write_bytes("caf\xe9 {{char}}\n".encode("cp1252"))
    one_line_error(cli(capsys, ws, "prompt", "set", "extraction", str(bad)), "bad.txt", "UTF-8")
    one_line_error(cli(capsys, ws, "search", "Mira", "--queries", str(bad)), "bad.txt", "UTF-8")


# -- paths that are not what they should be --------------------------------------------------


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["import", "{tmp}"], "is a folder, not a file"),
        (["import", "/dev/null"], "is a device, not a file"),
        (["prompt", "set", "extraction", "{tmp}"], "is a folder, not a file"),
        (["search", "Mira", "--queries", "{tmp}"], "is a folder, not a file"),
        (["import", "{tmp}/missing.png"], "no such file"),
        (["import", "{tmp}/" + "n" * 300 + ".png"], "File name too long"),
    ],
)
def test_a_path_that_is_not_a_file_is_called_what_it_is(
    ws: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    args: list[str],
    expected: str,
) -> None:
    add_character(ws, "Mira")
    argv = [arg.replace("{tmp}", str(tmp_path)) for arg in args]
    one_line_error(cli(capsys, ws, *argv), expected)


def test_a_file_given_as_the_workspace_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    afile = tmp_path / "afile"
    afile.write_text("x", encoding="utf-8")
    for args in (["init"], ["characters"], ["init", "-w", str(afile / "sub")]):
        capsys.readouterr()
        code = run(["-w", str(afile), *args])
        err = capsys.readouterr().err
        assert code == 2 and err.count("\n") == 1 and str(afile) in err, err


def test_a_folder_where_the_memory_file_should_be_is_named(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    add_character(ws, "Mira")
    (ws / "user" / "files" / "Mira-memories.md").mkdir()
    for args in (["memories", "show", "Mira"], ["pin", "Mira", "A fact."], ["status", "Mira"]):
        one_line_error(cli(capsys, ws, *args), "Mira-memories.md is a folder")


# -- a memory file saved in another encoding -------------------------------------------------


def test_history_diff_undo_and_clear_work_on_a_file_in_another_encoding(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    add_character(ws, "Mira")
    assert cli(capsys, ws, "pin", "Mira", "Mira owns a compass.")[0] == 0
    assert cli(capsys, ws, "pin", "Mira", "Mira drinks café au lait.")[0] == 0
    memory_file = ws / "user" / "files" / "Mira-memories.md"
    good = memory_file.read_bytes()
    memory_file.write_bytes(good.decode("utf-8").encode("cp1252"))  # an editor's "ANSI"

    one_line_error(cli(capsys, ws, "memories", "show", "Mira"), "not UTF-8", "undo --to")
    code, out, _ = cli(capsys, ws, "history", "Mira")
    assert code == 0 and "v3" in out and "outside edit" in out
    code, out, _ = cli(capsys, ws, "diff", "Mira", "2")
    assert code == 0 and "+- Mira drinks caf\ufffd au lait." in out
    code, out, _ = cli(capsys, ws, "undo", "Mira", "--to", "2")
    assert code == 0 and "restored v2" in out
    assert memory_file.read_bytes() == good
    code, out, _ = cli(capsys, ws, "memories", "show", "Mira")
    assert code == 0 and "café au lait" in out

    memory_file.write_bytes(good.decode("utf-8").encode("cp1252"))
    code, out, _ = cli(capsys, ws, "clear", "Mira", "--yes")
    assert code == 0 and "Mira-memories.md" in out and not memory_file.exists()
    assert cli(capsys, ws, "undo", "Mira")[0] == 0  # the cleared bytes are in the history
    assert memory_file.read_bytes() == good.decode("utf-8").encode("cp1252")


# -- one damaged chat among good ones --------------------------------------------------------


def test_one_malformed_chat_is_named_and_the_others_still_listed(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    add_character(ws, "Mira", chats=3)
    good, broken, other = sorted((ws / "chats" / "card").iterdir())
    broken.write_text(broken.read_text(encoding="utf-8") + '\n{"name": oops}', encoding="utf-8")

    code, out, err = cli(capsys, ws, "chats", "Mira")
    assert code == 0
    assert f"{good.stem}\t4 messages" in out and f"{other.stem}\t4 messages" in out
    assert broken.stem not in out and f"skipped {broken.stem}: {broken.name}:6" in err

    code, out, err = cli(capsys, ws, "status", "Mira")
    assert code == 0 and out.count("last extracted: none of 4") == 2
    assert broken.stem in out and "cannot be read" in err and "not valid JSON" in err
    one_line_error(cli(capsys, ws, "status", "Mira", "--chat", broken.stem), "not valid JSON")


# -- errors that say what is wrong ------------------------------------------------------------


def test_a_lorebook_whose_entries_are_a_list_is_called_a_lorebook(
    ws: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    book = tmp_path / "Eldoria.json"
    book.write_text(json.dumps({"name": "Eldoria", "entries": [{"keys": ["x"]}]}), "utf-8")
    one_line_error(cli(capsys, ws, "import", str(book)), "lorebook in an unsupported shape")


def test_a_card_and_a_chat_nothing_identifies_say_what_to_pass(
    ws: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    card = tmp_path / "Mira.json"
    card.write_text(json.dumps({"name": "Mira", "description": "A captain."}), "utf-8")
    chat = tmp_path / "Forest walk.jsonl"
    header = {"user_name": "unused", "character_name": "unused", "chat_metadata": {}}
    messages = [{**m, "name": "Lyra" if not m["is_user"] else "Alex"} for m in alternating(4)]
    chat.write_text("\n".join(line(m) for m in [header, *messages]), encoding="utf-8")

    one_line_error(cli(capsys, ws, "import", str(card), str(chat)), "--character")
    code, out, _ = cli(capsys, ws, "import", str(card), str(chat), "--character", "Mira")
    assert code == 0 and "owner: Mira" in out


@pytest.mark.parametrize("chats", [0, 1])
def test_an_unknown_chat_is_the_same_error_for_every_command(
    ws: Path, capsys: pytest.CaptureFixture[str], chats: int
) -> None:
    add_character(ws, "Mira", chats=chats)
    errors = set()
    for command in (["memories", "show"], ["status"], ["history"], ["pin"]):
        extra = ["A fact."] if command == ["pin"] else []
        result = cli(capsys, ws, *command, "Mira", *extra, "--chat", "nosuch")
        one_line_error(result, "nosuch" if chats else "no chats yet")
        errors.add(result[2])
    assert len(errors) == 1
    one_line_error(cli(capsys, ws, "memories", "show", "Mira", "--chat", "../../etc/passwd"))


# -- a damaged state database ----------------------------------------------------------------


def test_a_damaged_state_database_is_named_by_every_command_and_repair_rebuilds_it(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    add_character(ws, "Mira", chats=1)
    assert cli(capsys, ws, "pin", "Mira", "Mira owns a compass.")[0] == 0
    database = ws / "charmemory" / "state.db"
    for suffix in ("-wal", "-shm"):
        database.with_name(database.name + suffix).unlink(missing_ok=True)
    database.write_bytes(b"\x00garbage" * 512)

    for args in (["status", "Mira"], ["memories", "show", "Mira"], ["log"], ["settings", "show"]):
        one_line_error(cli(capsys, ws, *args), f"{database} is damaged", "charmemory repair")

    code, out, _ = cli(capsys, ws, "repair")
    assert code == 0 and "rebuilt the state database (file is not a database)" in out
    [copy] = database.parent.glob("state.db.damaged-*")
    assert copy.read_bytes() == b"\x00garbage" * 512 and str(copy) in out
    assert "1 memory file recorded as it is now" in out
    code, out, _ = cli(capsys, ws, "memories", "show", "Mira")
    assert code == 0 and "Mira owns a compass." in out
    code, out, _ = cli(capsys, ws, "repair")
    assert code == 0 and "is sound; nothing rebuilt" in out


def test_a_page_damaged_under_a_running_command_is_one_line(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    add_character(ws, "Mira")
    assert cli(capsys, ws, "pin", "Mira", "Mira owns a compass.")[0] == 0
    database = ws / "charmemory" / "state.db"
    conn = sqlite3.connect(database)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    [root] = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = 'activity'").fetchone()
    [page_size] = conn.execute("PRAGMA page_size").fetchone()
    conn.close()
    with database.open("r+b") as handle:
        handle.seek((root - 1) * page_size)
        handle.write(b"\xde\xad" * (page_size // 2))
    one_line_error(cli(capsys, ws, "log"), f"{database} is damaged", "malformed")


def test_what_the_filesystem_raises_mid_command_is_one_line(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    add_character(ws, "Mira")
    files = ws / "user" / "files"
    files.rmdir()
    files.write_text("a file where the memory folder should be", encoding="utf-8")
    one_line_error(cli(capsys, ws, "pin", "Mira", "A fact."), "user/files", "Not a directory")


def test_an_error_line_never_shows_a_key(
    ws: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    env_key = "q1w2e3r4t5y6u7i8o9p0"
    monkeypatch.setenv("CHARMEMORY_API_KEY", env_key)
    for name in (env_key, "sk-live-0123456789abcdefgh", f"Bearer {env_key}x"):
        code, _, err = cli(capsys, ws, "chats", name)
        one_line_error((code, "", err), "unknown character", "[redacted]")
        assert env_key not in err and "0123456789abcdefgh" not in err
