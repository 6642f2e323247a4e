import re

from hypothesis import given, settings
from hypothesis import strategies as st

from charmemory.core.chunking import (
    ChunkSettings,
    chunk_file,
    split_recursive,
    trim_to_end_sentence,
    trim_to_start_sentence,
)


def test_split_recursive_matches_sillytaverns_documented_example() -> None:
    assert split_recursive("Hello, world!", 3) == ["Hel", "lo,", "wor", "ld!"]


def test_paragraphs_are_merged_up_to_the_chunk_size() -> None:
    text = "aaa\n\nbbb\n\nccc"
    assert split_recursive(text, 8) == ["aaa\n\nbbb", "ccc"]
    assert split_recursive(text, 0) == [text]


@settings(max_examples=150)
@given(st.text(alphabet="ab .\n", max_size=300), st.integers(min_value=2, max_value=40))
def test_chunks_fit_and_keep_every_visible_character(text: str, length: int) -> None:
    chunks = split_recursive(text, length)
    assert all(len(chunk) <= length for chunk in chunks)
    assert re.sub(r"\s", "", "".join(chunks)) == re.sub(r"\s", "", text)


def test_small_files_stay_whole_and_large_files_are_cut() -> None:
    small = "- a memory\n" * 100
    assert chunk_file(small) == [small]
    large = "".join(f"- Memory number {i} is about the harbour.\n" for i in range(400))
    chunks = chunk_file(large)
    assert len(chunks) > 5
    assert all(len(chunk) <= 2500 for chunk in chunks)


def test_overlap_borrows_whole_sentences_from_the_neighbours() -> None:
    large = "".join(f"Sentence {i} ends here. " for i in range(400))
    chunks = chunk_file(large, ChunkSettings(chunk_size=1000, overlap_percent=20))
    plain = chunk_file(large, ChunkSettings(chunk_size=800))
    assert len(chunks) == len(plain)
    assert chunks[1].startswith(trim_to_start_sentence(plain[0][-100:]))
    assert chunks[1].endswith(trim_to_end_sentence(plain[2][:100]))
    assert all(len(chunk) <= 1000 + 2 for chunk in chunks)


def test_sentence_trimming_follows_sillytavern() -> None:
    assert trim_to_end_sentence("Hello, world! I am from") == "Hello, world!"
    assert trim_to_end_sentence("no end at all  ") == "no end at all"
    assert trim_to_end_sentence("a dragon 🐉 flew") == "a dragon 🐉"
    assert trim_to_start_sentence("ing the end. Next one") == "Next one"
    assert trim_to_start_sentence("half line\nnext line. more") == "next line. more"
    assert trim_to_start_sentence("no period! at all") == "no period! at all"
