import pytest

from charmemory.core.chunking import ChunkSettings, chunk_file
from charmemory.core.retrieval import (
    EmbeddingContext,
    MemoryItem,
    Provenance,
    build_query,
    chunk_items_from_memory_file,
    collection_name,
    dedupe_key,
    embedding_text,
    items_from_memory_file,
    topic_of,
)
from charmemory.formats.memory_file import (
    parse_memory_file,
)
from charmemory.formats.memory_ids import (
    list_bullets,
)

FILE = """# Elara's memories
<memory chat="Elara - 2026-02-15@10h00m00s" date="2026-02-15 10:42">
- [Elara, Player — the drowned brother]
- Elara is afraid of deep water.
- Her brother Tomas drowned in the mill pond.
</memory>

<memory chat="Elara - 2026-03-01@09h00m00s" date="2026-03-01 09:30">
- Elara learned to read from the temple scribe.
</memory>
"""


def test_each_bullet_becomes_an_item_labelled_with_its_topic() -> None:
    memory = parse_memory_file(FILE)

    items = items_from_memory_file("char:Elara", "Elara.md", memory)

    assert [item.text for item in items] == [
        "Elara is afraid of deep water.",
        "Her brother Tomas drowned in the mill pond.",
        "Elara learned to read from the temple scribe.",
    ]
    first = items[0]
    assert first.provenance == Provenance(
        file="Elara.md",
        block_index=0,
        bullet_index=1,
        block_chat="Elara - 2026-02-15@10h00m00s",
        block_date="2026-02-15 10:42",
        topic="Elara, Player — the drowned brother",
        block_size=2,
    )
    assert items[2].provenance.topic == ""
    assert items[2].provenance.block_size == 1
    ids = {ref.text: ref.memory_id for ref in list_bullets(memory)}
    assert first.id == ids[first.text]
    assert MemoryItem.from_payload("char:Elara", first.to_payload()) == first


def test_a_topic_tag_is_only_recognised_as_a_whole_bracketed_bullet() -> None:
    assert topic_of("[Kael — debts]") == "Kael — debts"
    assert topic_of("[Kael] owes money") is None


def test_embedded_text_carries_the_chosen_context() -> None:
    item = items_from_memory_file("c", "f.md", parse_memory_file(FILE))[0]
    assert (
        embedding_text(item)
        == "Elara, Player — the drowned brother: Elara is afraid of deep water."
    )
    assert embedding_text(item, EmbeddingContext(topic=False)) == item.text
    assert embedding_text(item, EmbeddingContext(topic=True, date=True, chat=True)) == (
        "2026-02-15 10:42 | Elara - 2026-02-15@10h00m00s | Elara, Player — the drowned brother: "
        "Elara is afraid of deep water."
    )


def test_the_query_is_the_last_messages_newest_first() -> None:
    messages = ["old one", "Do you swim?\n\n\nOften?", "", "   ", "*She looks at the lake.*"]
    assert build_query(messages) == "*She looks at the lake.*\nDo you swim?\nOften?"
    assert build_query(messages, count=1) == "*She looks at the lake.*"
    assert build_query([]) == ""


def test_dedupe_key_ignores_case_spacing_and_punctuation() -> None:
    assert dedupe_key("Elara fears  water!") == dedupe_key("elara fears water")
    assert dedupe_key("Elara fears water") != dedupe_key("Elara fears fire")


def test_collections_are_named_after_character_chat_and_granularity() -> None:
    assert collection_name("Mira") == "char:Mira"
    assert collection_name("Mira", "Mira - 2026-02-15@10h00m00s") == (
        "char:Mira/chat:Mira - 2026-02-15@10h00m00s"
    )
    assert collection_name("Mira", "c1", chunks=True) == "char:Mira/chat:c1/chunks"


def test_chunk_items_carry_the_block_they_start_in() -> None:
    memory = parse_memory_file(FILE * 3)
    settings = ChunkSettings(size_threshold_kb=0, chunk_size=200)

    items = chunk_items_from_memory_file("char:Elara/chunks", "Elara.md", memory, settings)

    assert [item.text for item in items] == chunk_file(memory.render(), settings)
    assert [item.provenance.chunk for item in items] == list(range(len(items)))
    for item in items:
        block = memory.blocks[item.provenance.block_index]
        if item.text.startswith("<memory"):
            assert item.text.startswith(block.render()[:40])
        assert item.provenance.block_date == block.date
        assert MemoryItem.from_payload("char:Elara/chunks", item.to_payload()) == item
    assert items[-1].provenance.block_index == 5
    assert embedding_text(items[0]) == items[0].text  # no context prefix for a chunk
    assert "chunk" not in items_from_memory_file("c", "f.md", memory)[0].to_payload()


def test_a_small_file_is_one_chunk() -> None:
    memory = parse_memory_file(FILE)
    [item] = chunk_items_from_memory_file("c", "f.md", memory, ChunkSettings())
    assert item.text == FILE and item.provenance.block_index == 0
    assert item.provenance.place == ("f.md", 0, 0)


def test_leading_words_keep_the_text_as_written() -> None:
    from charmemory.core.retrieval import leading_words

    assert leading_words("  one two\nthree  four", 3) == "  one two\nthree"
    assert leading_words("one two", 5) == "one two"
    assert leading_words("林小满在巷口 opened a shop", 4) == "林小满在"


def test_a_chat_query_embeds_each_message_apart_weighted_by_its_words() -> None:
    from charmemory.core.retrieval import NEWEST_MESSAGE_WEIGHT, chat_query_parts

    messages = ["too old", "one two three four five six", "", "seven eight nine"]

    parts = chat_query_parts(messages, 2, 4)

    # Newest first, each cut at 4 words; the newest message's words count more.
    assert [text for text, _ in parts] == ["seven eight nine", "one two three four"]
    newest, older = (weight for _, weight in parts)
    assert newest / older == pytest.approx(3 * NEWEST_MESSAGE_WEIGHT / 4)
    assert newest + older == pytest.approx(1)
    assert chat_query_parts(messages, 1, 4) == [("seven eight nine", 1.0)]
    assert chat_query_parts(["", "  "], 2, 4) == []
