"""Chats as SillyTavern 1.15+ writes them: whose they are, which is the latest, who is the user."""

import json
import shutil
from pathlib import Path

import pytest

from charmemory.cli.application import run
from tests.support.sillytavern_samples import sillytavern_sample

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "chats"
SERAPHINA_CHAT = "Seraphina - 2026-11-28@19h02m11s482ms.jsonl"


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


def test_a_sillytavern_1_15_chat_is_filed_under_its_card(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    card, chat = sillytavern_sample("default_Seraphina.png"), sillytavern_sample(SERAPHINA_CHAT)
    code, out, err = cli(capsys, ws, "import", str(card), str(chat))
    assert code == 0, err
    assert "owner: Seraphina (from the file name)" in out
    assert (ws / "chats" / "default_Seraphina" / SERAPHINA_CHAT).read_bytes() == chat.read_bytes()
    code, out, _ = cli(capsys, ws, "chats", "Seraphina")
    assert out.startswith(f"{SERAPHINA_CHAT.removesuffix('.jsonl')}\t")


def test_a_chat_inside_a_sillytavern_chats_folder_is_the_folders_card(
    ws: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    card = sillytavern_sample("default_Seraphina.png")
    assert cli(capsys, ws, "import", str(card))[0] == 0
    folder = tmp_path / "data" / "default-user" / "chats" / "default_Seraphina"
    folder.mkdir(parents=True)
    renamed = shutil.copy(sillytavern_sample(SERAPHINA_CHAT), folder / "Forest walk.jsonl")
    code, out, err = cli(capsys, ws, "import", str(renamed))
    assert code == 0, err
    assert "owner: Seraphina (from the chat folder)" in out or "owner: Seraphina" in out


def test_a_chat_that_names_no_known_character_says_what_to_pass(
    ws: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli(capsys, ws, "import", str(sillytavern_sample("default_Seraphina.png")))[0] == 0
    stranger = tmp_path / "Forest walk.jsonl"
    lines = sillytavern_sample(SERAPHINA_CHAT).read_text(encoding="utf-8").split("\n")
    messages = [json.loads(line) for line in lines[1:]]
    for message in messages:
        if not message["is_user"]:
            message["name"] = "Lyra"
    stranger.write_text(
        "\n".join([lines[0], *(json.dumps(m, ensure_ascii=False) for m in messages)]),
        encoding="utf-8",
    )
    code, _, err = cli(capsys, ws, "import", str(stranger))
    assert code == 2 and err.count("\n") == 1
    assert "pass --character NAME" in err and "unused" not in err
    code, out, _ = cli(capsys, ws, "import", str(stranger), "--character", "Seraphina")
    assert code == 0 and "owner: Seraphina (as given)" in out


def test_a_group_chat_is_refused_with_a_reason(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli(capsys, ws, "import", str(sillytavern_sample("default_Seraphina.png")))[0] == 0
    code, _, err = cli(capsys, ws, "import", str(FIXTURES / "2026-11-30@20h15m03s221ms.jsonl"))
    assert code == 2 and "group chat" in err and "--character" in err


def card(name: str) -> dict:
    return {"spec": "chara_card_v2", "spec_version": "2.0", "data": {"name": name}}


def chat_on(day: str, *, user: str = "Alex") -> str:
    header = {"chat_metadata": {}, "user_name": "unused", "character_name": "unused"}
    lines = [header]
    for index in range(4):
        lines.append(
            {
                "name": user if index % 2 == 0 else "Mira",
                "is_user": index % 2 == 0,
                "is_system": False,
                "send_date": f"2026-03-{day}T10:0{index}:00.000Z",
                "mes": f"On day {day}, line {index}.",
                "extra": {},
            }
        )
    return "\n".join(json.dumps(line) for line in lines)


def test_the_latest_chat_is_the_one_whose_last_message_is_newest(
    ws: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "Mira.json").write_text(json.dumps(card("Mira")))
    assert cli(capsys, ws, "import", str(tmp_path / "Mira.json"))[0] == 0
    # Imported newest first, so file times say the opposite of the messages.
    for day in ("07", "02", "05"):
        path = tmp_path / f"Mira - 2026-03-{day}@10h00m00s000ms.jsonl"
        path.write_text(chat_on(day), encoding="utf-8")
        assert cli(capsys, ws, "import", str(path))[0] == 0

    code, out, _ = cli(capsys, ws, "chats", "Mira")
    assert [line.split("\t")[0][7:17] for line in out.splitlines()] == [
        "2026-03-02",
        "2026-03-05",
        "2026-03-07",
    ]
    code, out, _ = cli(capsys, ws, "extract", "Mira", "--dry-run", "--print-prompt")
    assert code == 0
    assert out.startswith("chat: Mira - 2026-03-07@10h00m00s000ms (newest last message;")
    # The header says "unused": the user's name comes from their messages.
    assert "Alex: On day 07, line 0." in out and "unused" not in out
