"""The chat screen's per-message actions over HTTP: hide and unhide, regenerate, extract
here, pin as memory, the persona; and the memory manager's search with its scores."""

from __future__ import annotations

from tests.api.conftest import FACT, Served
from tests.support.extraction_fixtures import alternating, write_chat
from tests.web.support import browser_client, csrf_of

CHAT = "Mira - 2026-02-15@10h00m00s123ms"
URL = f"/chat/Mira/{CHAT}"


def streamed(client, path: str, data: dict[str, str], headers: dict[str, str]) -> str:
    with client.stream("POST", path, data=data, headers=headers) as answer:
        return answer.read().decode()


def test_hide_unhide_and_regenerate_change_the_message_shown(site: Served) -> None:
    write_chat(site.ws, alternating(4), CHAT)
    with browser_client(site.url) as client:
        csrf = {"x-csrf-token": csrf_of(client.get(URL))}
        hidden = client.post(f"{URL}/messages/1/hidden", data={"hidden": "true"}, headers=csrf)
        assert 'class="message char is-hidden"' in hidden.text and ">Unhide<" in hidden.text
        shown = client.post(f"{URL}/messages/1/hidden", data={"hidden": "false"}, headers=csrf)
        assert "is-hidden" not in shown.text and ">Hide<" in shown.text
        streamed(client, f"{URL}/generate", {"kind": "regenerate"}, csrf)
        last = client.get(f"{URL}/messages/3").text
    assert "Reply to" in last and "Mira says line 3" not in last
    assert site.app.chat.open_chat("Mira", CHAT).chat.messages[1].is_hidden is False


def test_extract_here_pin_and_persona_say_what_they_did(site: Served) -> None:
    write_chat(site.ws, alternating(6), CHAT)
    with browser_client(site.url) as client:
        csrf = {"x-csrf-token": csrf_of(client.get(URL))}
        extracted = client.post(f"{URL}/messages/3/extract", headers=csrf)
        assert "memories saved from 4 messages (up to message 3)" in extracted.text
        assert client.post(f"{URL}/messages/3/extract", headers=csrf).text.count(
            "nothing new to extract up to message 3"
        )
        pinned = client.post(f"{URL}/messages/4/pin", headers=csrf)
        assert "pinned in" in pinned.text and "Alex says line 4." in pinned.text
        # No persona set: the person is called what the chat calls them, as in the prompt.
        assert "You are <strong>Alex</strong>" in client.get(URL).text
        persona = client.post(f"{URL}/persona", data={"name": "Captain Alex"}, headers=csrf)
        assert "you are Captain Alex in chats now" in persona.text
        assert "You are <strong>Captain Alex</strong>" in client.get(URL).text
        found = client.get("/memories/Mira/search", params={"q": "lantern bakery Ilsa"})
    texts = [m.text for b in site.app.memories.list("Mira").blocks for m in b.memories]
    assert FACT in texts and "Alex says line 4." in texts
    assert FACT.replace("'", "&#39;") in found.text
    assert "<svg" in found.text and "BM25" in found.text


def test_a_users_name_from_the_chat_file_is_shown_as_text(site: Served) -> None:
    chat = alternating(4)
    for line in chat:
        if line["is_user"]:
            line["name"] = "<script>alert(1)</script>Alex"
    path = write_chat(site.ws, chat, CHAT)
    # The header as SillyTavern 1.15+ writes it: the name is only on the messages.
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[0] = '{"chat_metadata":{},"user_name":"unused","character_name":"unused"}'
    path.write_text("\n".join(lines), encoding="utf-8")
    with browser_client(site.url) as client:
        shown = client.get(URL).text
    assert "<script>alert(1)</script>" not in shown
    assert "You are <strong>&lt;script&gt;alert(1)&lt;/script&gt;Alex</strong>" in shown
