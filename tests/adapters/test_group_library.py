"""Groups in the library: found, written back, their chats reached by their members."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from charmemory.adapters.library import Library
from charmemory.adapters.workspace import Workspace
from charmemory.errors import ConflictError, NotFoundError
from charmemory.formats.chat import Chat, ChatHeader, parse_chat
from charmemory.formats.group import Group, GroupJoin, render_group

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
GROUP_FILE = FIXTURES / "groups" / "1764533703221.json"
GROUP_CHAT = FIXTURES / "chats" / "2026-11-30@20h15m03s221ms.jsonl"
CHAT_ID = "2026-11-30@20h15m03s221ms"


def write_card(ws: Workspace, stem: str, name: str) -> None:
    card = {"spec": "chara_card_v2", "spec_version": "2.0", "data": {"name": name}}
    ws.characters_dir.mkdir(parents=True, exist_ok=True)
    (ws.characters_dir / f"{stem}.json").write_text(json.dumps(card), encoding="utf-8")


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    ws = Workspace.create(tmp_path / "ws")
    write_card(ws, "default_Seraphina", "Seraphina")
    write_card(ws, "Mira", "Mira")
    return ws


def st_group(ws: Workspace) -> None:
    """The fixture group as SillyTavern lays it out, its members' cards as .json files."""
    text = GROUP_FILE.read_text(encoding="utf-8").replace(".png", ".json")
    ws.groups_dir.mkdir(parents=True, exist_ok=True)
    (ws.groups_dir / GROUP_FILE.name).write_text(text, encoding="utf-8")
    ws.group_chats_dir.mkdir(parents=True, exist_ok=True)
    shutil.copy(GROUP_CHAT, ws.group_chats_dir / GROUP_CHAT.name)


def test_groups_are_found_by_id_or_name(ws: Workspace) -> None:
    st_group(ws)
    library = Library(ws)
    assert [g.group.name for g in library.groups()] == ["The thornwall crossing"]
    assert library.group("1764533703221").group.id == "1764533703221"
    assert library.group("the THORNWALL crossing").path.name == "1764533703221.json"
    with pytest.raises(NotFoundError, match="unknown group 'Crew'; known: 'The thornwall"):
        library.group("Crew")


def test_members_are_cards_by_file_name(ws: Workspace) -> None:
    st_group(ws)
    library = Library(ws)
    group = library.group("The thornwall crossing").group
    assert [c.name if c else None for c in library.group_members(group)] == ["Seraphina", "Mira"]
    group.set("members", [*group.members, "Gone.png"])
    assert library.group_members(group)[-1] is None


def test_a_member_reaches_a_group_chat_by_its_id(ws: Workspace) -> None:
    st_group(ws)
    library = Library(ws)
    mira = library.character("Mira")
    ref = library.chat(mira, CHAT_ID)
    assert ref.path == ws.group_chats_dir / GROUP_CHAT.name
    assert ref.group is not None and ref.group.members == ("Seraphina", "Mira")
    assert ref.group.joined is None
    loaded = library.load_chat(ref)
    assert [m.name for m in loaded.chat.messages][:2] == ["Seraphina", "Mira"]
    # The latest chat stays a chat of the character's own.
    assert library.latest_chat(mira) is None


def test_a_non_member_does_not_reach_the_group_chat(ws: Workspace) -> None:
    st_group(ws)
    write_card(ws, "Abel", "Abel")
    library = Library(ws)
    with pytest.raises(NotFoundError):
        library.chat(library.character("Abel"), CHAT_ID)


def test_a_join_recorded_in_the_group_reaches_the_member_s_ref(ws: Workspace) -> None:
    st_group(ws)
    library = Library(ws)
    loaded = library.group("The thornwall crossing")
    loaded.group.record_join(CHAT_ID, "Mira.json", GroupJoin(2, "fp", "date"))
    library.save_group(loaded, loaded.group)
    ref = library.chat(library.character("Mira"), CHAT_ID)
    assert ref.group is not None and ref.group.joined == GroupJoin(2, "fp", "date")


def test_saving_a_group_changed_on_disk_is_refused(ws: Workspace) -> None:
    st_group(ws)
    library = Library(ws)
    loaded = library.group("The thornwall crossing")
    (ws.groups_dir / GROUP_FILE.name).write_text(
        render_group(Group.new("1764533703221", "Renamed", [], "c")), encoding="utf-8"
    )
    loaded.group.set("name", "Mine")
    with pytest.raises(ConflictError):
        library.save_group(loaded, loaded.group)


def test_a_new_group_and_its_first_chat(ws: Workspace) -> None:
    library = Library(ws)
    created = library.create_group(
        Group.new("17", "Crew", ["Mira.json"], "2026-01-01@10h00m00s000ms")
    )
    assert (ws.groups_dir / "17.json").read_text(encoding="utf-8") == render_group(created.group)
    chat = Chat(
        ChatHeader({"chat_metadata": {}, "user_name": "unused", "character_name": "unused"})
    )
    mira = library.character("Mira")
    made = library.create_group_chat(created, mira, "2026-01-01@10h00m00s000ms", chat)
    assert made.ref.path == ws.group_chats_dir / "2026-01-01@10h00m00s000ms.jsonl"
    with pytest.raises(ConflictError):
        library.create_group_chat(created, mira, "2026-01-01@10h00m00s000ms", chat)
    with pytest.raises(ConflictError):
        library.create_group(Group.new("17", "Crew again", [], "x"))


def test_importing_a_group_and_its_chat(ws: Workspace, tmp_path: Path) -> None:
    library = Library(ws)
    done = library.import_file(GROUP_FILE)
    assert done.kind == "group" and done.target == ws.groups_dir / "1764533703221.json"
    assert "not here yet: default_Seraphina.png, Mira.png" in done.note
    assert done.target.read_bytes() == GROUP_FILE.read_bytes()
    chat = library.import_file(GROUP_CHAT)  # the group lists it: no option needed
    assert chat.kind == "group chat" and chat.target == ws.group_chats_dir / GROUP_CHAT.name
    assert chat.note == "group: The thornwall crossing"


def test_importing_a_group_chat_into_a_group_lists_it_there(ws: Workspace, tmp_path: Path) -> None:
    library = Library(ws)
    library.create_group(Group.new("17", "Crew", ["Mira.json"], "other"))
    renamed = tmp_path / "campfire.jsonl"
    shutil.copy(GROUP_CHAT, renamed)
    done = library.import_file(renamed, group="Crew")
    assert done.kind == "group chat" and done.target == ws.group_chats_dir / "campfire.jsonl"
    assert library.group("Crew").group.chats == ("other", "campfire")
    ref = library.chat(library.character("Mira"), "campfire")
    assert len(library.load_chat(ref).chat.messages) == len(
        parse_chat(GROUP_CHAT.read_text(encoding="utf-8")).messages
    )
