"""Whose chat a file is: each clue alone, the order they win in, and every refusal."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import pytest

from charmemory.core.chat_owner import ChatOwner, resolve_chat_owner
from charmemory.errors import ChatOwnerError, NotFoundError
from charmemory.formats.chat import Chat, parse_chat
from tests.support.sillytavern_samples import sillytavern_sample

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "chats"
REAL_CHAT = "Seraphina - 2026-11-28@19h02m11s482ms.jsonl"
PRE_115 = "Seraphina - 2024-07-05@14h20m05s.jsonl"
RENAMED = "The thornwall crossing.jsonl"
GROUP = "2026-11-30@20h15m03s221ms.jsonl"

DOWNLOADS = PurePosixPath("/home/wren/Downloads")
ST_DATA = PurePosixPath("/home/wren/SillyTavern/data/default-user")


@dataclass(frozen=True)
class Known:
    name: str
    stem: str


SERAPHINA = Known("Seraphina", "default_Seraphina")
MIRA = Known("Mira", "Mira")
KNOWN = [SERAPHINA, MIRA]


def fixture_chat(name: str) -> Chat:
    return parse_chat((FIXTURES / name).read_text(encoding="utf-8"), source=name)


@pytest.fixture(scope="module")
def real_chat() -> Chat:
    return parse_chat(sillytavern_sample(REAL_CHAT).read_text(encoding="utf-8"))


def chat_of(header: dict[str, object] | None, *messages: tuple[str, bool]) -> Chat:
    """A chat with the given header and (name, is_user) messages."""
    lines = [] if header is None else [json.dumps(header)]
    lines += [
        json.dumps({"name": name, "is_user": is_user, "mes": "..."}) for name, is_user in messages
    ]
    return parse_chat("\n".join(lines))


UNUSED = {"chat_metadata": {}, "user_name": "unused", "character_name": "unused"}


def refusal(chat: Chat, path: PurePosixPath | None, known: list[Known] = KNOWN) -> str:
    with pytest.raises(ChatOwnerError) as raised:
        resolve_chat_owner(chat, known, path=path)
    message = str(raised.value)
    assert "\n" not in message
    return message


# --- the real SillyTavern 1.15 chat -------------------------------------------------


def test_a_1_15_chat_outside_sillytavern_belongs_to_the_card_its_file_name_names(
    real_chat: Chat,
) -> None:
    owner = resolve_chat_owner(real_chat, KNOWN, path=DOWNLOADS / REAL_CHAT)

    assert owner == ChatOwner(SERAPHINA, "file name")
    assert owner.describe() == "Seraphina (from the file name)"


def test_a_1_15_chat_in_its_sillytavern_folder_belongs_to_that_folder_s_card(
    real_chat: Chat,
) -> None:
    owner = resolve_chat_owner(
        real_chat, KNOWN, path=ST_DATA / "chats" / "default_Seraphina" / REAL_CHAT
    )

    assert owner == ChatOwner(SERAPHINA, "folder")
    assert owner.describe() == "Seraphina (from its chats folder)"


def test_the_path_may_be_given_as_text(real_chat: Chat) -> None:
    path = f"{ST_DATA}/chats/default_Seraphina/{REAL_CHAT}"

    assert resolve_chat_owner(real_chat, KNOWN, path=path).source == "folder"


def test_without_a_path_the_messages_tell(real_chat: Chat) -> None:
    assert resolve_chat_owner(real_chat, KNOWN) == ChatOwner(SERAPHINA, "messages")


# --- precedence -------------------------------------------------------------------------


def test_a_name_given_by_the_person_always_wins(real_chat: Chat) -> None:
    path = ST_DATA / "chats" / "default_Seraphina" / REAL_CHAT

    owner = resolve_chat_owner(real_chat, KNOWN, path=path, explicit="mira")

    assert owner == ChatOwner(MIRA, "given")
    assert owner.describe() == "Mira (as given)"


def test_a_given_name_also_takes_a_group_chat() -> None:
    owner = resolve_chat_owner(
        fixture_chat(GROUP), KNOWN, path=ST_DATA / "group chats" / GROUP, explicit="Seraphina"
    )

    assert owner == ChatOwner(SERAPHINA, "given")


def test_a_given_name_that_matches_no_card_is_an_unknown_character(real_chat: Chat) -> None:
    with pytest.raises(NotFoundError, match="unknown character 'Sera'; known: Seraphina, Mira"):
        resolve_chat_owner(real_chat, KNOWN, path=DOWNLOADS / REAL_CHAT, explicit="Sera")


def test_the_folder_wins_over_the_file_name_and_the_messages(real_chat: Chat) -> None:
    path = ST_DATA / "chats" / "Mira" / REAL_CHAT

    assert resolve_chat_owner(real_chat, KNOWN, path=path) == ChatOwner(MIRA, "folder")


def test_a_folder_of_no_known_card_leaves_it_to_the_file(real_chat: Chat) -> None:
    path = ST_DATA / "chats" / "Seraphina_old_export" / REAL_CHAT

    assert resolve_chat_owner(real_chat, KNOWN, path=path) == ChatOwner(SERAPHINA, "file name")


@pytest.mark.parametrize(
    "path",
    [ST_DATA / "chats" / REAL_CHAT, PurePosixPath("/tmp/default_Seraphina") / REAL_CHAT],
    ids=["loose in chats", "not under chats"],
)
def test_only_a_folder_inside_chats_counts_as_a_card_folder(path: PurePosixPath) -> None:
    chat = chat_of(UNUSED, ("Wren", True))
    renamed = path.with_name("notes.jsonl")

    message = refusal(chat, renamed)

    assert message.startswith("notes.jsonl: cannot tell whose chat this is")


def test_a_renamed_file_belongs_to_whoever_speaks_in_it() -> None:
    owner = resolve_chat_owner(fixture_chat(RENAMED), KNOWN, path=DOWNLOADS / RENAMED)

    assert owner == ChatOwner(SERAPHINA, "messages")
    assert owner.describe() == "Seraphina (from its messages)"


def test_narrator_and_system_lines_are_not_speakers() -> None:
    # The renamed chat has a /sys narrator line named "System".
    known = [*KNOWN, Known("System", "System")]

    owner = resolve_chat_owner(fixture_chat(RENAMED), known, path=DOWNLOADS / RENAMED)

    assert owner.character is SERAPHINA


def test_message_names_of_no_known_card_do_not_contradict_the_file_name() -> None:
    chat = chat_of(UNUSED, ("Sera", False), ("Wren", True))

    owner = resolve_chat_owner(
        chat, KNOWN, path=DOWNLOADS / "Seraphina - 2024-07-05@14h20m05s.jsonl"
    )

    assert owner == ChatOwner(SERAPHINA, "file name")


def test_a_file_name_agreeing_with_one_of_several_speakers_decides() -> None:
    chat = chat_of(UNUSED, ("Seraphina", False), ("Mira", False))

    owner = resolve_chat_owner(chat, KNOWN, path=DOWNLOADS / "Mira - 2024-07-05@14h20m05s.jsonl")

    assert owner == ChatOwner(MIRA, "file name")


def test_a_pre_1_15_chat_also_names_its_character_in_the_header() -> None:
    chat = fixture_chat(PRE_115)

    assert resolve_chat_owner(chat, KNOWN, path=DOWNLOADS / PRE_115).source == "file name"
    assert resolve_chat_owner(chat, KNOWN, path=DOWNLOADS / "x.jsonl").source == "messages"


def test_the_header_decides_when_nothing_else_names_anyone() -> None:
    header = {"user_name": "Wren", "character_name": "Mira", "create_date": "2024-07-05@14h20m05s"}
    chat = chat_of(header, ("Wren", True))

    owner = resolve_chat_owner(chat, KNOWN, path=DOWNLOADS / "notes.jsonl")

    assert owner == ChatOwner(MIRA, "header")
    assert owner.describe() == "Mira (from its header)"


@pytest.mark.parametrize(
    "file_name",
    [
        "Seraphina - 2023-6-19 @14h 20m 05s 123ms imported.jsonl",
        "seraphina - 2023-6-19@14h20m05s.jsonl",
        "default_Seraphina - 2026-01-02@03h04m05s006ms.jsonl",
    ],
)
def test_imported_and_older_file_names_name_their_character(file_name: str) -> None:
    chat = chat_of(UNUSED, ("Wren", True))

    assert resolve_chat_owner(chat, KNOWN, path=DOWNLOADS / file_name) == ChatOwner(
        SERAPHINA, "file name"
    )


def test_a_file_name_spelled_without_the_characters_file_names_drop() -> None:
    who = Known('Dr. "Who"', "doctor")
    chat = chat_of(UNUSED, ("Wren", True))

    owner = resolve_chat_owner(chat, [who], path=DOWNLOADS / "Dr. Who - 2024-07-05@14h20m05s.jsonl")

    assert owner.character is who


# --- branches and checkpoints ----------------------------------------------------------


@pytest.mark.parametrize(
    "file_name",
    [
        "Branch #7 - 2026-12-02@09h00m00s000ms.jsonl",
        "Before the thornwall - 2026-12-02@09h00m00s000ms.jsonl",
    ],
    ids=["branch", "named checkpoint"],
)
def test_a_branch_belongs_to_the_character_of_the_chat_it_branched_from(file_name: str) -> None:
    header = {**UNUSED, "chat_metadata": {"main_chat": "Mira - 2026-11-28@19h02m11s482ms"}}
    chat = chat_of(header, ("Wren", True))

    owner = resolve_chat_owner(chat, KNOWN, path=DOWNLOADS / file_name)

    assert owner == ChatOwner(MIRA, "branch origin")
    assert owner.describe() == "Mira (from the name of the chat it branched from)"


def test_a_branch_label_alone_names_no_one() -> None:
    known = [*KNOWN, Known("Branch #7", "branch")]
    chat = chat_of(UNUSED, ("Seraphina", False))

    owner = resolve_chat_owner(
        chat, known, path=DOWNLOADS / "Branch #7 - 2026-12-02@09h00m00s.jsonl"
    )

    assert owner == ChatOwner(SERAPHINA, "messages")


def test_a_branch_of_a_group_chat_is_a_group_chat() -> None:
    header = {**UNUSED, "chat_metadata": {"main_chat": "2026-11-30@20h15m03s221ms"}}
    chat = chat_of(header, ("Seraphina", False))

    message = refusal(chat, DOWNLOADS / "Branch #2 - 2026-12-02@09h00m00s000ms.jsonl")

    assert "it was branched from the group chat '2026-11-30@20h15m03s221ms'" in message


# --- refusals ----------------------------------------------------------------------------


def test_a_file_name_and_messages_naming_different_cards_are_a_conflict(real_chat: Chat) -> None:
    path = DOWNLOADS / "Mira - 2026-11-28@19h02m11s482ms.jsonl"

    assert refusal(real_chat, path) == (
        "Mira - 2026-11-28@19h02m11s482ms.jsonl: the clues to whose chat this is disagree: "
        "its file name says 'Mira'; its messages are by 'Seraphina'; pass --character NAME"
    )


def test_a_header_naming_another_card_is_a_conflict() -> None:
    header = {"user_name": "Wren", "character_name": "Mira", "create_date": "2024-07-05@14h20m05s"}
    chat = chat_of(header, ("Seraphina", False))

    message = refusal(chat, DOWNLOADS / "x.jsonl")

    assert message.endswith(
        "its messages are by 'Seraphina'; its header says 'Mira'; pass --character NAME"
    )


def test_nothing_naming_a_known_card_says_what_was_found_and_what_to_pass() -> None:
    chat = chat_of(UNUSED, ("Sera", False), ("Wren", True))

    assert refusal(chat, ST_DATA / "chats" / "sera_card" / "Forest walk.jsonl") == (
        "Forest walk.jsonl: cannot tell whose chat this is (its folder is 'sera_card'; its file "
        "name says 'Forest walk'; its messages are by 'Sera'), and none of that names a "
        "character here; pass --character NAME (known: Seraphina, Mira)"
    )


def test_a_chat_with_no_clue_at_all() -> None:
    message = refusal(chat_of(UNUSED), None, known=[])

    assert message == (
        "cannot tell whose chat this is (nothing names its character), and none of that names "
        "a character here; pass --character NAME (known: none yet (charmemory import CARD))"
    )


def test_the_unused_placeholder_is_never_taken_for_a_name() -> None:
    known = [*KNOWN, Known("unused", "unused")]

    message = refusal(chat_of(UNUSED, ("Wren", True)), DOWNLOADS / "notes.jsonl", known)

    assert "cannot tell whose chat this is (its file name says 'notes')" in message


@pytest.mark.parametrize(
    ("path", "reason"),
    [
        (ST_DATA / "group chats" / GROUP, "it is in a 'group chats' folder"),
        (DOWNLOADS / GROUP, "its file name is a bare date, as group chats' are"),
    ],
)
def test_a_group_chat_is_refused_with_what_to_pass(path: PurePosixPath, reason: str) -> None:
    assert refusal(fixture_chat(GROUP), path) == (
        f"{GROUP}: this is a SillyTavern group chat ({reason}); a group chat has no single "
        "owner: pass --group GROUP to import it into a group, or --character NAME to import "
        "it as that character's chat"
    )


def test_a_group_chat_without_a_header_line_is_refused() -> None:
    text = (FIXTURES / GROUP).read_text(encoding="utf-8").split("\n", 1)[1]

    message = refusal(parse_chat(text), DOWNLOADS / "campfire.jsonl")

    assert "(it starts without a header line, as older group chats do)" in message


def test_a_renamed_group_chat_is_told_by_its_several_speakers() -> None:
    assert refusal(fixture_chat(GROUP), DOWNLOADS / "Campfire.jsonl") == (
        "Campfire.jsonl: its messages are by several characters ('Seraphina', 'Mira'), as in "
        "a group chat; a group chat has no single owner: pass --group GROUP to import it into "
        "a group, or --character NAME to import it as that character's chat"
    )


def test_a_group_chat_in_a_card_folder_is_that_card_s_chat() -> None:
    path = ST_DATA / "chats" / "default_Seraphina" / GROUP

    assert resolve_chat_owner(fixture_chat(GROUP), KNOWN, path=path) == ChatOwner(
        SERAPHINA, "folder"
    )


def test_one_name_of_two_cards_asks_for_the_card_file_name() -> None:
    twin = Known("Seraphina", "Seraphina_v2")
    known = [SERAPHINA, twin]

    message = refusal(fixture_chat(RENAMED), DOWNLOADS / RENAMED, known)

    assert message == (
        "The thornwall crossing.jsonl: its messages are by 'Seraphina', which could be any of "
        "several characters (default_Seraphina, Seraphina_v2); pass --character with the card "
        "file name"
    )
    folder = ST_DATA / "chats" / "Seraphina_v2" / RENAMED
    assert resolve_chat_owner(fixture_chat(RENAMED), known, path=folder).character is twin


def test_many_speakers_are_cut_short_in_the_message() -> None:
    names = [f"Member {i}" for i in range(8)]
    chat = chat_of(UNUSED, *((name, False) for name in names))
    known = [Known(name, name.replace(" ", "_")) for name in names]

    message = refusal(chat, DOWNLOADS / "Guild hall.jsonl", known)

    assert "('Member 0', 'Member 1', 'Member 2', 'Member 3', 'Member 4' and 3 more)" in message
