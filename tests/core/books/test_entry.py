"""Memory entries in STMB's shapes: written as STMB writes them, read from books STMB wrote."""

from pathlib import Path

import pytest

from charmemory.core.books.answer import SceneAnswer
from charmemory.core.books.entry import (
    EntrySettings,
    Link,
    MemoryDraft,
    entry_order,
    is_memory,
    link_of,
    memories,
    memory_entry,
    scene_of,
    tier_of,
)
from charmemory.core.books.layout import (
    Member,
    SceneWriting,
    group_targets,
    participants_of,
    place_scene,
    single_book,
)
from charmemory.core.books.scenes import SceneRange, compile_scene
from charmemory.core.books.titles import TitleValues
from charmemory.errors import ConfigError
from charmemory.formats.chat import Chat, ChatHeader, Message
from charmemory.formats.lorebook import Lorebook, parse_lorebook

DATA = Path(__file__).parent / "data"
CHAT_ID = "Mira - 2026-02-15@10h00m00s123ms"


def golden(name: str) -> str:
    return (DATA / name).read_text(encoding="utf-8")


def test_a_single_book_memory_is_the_entry_stmb_writes() -> None:
    book = Lorebook()
    draft = MemoryDraft(
        "001 - Dawn at the Docks",
        "- Mira met Alex at the docks.",
        ("docks", "dawn"),
        SceneRange(10, 25),
        CHAT_ID,
    )
    book.put(memory_entry(0, draft, EntrySettings()))
    assert book.render() == golden("stmb_single_book.json")


def group_chat() -> Chat:
    return Chat(
        ChatHeader({}),
        [
            Message.new(name="Alex", mes="Evening.", is_user=True, send_date="x"),
            Message(
                {"name": "Alice", "is_user": False, "mes": "Hi.", "original_avatar": "Alice.png"}
            ),
            Message({"name": "Bob", "is_user": False, "mes": "Yo.", "original_avatar": "Bob.png"}),
        ],
    )


def test_a_group_memory_is_a_canonical_entry_and_linked_copies_as_stmb_writes_them() -> None:
    scene = compile_scene(
        group_chat(),
        SceneRange(0, 2),
        chat_id="2026-02-15@10h00m00s",
        character="Tavern",
        user="Alex",
    )
    members = [Member("Alice.png", "Alice"), Member("Bob.png", "Bob"), Member("Clara.png", "Clara")]
    participants = participants_of(scene, members)
    assert [m.name for m in participants] == ["Alice", "Bob"]
    books = {"Tavern Group": Lorebook(), "Alice Book": Lorebook(), "Bob Book": Lorebook()}
    targets = group_targets(
        "Tavern Group",
        participants,
        {"Alice.png": "Alice Book", "Bob.png": "Bob Book", "Clara.png": "Clara Book"},
        group_label="The Tavern",
    )
    writing = SceneWriting(
        scene,
        SceneAnswer("Evening Drinks", "- Alice and Bob greeted Alex.", ("tavern", "drinks")),
        "[000] - {{title}}",
        EntrySettings(),
        TitleValues(),
    )
    placed = place_scene(books, targets, writing)
    assert [(p.book, p.uid, p.canonical) for p in placed] == [
        ("Tavern Group", 0, True),
        ("Alice Book", 0, False),
        ("Bob Book", 0, False),
    ]
    assert {p.inclusion_group for p in placed} == {"The-Tavern-Memory-001"}
    assert books["Tavern Group"].render() == golden("stmb_group_canonical.json")
    assert books["Alice Book"].render() == golden("stmb_group_copy.json")


def test_members_sharing_a_book_get_one_copy_there() -> None:
    alice, bob = Member("Alice.png", "Alice"), Member("Bob.png", "Bob")
    targets = group_targets(
        "Group", [alice, bob], {"Alice.png": "Shared", "Bob.png": "Shared"}, group_label="G"
    )
    [copy] = targets.copies
    assert (copy.book, copy.owners, copy.filter_names) == (
        "Shared",
        ("Alice", "Bob"),
        ("Alice", "Bob"),
    )


@pytest.mark.parametrize(
    ("settings", "constant", "vectorized"),
    [
        (EntrySettings(mode="link"), False, True),
        (EntrySettings(mode="blue"), True, False),
        (EntrySettings(mode="green"), False, False),
    ],
)
def test_the_activation_mode_sets_constant_and_vectorized(
    settings: EntrySettings, constant: bool, vectorized: bool
) -> None:
    raw = memory_entry(0, MemoryDraft("004 - T", "c", ()), settings).to_dict()
    assert (raw["constant"], raw["vectorized"]) == (constant, vectorized)


def test_order_follows_the_order_mode_within_its_range() -> None:
    assert entry_order(EntrySettings(), 7) == 7
    assert entry_order(EntrySettings(order_mode="manual", order_value=250), 7) == 250
    assert entry_order(EntrySettings(order_mode="reverse", reverse_start=9999), 7) == 9993
    assert entry_order(EntrySettings(order_mode="reverse", reverse_start=100), 500) == 0
    assert entry_order(EntrySettings(), 12000) == 9999


def test_an_outlet_keeps_its_name_and_other_positions_drop_the_field() -> None:
    outlet = EntrySettings(position=7, outlet_name="memories", delay_until_recursion=2)
    raw = memory_entry(0, MemoryDraft("001 - T", "c", ()), outlet).to_dict()
    assert (raw["position"], raw["outletName"], raw["delayUntilRecursion"]) == (7, "memories", 2)
    keys = list(raw)
    assert keys.index("outletName") == keys.index("depth") + 1  # its place in the template
    assert "outletName" not in memory_entry(0, MemoryDraft("1", "c", ()), EntrySettings()).to_dict()


def test_entry_settings_refuse_what_stmb_refuses() -> None:
    with pytest.raises(ConfigError, match="@depth"):
        EntrySettings(position=4)
    with pytest.raises(ConfigError, match="entry mode"):
        EntrySettings(mode="red")
    with pytest.raises(ConfigError, match="reverse start"):
        EntrySettings(reverse_start=50)
    assert EntrySettings.from_dict(EntrySettings(mode="blue").to_dict()) == EntrySettings(
        mode="blue"
    )


def test_a_book_stmb_wrote_round_trips_and_reads_as_memories() -> None:
    text = golden("stmb_written_book.json")
    book = parse_lorebook(text)
    assert book.render() == text
    found = memories(list(book.entries.values()))
    assert [entry.uid for entry in found] == [3, 8, 5, 9]  # by number, then uid
    assert [tier_of(entry) for entry in found] == [0, 1, 0, 0]
    assert scene_of(book.entries[5]) == SceneRange(12, 30)
    assert not is_memory(book.entries[1]) and link_of(book.entries[3]) is None


def test_adding_a_memory_to_a_book_stmb_wrote_continues_its_numbers_and_keeps_the_rest() -> None:
    text = golden("stmb_written_book.json")
    book = parse_lorebook(text)
    chat = Chat(
        ChatHeader({}),
        [
            Message.new(name="Mira", mes=f"line {i}", is_user=False, send_date="x")
            for i in range(45)
        ],
    )
    scene = compile_scene(chat, SceneRange(41, 44), chat_id=CHAT_ID, character="Mira", user="Alex")
    writing = SceneWriting(
        scene,
        SceneAnswer("Landfall", "- They landed.", ("land",)),
        "[000] - {{title}}",
        EntrySettings(),
        TitleValues(),
    )
    [placed] = place_scene({"Mira": book}, single_book("Mira"), writing)
    assert (placed.uid, placed.title) == (0, "004 - Landfall")
    again = parse_lorebook(book.render())
    before = parse_lorebook(text)
    for uid, entry in before.entries.items():
        assert again.entries[uid].to_dict() == entry.to_dict()


def test_a_link_reads_back_from_the_entry_it_wrote() -> None:
    link = Link("Chat-Memory-012", "Group", 4, False, {"STMB_narratorOwnerIds": ["m1"]})
    entry = memory_entry(2, MemoryDraft("012 - T", "c", (), link=link), EntrySettings())
    assert link_of(entry) == link and link.memory_number == 12
