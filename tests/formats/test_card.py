"""Character cards in PNG and JSON, checked against SillyTavern's own default card."""

from __future__ import annotations

import base64
import dataclasses
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from charmemory.errors import FormatError
from charmemory.formats.card import Card, card_to_json, read_card, write_card_png
from charmemory.formats.png_chunks import (
    Chunk,
    Png,
    read_png,
    text_chunk,
    text_chunk_keyword,
    text_chunk_text,
)
from tests.formats.test_png_chunks import tiny_png, with_bad_crc
from tests.support.sillytavern_samples import sillytavern_sample


@pytest.fixture(scope="module")
def seraphina_png() -> bytes:
    return sillytavern_sample("default_Seraphina.png").read_bytes()


def card_chunks(png: bytes) -> dict[str, Any]:
    """The JSON of each card chunk, by keyword."""
    found = {}
    for chunk in read_png(png).chunks:
        keyword = text_chunk_keyword(chunk)
        if keyword is not None:
            found[keyword] = json.loads(base64.b64decode(text_chunk_text(chunk)))
    return found


def card_text_chunk(keyword: str, document: Any) -> Chunk:
    payload = base64.b64encode(json.dumps(document).encode()).decode()
    return text_chunk(keyword, payload)


def non_card_chunks(png: bytes) -> list[bytes]:
    chunks = read_png(png).chunks
    return [c.to_bytes() for c in chunks if text_chunk_keyword(c) not in ("chara", "ccv3")]


V2 = {
    "spec": "chara_card_v2",
    "spec_version": "2.0",
    "data": {"name": "Mira", "description": "A cartographer.", "tags": ["map"]},
}


def test_reads_the_default_card_from_its_ccv3_chunk(seraphina_png: bytes):
    card = read_card(seraphina_png, source="default_Seraphina.png")

    assert card.spec == "v3"
    assert card.name == "Seraphina"
    assert card.description.startswith("[Seraphina's Personality=")
    assert card.first_mes.startswith("*You wake with a start")
    assert card.creator == "OtisAlejandro"
    assert card.character_version == "1.0.0"
    assert card.creator_notes == "ST Default Bot contest winner: roleplay bots category"
    assert card.extensions["world"] == "Eldoria"
    assert card.character_book is not None
    assert len(card.character_book["entries"]) == 4
    assert card.raw == card_chunks(seraphina_png)["ccv3"]


def test_ccv3_is_read_before_chara_whatever_their_order_and_case():
    png = tiny_png(
        card_text_chunk("chara", {**V2, "data": {"name": "From chara"}}),
        card_text_chunk("CCV3", {**V2, "spec": "chara_card_v3", "data": {"name": "From ccv3"}}),
    )

    assert read_card(png).name == "From ccv3"


def test_chara_is_read_when_there_is_no_ccv3():
    png = tiny_png(text_chunk("Comment", "hello"), card_text_chunk("Chara", V2))

    card = read_card(png)

    assert (card.spec, card.name, card.tags) == ("v2", "Mira", ("map",))


def test_writing_an_unchanged_card_gives_back_the_same_png(seraphina_png: bytes):
    card = read_card(seraphina_png)

    assert write_card_png(seraphina_png, card) == seraphina_png


def test_a_changed_description_reads_back_from_both_chunks(seraphina_png: bytes):
    card = dataclasses.replace(read_card(seraphina_png), description="Guardian of the glade.")

    written = write_card_png(seraphina_png, card)

    assert read_card(written).description == "Guardian of the glade."
    chunks = card_chunks(written)
    assert chunks["chara"]["spec"] == "chara_card_v2"
    assert chunks["ccv3"]["spec"] == "chara_card_v3"
    for document in chunks.values():
        assert document["data"]["description"] == "Guardian of the glade."
        assert document["description"] == "Guardian of the glade."
    original = card_chunks(seraphina_png)["ccv3"]
    assert {k: v for k, v in chunks["ccv3"].items() if k not in ("description", "data")} == {
        k: v for k, v in original.items() if k not in ("description", "data")
    }
    assert non_card_chunks(written) == non_card_chunks(seraphina_png)


def test_card_chunks_go_before_iend_and_old_ones_are_dropped():
    international = Chunk.build(b"iTXt", b"chara\x00\x00\x00\x00\x00untouched")
    png = tiny_png(card_text_chunk("Chara", V2), international, card_text_chunk("chara", V2))

    written = write_card_png(png, dataclasses.replace(read_card(png), name="Mira II"))

    chunks = read_png(written).chunks
    assert [(c.type, text_chunk_keyword(c)) for c in chunks] == [
        (b"IHDR", None),
        (b"IDAT", None),
        (b"iTXt", None),
        (b"tEXt", "chara"),
        (b"tEXt", "ccv3"),
        (b"IEND", None),
    ]
    assert chunks[2] == international
    assert read_card(written).name == "Mira II"


def test_a_plain_image_gets_both_card_chunks():
    card = Card(name="Nell", description="A lighthouse keeper.")

    chunks = card_chunks(write_card_png(tiny_png(), card))

    assert chunks["chara"]["data"]["name"] == "Nell"
    assert chunks["ccv3"]["spec_version"] == "3.0"
    assert chunks["chara"]["spec_version"] == "2.0"


def test_a_bad_crc_elsewhere_is_kept_but_a_bad_crc_on_the_card_is_an_error():
    idat = Chunk.build(b"IDAT", b"\x00")
    header, card_chunk = Chunk.build(b"IHDR", b"\x00" * 13), card_text_chunk("chara", V2)
    damaged = Png((header, with_bad_crc(idat), card_chunk, Chunk.build(b"IEND", b""))).to_bytes()

    written = write_card_png(damaged, read_card(damaged))
    assert read_png(written).chunks[1] == with_bad_crc(idat)

    broken_card = tiny_png(with_bad_crc(card_text_chunk("chara", V2)))
    with pytest.raises(FormatError, match=r"^mira\.png: .*bad CRC"):
        read_card(broken_card, source="mira.png")


def test_a_card_only_in_an_itxt_chunk_is_not_read_like_sillytavern():
    png = tiny_png(Chunk.build(b"iTXt", b"chara\x00\x00\x00\x00\x00eyJuYW1lIjoiWCJ9"))

    with pytest.raises(FormatError, match="no character card"):
        read_card(png, source="x.png")


@pytest.mark.parametrize(
    ("chunk", "message"),
    [
        (text_chunk("chara", "not*base64!"), "not valid base64"),
        (text_chunk("chara", base64.b64encode(b"\xff\xfe").decode()), "not UTF-8"),
        (text_chunk("chara", base64.b64encode(b'{"name": ').decode()), "invalid JSON"),
        (text_chunk("ccv3", base64.b64encode(b"[1, 2]").decode()), "not an object"),
    ],
)
def test_a_damaged_card_chunk_is_a_format_error(chunk: Chunk, message: str):
    with pytest.raises(FormatError, match=message) as caught:
        read_card(tiny_png(chunk), source="broken.png")
    assert "broken.png" in str(caught.value)


def test_base64_with_line_breaks_and_no_padding_is_read():
    payload = base64.b64encode(json.dumps(V2).encode()).decode().rstrip("=")
    wrapped = "\n".join(payload[i : i + 76] for i in range(0, len(payload), 76))

    assert read_card(tiny_png(text_chunk("chara", wrapped))).name == "Mira"


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"\x00\x01\x02\xff", "neither PNG nor UTF-8 JSON"),
        (b'{"name": "x",}', "invalid JSON"),
        (b'"just text"', "not an object"),
        (b'{"description": "no name"}', "no 'spec' and no 'name'"),
        (b'{"spec": "chara_card_v9", "data": {}}', "unsupported card spec"),
        (b'{"spec": "chara_card_v2", "name": "x"}', "no 'data' object"),
        (b'{"spec": "chara_card_v2", "data": {"name": 5}}', "'name' has the wrong type"),
        (b'{"name": "x", "alternate_greetings": [1]}', "'alternate_greetings'"),
        (b"\x89PNG\r\n\x1a\n\x00\x00", "truncated"),
    ],
)
def test_malformed_input_is_a_format_error_naming_the_source(data: bytes, message: str):
    with pytest.raises(FormatError, match=message) as caught:
        read_card(data, source="upload.json")
    assert str(caught.value).startswith("upload.json")


def test_a_json_syntax_error_reports_its_line():
    with pytest.raises(FormatError) as caught:
        read_card(b'{\n"name": "x"\n"description": ""}', source="c.json")

    assert caught.value.line == 3


def test_reads_a_v1_card_and_writes_it_as_v2_keeping_the_legacy_fields():
    v1 = {
        "name": "Old Tom",
        "description": "A fisherman.",
        "personality": "gruff",
        "scenario": "A storm.",
        "first_mes": "Ahoy.",
        "mes_example": "<START>",
        "avatar": "none",
    }

    card = read_card(json.dumps(v1).encode())
    document = json.loads(card_to_json(card, spec="v2"))

    assert (card.spec, card.personality, card.scenario) == ("v1", "gruff", "A storm.")
    assert document["spec"] == "chara_card_v2"
    assert document["avatar"] == "none"
    assert {k: document[k] for k in v1} == v1
    assert document["data"] == {
        "name": "Old Tom",
        "description": "A fisherman.",
        "personality": "gruff",
        "scenario": "A storm.",
        "first_mes": "Ahoy.",
        "mes_example": "<START>",
        "creator_notes": "",
        "system_prompt": "",
        "post_history_instructions": "",
        "alternate_greetings": [],
        "tags": [],
        "creator": "",
        "character_version": "",
        "extensions": {},
        "group_only_greetings": [],
    }


def test_data_fields_win_over_legacy_top_level_fields():
    document = {
        "name": "Legacy",
        "description": "stale",
        "creatorcomment": "legacy notes",
        "spec": "chara_card_v2",
        "spec_version": "2.0",
        "data": {"name": "Current", "description": "fresh"},
    }

    card = read_card(json.dumps(document).encode())

    assert (card.name, card.description, card.creator_notes) == ("Current", "fresh", "legacy notes")


def test_reads_v3_json_and_keeps_fields_it_does_not_model():
    document = {
        "spec": "chara_card_v3",
        "spec_version": "3.0",
        "data": {
            **V2["data"],
            "nickname": "Mi",
            "assets": [{"type": "icon", "uri": "ccdefault:", "name": "main", "ext": "png"}],
            "extensions": {"depth_prompt": {"prompt": "", "depth": 4}},
            "character_version": 2,
        },
    }

    card = read_card(json.dumps(document).encode())
    again = json.loads(card_to_json(dataclasses.replace(card, scenario="At sea.")))

    assert card.spec == "v3"
    assert card.character_version == "2"
    assert again["data"]["nickname"] == "Mi"
    assert again["data"]["assets"] == document["data"]["assets"]
    assert again["data"]["character_version"] == 2
    assert again["data"]["scenario"] == again["scenario"] == "At sea."


def test_tags_given_as_text_are_split_like_sillytavern():
    card = read_card(json.dumps({"name": "x", "tags": "fantasy, , elf "}).encode())

    assert card.tags == ("fantasy", "elf")


def test_v2_json_equals_the_chara_chunk_sillytavern_wrote(seraphina_png: bytes):
    card = read_card(seraphina_png)
    chara = read_png(seraphina_png).chunks[2]

    expected = base64.b64decode(text_chunk_text(chara)).decode()
    assert card_to_json(card, spec="v2") == expected


def test_baseline_text_labels_the_parts_and_skips_empty_ones():
    card = Card(name="x", description="Tall.\n", personality="  ", scenario="A market.")

    assert card.baseline_text() == "Description:\nTall.\n\nScenario:\nA market."
    assert Card(name="x").baseline_text() == ""


text = st.text(max_size=40)
cards = st.builds(
    Card,
    name=text,
    description=text,
    personality=text,
    scenario=text,
    first_mes=text,
    creator_notes=text,
    alternate_greetings=st.lists(text, max_size=3).map(tuple),
    tags=st.lists(text, max_size=3).map(tuple),
    extensions=st.dictionaries(
        st.text(max_size=8), st.integers(-(2**53), 2**53) | text, max_size=3
    ),
)


@settings(max_examples=100)
@given(cards, st.sampled_from(["v2", "v3"]))
def test_any_card_survives_json_and_png(card: Card, spec: str):
    from_json = read_card(card_to_json(card, spec=spec).encode())
    from_png = read_card(write_card_png(tiny_png(), card))

    for read_back in (from_json, from_png):
        assert dataclasses.replace(read_back, spec="v3", raw={}) == card


def test_the_default_card_names_the_chat_it_last_opened(seraphina_png: bytes):
    assert read_card(seraphina_png).last_chat == "Seraphina - 2023-5-12 @21h 32m 29s 224ms"


@pytest.mark.parametrize(
    ("document", "last_chat"),
    [
        ({**V2, "chat": "Mira - 2024-07-05@14h20m05s"}, "Mira - 2024-07-05@14h20m05s"),
        (
            {**V2, "chat": "Mira - top", "data": {**V2["data"], "chat": "Mira - data"}},
            "Mira - top",
        ),
        ({**V2, "chat": "", "data": {**V2["data"], "chat": "Mira - data"}}, "Mira - data"),
        ({**V2, "chat": 12, "data": {**V2["data"], "chat": ["x"]}}, None),
        ({**V2, "chat": "   "}, None),
        (V2, None),
        ({"name": "Mira", "chat": "Mira - v1"}, "Mira - v1"),
    ],
    ids=["top level", "top level first", "data fallback", "not text", "blank", "absent", "v1"],
)
def test_last_chat_is_the_top_level_chat_field_sillytavern_keeps(
    document: dict[str, Any], last_chat: str | None
):
    assert read_card(json.dumps(document).encode()).last_chat == last_chat


def test_last_chat_is_kept_as_read_when_the_card_is_written():
    document = {**V2, "chat": "Mira - 2024-07-05@14h20m05s"}
    card = read_card(json.dumps(document).encode())

    written = json.loads(card_to_json(dataclasses.replace(card, description="Changed.")))

    assert written["chat"] == "Mira - 2024-07-05@14h20m05s"
    assert "chat" not in written["data"]


def test_lone_surrogates_in_a_card_are_read_as_replacement_characters() -> None:
    card = read_card(b'{"name": "Mi\\ud800ra", "tags": ["a\\udfff"], "description": "x\\udc00"}')
    assert (card.name, card.tags, card.description) == ("Mi\ufffdra", ("a\ufffd",), "x\ufffd")
