"""The loop the product exists for: facts said early in a long chat are extracted on their
own and come back in the prompt of a later turn, long after they left the context."""

from pathlib import Path

import pytest

from charmemory.ports import Completion
from tests.services.test_chat import Clock, card_with
from tests.support.extraction_fixtures import CHARACTER, make_app, make_workspace, memory_block
from tests.support.fake_chat_model import ChatRequest, ScriptedChatModel

PLANTED = "My sister Ilsa runs the lantern bakery on Copperlane in Vell."
FACT = "Alex's sister Ilsa runs the lantern bakery on Copperlane in Vell."
FILLER = (
    "We trim the sails and check the ropes again, and the wind keeps turning while "
    "the crew argues about supper and the charts stay rolled up on the table. "
)


def role_play(request: ChatRequest) -> Completion:
    """The character's replies are streamed; extraction calls get the planted fact back."""
    if request.stream:
        return Completion(f"Aye. (reply {len(request.messages)})", finish_reason="stop")
    said = "\n".join(message.content for message in request.messages)
    answer = memory_block(FACT) if "Ilsa" in said else "NO_NEW_MEMORIES"
    return Completion(answer, finish_reason="stop")


@pytest.mark.local_model
async def test_a_fact_from_the_first_turns_comes_back_sixty_turns_later(
    tmp_path: Path, chat_model: ScriptedChatModel
) -> None:
    ws = make_workspace(tmp_path / "ws")  # interval 20, cooldown 10 minutes: the defaults
    card_with(ws)
    app = make_app(ws, chat_model, clock=Clock(), index=True)
    # Early turns fall out of the chat's prompt; an extraction's prompt (20 messages) fits.
    app.settings.set("model.context_size", "3072")
    app.settings.set("extraction.max_response_tokens", "500")
    app.settings.set("model.max_tokens", "200")
    chat_model.respond_always(role_play)

    outcomes = []
    for turn in range(60):
        said = PLANTED if turn == 2 else f"Turn {turn}: {FILLER}"
        outcomes.append((await app.chat.send(CHARACTER, said)).extraction)
        await app.chat.extractions_finished()
    # The greeting is the first character message: the 20th is the 19th reply.
    assert outcomes[18] == "started" and outcomes[:18] == [
        f"skipped: {n}/20 msgs" for n in range(2, 20)
    ]
    memories = (ws.files_dir / f"{CHARACTER}-memories.md").read_text(encoding="utf-8")
    assert f"- {FACT}" in memories

    question = "Remind me, what does my sister do for a living?"
    asked = await app.chat.send(CHARACTER, question)
    sent = next(r for r in reversed(chat_model.requests) if r.stream)
    prompt = "\n".join(message.content for message in sent.messages)
    assert PLANTED not in prompt  # the turn itself left the context long ago
    assert FACT in prompt  # its memory came back
    assert asked.memories[0]["text"] == FACT
    record = app.chat.generations(CHARACTER)[0]
    assert record.memories[0]["text"] == FACT and record.tokens["dropped_message_ids"]
