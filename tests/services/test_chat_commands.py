"""The commands typed in a chat's input box, run against the chat they were typed in."""

from pathlib import Path

import pytest

from charmemory.adapters.workspace import Workspace
from charmemory.composition import App
from charmemory.core.chat.commands import UnknownCommandError, parse_command
from charmemory.formats.chat import Chat, parse_chat
from charmemory.formats.lorebook import Lorebook, new_entry
from charmemory.ports import Completion
from tests.services.test_chat import Clock, card_with, chat_file
from tests.support.extraction_fixtures import CHARACTER, make_workspace, memory_block
from tests.support.fake_chat_model import ChatRequest, FakeChatModel
from tests.support.word_hash_embedder import WordHashEmbedder


class Crew:
    """The character's model: chat turns get the next reply; extraction gets two memories;
    consolidation merges whatever it is sent into one block."""

    def __init__(self, *replies: str) -> None:
        self.replies = iter(replies)
        self.model = FakeChatModel(self.answer)

    def answer(self, request: ChatRequest) -> Completion:
        kind = request.answer_format.__class__.__name__
        if kind == "NewMemories":
            return Completion(memory_block("Alex fears heights.", "Alex hoards brass keys."))
        if kind == "ConsolidatedMemories":
            return Completion(
                '<memory sources="1">\n- Alex fears heights and hoards keys.\n</memory>'
            )
        return Completion(next(self.replies))

    def kinds(self) -> list[str]:
        return [r.answer_format.__class__.__name__ for r in self.model.requests]


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    ws = make_workspace(tmp_path / "ws", interval=50)  # no automatic extraction here
    card_with(ws)
    return ws


def app_of(ws: Workspace, crew: Crew, **options: object) -> App:
    return App(
        ws,
        env={},
        chat_model=lambda: crew.model,
        clock=Clock(),
        index_for_extraction="embedder" in options,
        **options,  # type: ignore[arg-type]
    )


async def typed(app: App, chat: str, text: str) -> str:
    return await app.chat_commands.run(CHARACTER, chat, parse_command(text))


def saved(ws: Workspace, chat: str | None = None) -> Chat:
    path = chat_file(ws) if chat is None else ws.chats_dir / CHARACTER / f"{chat}.jsonl"
    return parse_chat(path.read_text(encoding="utf-8"))


async def test_swipe_continue_hide_branch_and_delete_change_the_chat(ws: Workspace) -> None:
    app = app_of(ws, Crew("First.", "Second.", " And more."))
    chat = (await app.chat.send(CHARACTER, "Hello?")).chat
    await app.chat.generate(CHARACTER, kind="swipe")

    assert await typed(app, chat, "/swipe 1") == "First."
    reply = saved(ws).messages[2]
    assert (reply.mes, reply.swipe_id) == ("First.", 0)

    assert await typed(app, chat, "/continue") == "First. And more."
    reply = saved(ws).messages[2]
    assert reply.mes == "First. And more." and reply.swipes == ("First. And more.", "Second.")

    assert await typed(app, chat, "/hide 1-2") == "hidden: 2 messages"
    assert [m.is_hidden for m in saved(ws).messages] == [False, True, True]
    assert await typed(app, chat, "/unhide 2") == "shown again: 1 message"
    assert [m.is_hidden for m in saved(ws).messages] == [False, True, False]

    answer = await typed(app, chat, "/branch 1")
    branch = answer.removeprefix("branch: ")
    assert branch == f"{chat} - Branch #1"
    copy = saved(ws, branch)
    assert [m.mes for m in copy.messages] == ["Welcome aboard, {{user}}.", "Hello?"]
    assert copy.header.chat_metadata["main_chat"] == chat

    assert await typed(app, chat, "/del 2") == "deleted 2 messages"
    assert [m.mes for m in saved(ws, chat).messages] == ["Welcome aboard, {{user}}."]
    assert len(saved(ws, branch).messages) == 2  # the branch keeps its own


async def test_extract_now_saves_the_new_messages_memories_once(ws: Workspace) -> None:
    crew = Crew("Aye.", "Aye again.")
    app = app_of(ws, crew)
    chat = (await app.chat.send(CHARACTER, "I hate heights.")).chat
    await app.chat.send(CHARACTER, "I keep brass keys.", chat)
    assert app.chat.status_line(CHARACTER, chat).startswith("3/50 msgs")

    assert await typed(app, chat, "/extract-memories") == "2 memories saved from 5 messages"
    memories = (ws.files_dir / f"{CHARACTER}-memories.md").read_text(encoding="utf-8")
    assert "- Alex fears heights.\n- Alex hoards brass keys.\n" in memories
    assert app.chat.status_line(CHARACTER, chat).startswith("0/50 msgs")
    assert await typed(app, chat, "/extract-memories") == "no new messages to extract"
    assert crew.kinds().count("NewMemories") == 1


async def test_consolidate_only_previews_and_the_preview_applies(ws: Workspace) -> None:
    crew = Crew("Aye.")
    app = app_of(ws, crew)
    chat = (await app.chat.send(CHARACTER, "I hate heights.")).chat
    await typed(app, chat, "/extract-memories")
    file = ws.files_dir / f"{CHARACTER}-memories.md"
    before = file.read_text(encoding="utf-8")

    answer = await typed(app, chat, "/consolidate-memories")
    assert answer.startswith("preview ") and "2 memories would become 1" in answer
    assert file.read_text(encoding="utf-8") == before  # a preview writes nothing
    preview_id = int(answer.split()[1].rstrip(":"))
    assert f'charmemory consolidate "{CHARACTER}" --apply {preview_id}' in answer

    await app.consolidation.apply(preview_id)
    assert "- Alex fears heights and hoards keys." in file.read_text(encoding="utf-8")


async def test_debug_shows_the_last_replys_memories_and_lore(ws: Workspace) -> None:
    book = Lorebook()
    book.put(
        new_entry("The Kestrel's boiler is named Old Maud.", ["boiler"], uid=0, comment="Maud")
    )
    (ws.worlds_dir / "Kestrel.json").write_text(book.render(), encoding="utf-8")
    card_with(ws, extensions={"world": "Kestrel"})
    (ws.files_dir / f"{CHARACTER}-memories.md").write_text(
        memory_block("Alex fears the boiler room."), encoding="utf-8"
    )
    app = app_of(ws, Crew("Hm.", "Aye."), embedder=WordHashEmbedder())
    chat = app.chat.new_chat(CHARACTER).ref.id
    assert await typed(app, chat, "/charmemory-debug") == "no generation in this chat yet"

    await app.chat.send(CHARACTER, "Is the boiler room safe?", chat)
    await app.chat.send(CHARACTER, "What do you call the boiler?", chat)
    shown = (await typed(app, chat, "/charmemory-debug")).splitlines()

    assert shown[0].startswith("generation 2 (normal, fake/")
    assert shown[1] == "memories injected (1):" and shown[2].endswith(
        "  Alex fears the boiler room."
    )
    assert shown[3] == "world info activated:"
    assert shown[4].startswith("  Kestrel#0 Maud: ") and "boiler" in shown[4]


async def test_unknown_commands_answer_with_the_list(ws: Workspace) -> None:
    with pytest.raises(UnknownCommandError) as raised:
        parse_command("/summon kraken")
    assert "unknown command /summon" in str(raised.value)
    assert all(f"/{name}" in str(raised.value) for name in ("extract-memories", "del", "swipe"))
