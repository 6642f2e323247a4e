"""The knowledge boundary of narrator mode, as a property of random sessions.

A state machine drives the real services (chat turns with an in-process model,
scene memories, branches) through random casts (add, retire, restore), active
casts, sends, slow generations whose active cast changes midway, swipes and the
choice of one, continues, regenerations, deletions, legacy replies (written with
narrator mode off) with random confirmations, and branches. It keeps its own
account of what each stamp and each scene's participants must be, and checks
after every step:

1. every memory-book entry a generation was offered from a cast member's book
   comes from the book of a member in that generation's snapshot (the active
   cast when it started), and the omniscient book is never offered by narrator
   mode;
2. every linked copy in a member's book belongs to a scene whose participants
   include that member.

One workspace serves every example (each gets its own chat and books), and
fsync is skipped: durability is not what is tested here.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from charmemory.adapters import atomic_file
from charmemory.composition import App
from charmemory.core.books.scenes import SceneRange
from charmemory.core.narrator import scenes as narrator_scenes
from charmemory.core.narrator import stamps as narrator_stamps
from charmemory.formats.lorebook import parse_lorebook
from charmemory.ports import Completion, JsonAnswer
from tests.support.books import CHARACTER, Clock, scene_json, write_chat
from tests.support.fake_chat_model import ChatRequest, FakeChatModel
from tests.support.narrator import narrator_workspace, write_secret_book

NAMES = ("Alice", "Bob", "Clara", "Dora")
Stamp = tuple[str, ...] | None


@dataclass
class Msg:
    user: bool
    swipes: list[Stamp]
    shown: int = 0

    @property
    def stamp(self) -> Stamp:
        return self.swipes[self.shown]


@dataclass
class Member:
    id: str
    name: str
    book: str
    retired: bool = False


@dataclass
class ChatModel:
    """What the chat must be, by the narrator mode's rules."""

    id: str
    omniscient: str
    members: list[Member] = field(default_factory=list)
    active: tuple[str, ...] = ()
    enabled: bool = True
    messages: list[Msg] = field(default_factory=list)

    def current(self) -> list[Member]:
        return [m for m in self.members if not m.retired]

    def restore(self, ids: Stamp) -> None:
        if ids is not None and self.enabled:
            current = {m.id for m in self.current()}
            self.active = tuple(dict.fromkeys(i for i in ids if i in current))

    def owner_of(self) -> dict[str, str]:
        return {m.book: m.id for m in self.members}


@dataclass(frozen=True)
class Generation:
    offered: frozenset[str]  # the books of the entries it was offered
    snapshot: tuple[str, ...]
    cast_books: dict[str, str]  # book -> member id, in its chat then
    omniscient: str
    narrated: bool


class Session:
    """One workspace and App for every example; each example has its own names."""

    def __init__(self, root: Path):
        self.ws = narrator_workspace(root)
        self.model = FakeChatModel(self.answer)
        self.app = App(
            self.ws,
            env={},
            chat_model=lambda: self.model,
            clock=Clock(),
            index_for_extraction=False,
        )
        self.app.settings.set("extraction.auto_extract", "off")
        self.app.settings.set("books.allow_overlap", "on")
        self.app.settings.set("books.lorebook_mode", "manual", character=CHARACTER)
        self.loop = asyncio.new_event_loop()
        self.examples = itertools.count()
        self.midway: tuple[str, list[str]] | None = None  # (chat, names) set while generating

    def answer(self, request: ChatRequest) -> Completion:
        if isinstance(request.answer_format, JsonAnswer):
            return Completion(scene_json("Scene"))
        if self.midway is not None:
            chat, names = self.midway
            self.app.narrator.set_active(CHARACTER, names, chat)  # while the reply is written
        return Completion("The narrator goes on.")

    def run(self, coroutine):  # type: ignore[no-untyped-def]
        return self.loop.run_until_complete(coroutine)

    def fresh(self) -> str:
        """A new example: the last one's files gone, a prefix of its own."""
        for path in [*self.ws.worlds_dir.glob("*.json"), *self.ws.chats_dir.glob("*/*.jsonl")]:
            path.unlink()
        return f"e{next(self.examples)}"


class ThreadLocks:
    """File locks for one process: a lock per path, as the cross-process ones would be."""

    def __init__(self) -> None:
        self._locks: dict[Path, threading.RLock] = {}
        self._guard = threading.Lock()

    @contextlib.contextmanager
    def hold(self, path: Path) -> Iterator[None]:
        with self._guard:
            lock = self._locks.setdefault(path.resolve(), threading.RLock())
        with lock:
            yield


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Session]:
    """A fast path: the workspace in memory where the system has a RAM file system
    (Linux's /dev/shm), no fsync, and locks between threads instead of processes. Each
    example writes files dozens of times, in one process; durability and other
    processes are not what this property is about."""
    memory = Path("/dev/shm")
    patches = pytest.MonkeyPatch()
    patches.setattr(atomic_file.os, "fsync", lambda fd: None)
    patches.setattr(atomic_file.FileLocks, "hold", ThreadLocks().hold)
    with tempfile.TemporaryDirectory(dir=memory if memory.is_dir() else None) as folder:
        made = Session(Path(folder) / "ws")
        made.ws.db.execute("PRAGMA synchronous = OFF")
        try:
            yield made
        finally:
            patches.undo()
            made.loop.close()
            made.ws.close()


# Preconditions are named functions, not lambdas: Hypothesis describes a lambda by
# parsing its source with `ast`, which Python 3.11 can fail deep in a state machine's
# stack ("AST constructor recursion depth mismatch").
def room_for_a_member(machine: KnowledgeBoundary) -> bool:
    return len(machine.model.members) < len(NAMES)


def a_reply_with_swipes(machine: KnowledgeBoundary) -> bool:
    return machine.last_is_reply() and len(machine.model.messages[-1].swipes) > 1


def has_messages(machine: KnowledgeBoundary) -> bool:
    return bool(machine.model.messages)


class KnowledgeBoundary(RuleBasedStateMachine):
    session: Session
    check_model = True  # also hold the stamps and copies to the model (off: invariants only)

    def __init__(self) -> None:
        super().__init__()
        self.s = self.session
        self.app = self.s.app
        self.chats: dict[str, ChatModel] = {}
        self.chat = ""
        self.generations: list[Generation] = []
        self.scenes: dict[tuple[str, int], frozenset[str]] = {}  # canonical -> participants

    # -- helpers ----------------------------------------------------------------------------

    @property
    def model(self) -> ChatModel:
        return self.chats[self.chat]

    def names(self, ids: tuple[str, ...]) -> list[str]:
        by_id = {m.id: m.name for m in self.model.members}
        return [by_id[i] for i in ids]

    def stamps_on_disk(self) -> list[Stamp]:
        loaded = self.app.library.load_chat(self.ref())
        return [narrator_stamps.stamp_of(m) for m in loaded.chat.messages]

    def ref(self):  # type: ignore[no-untyped-def]
        library = self.app.library
        return library.chat(library.character(CHARACTER), self.chat)

    def generate(self, kind: str, midway: list[str] | None) -> None:
        model = self.model
        narrated = model.enabled
        snapshot = model.active if narrated else ()
        cast_books = model.owner_of()
        self.s.midway = None if midway is None else (self.chat, midway)
        try:
            if kind == "send":
                self.s.run(self.app.chat.send(CHARACTER, "And then?", self.chat))
            else:
                self.s.run(self.app.chat.generate(CHARACTER, self.chat, kind=kind))  # type: ignore[arg-type]
        finally:
            self.s.midway = None
        new = snapshot if narrated else None
        if kind == "send":
            model.messages.append(Msg(True, [model.active if narrated else None]))
            model.messages.append(Msg(False, [new]))
        elif kind == "regenerate":
            model.messages[-1] = Msg(False, [new])
        elif kind == "swipe":
            last = model.messages[-1]
            last.swipes.append(new)
            last.shown = len(last.swipes) - 1
        else:  # continue
            last = model.messages[-1]
            if narrated:
                merged = tuple(dict.fromkeys([*(last.stamp or ()), *snapshot]))
                last.swipes[last.shown] = merged
        if midway is not None:  # the active cast is chat state, narrator mode on or off
            model.active = tuple(m.id for name in midway for m in model.current() if m.name == name)
        record = self.app.chat.generations(CHARACTER, self.chat)[0]
        self.generations.append(
            Generation(
                frozenset(item["book"] for item in record.world_info),
                snapshot,
                cast_books,
                model.omniscient,
                narrated,
            )
        )
        if self.check_model:
            assert self.stamps_on_disk() == [m.stamp for m in model.messages]
            assert record.narrator_cast == (list(snapshot) if narrated else None)

    def choose(self, data: st.DataObject, members: list[Member], label: str) -> list[Member]:
        if not members:
            return []
        return data.draw(st.lists(st.sampled_from(members), unique_by=lambda m: m.id), label)

    # -- the cast ---------------------------------------------------------------------------

    @initialize(data=st.data())
    def start(self, data: st.DataObject) -> None:
        """A narrator chat with two members and a random active cast."""
        prefix = self.s.fresh()
        chat_id = f"{CHARACTER} - {prefix}"
        write_chat(self.s.ws, [], chat_id=chat_id)
        omniscient = f"{prefix} Omni"
        write_secret_book(self.s.ws, omniscient)
        self.prefix = prefix
        self.chats[chat_id] = ChatModel(chat_id, omniscient)
        self.chat = chat_id
        self.app.narrator.enable(CHARACTER, chat_id, omniscient=omniscient)
        for name in NAMES[:2]:
            self.add(name)
        self.set_active(data)

    def add(self, name: str) -> None:
        book = f"{self.prefix} {name}"
        write_secret_book(self.s.ws, book)
        member = self.app.narrator.add(CHARACTER, name, book, self.chat)
        self.model.members.append(Member(member.id, name, book))

    @precondition(room_for_a_member)
    @rule(data=st.data())
    def add_member(self, data: st.DataObject) -> None:
        taken = {m.name for m in self.model.members}
        self.add(data.draw(st.sampled_from([n for n in NAMES if n not in taken]), "name"))

    @rule(data=st.data())
    def retire_or_restore(self, data: st.DataObject) -> None:
        member = data.draw(st.sampled_from(self.model.members), "member")
        if member.retired:
            self.app.narrator.restore(CHARACTER, member.name, self.chat)
        else:
            self.app.narrator.retire(CHARACTER, member.name, self.chat)
            self.model.active = tuple(i for i in self.model.active if i != member.id)
        member.retired = not member.retired

    @rule(data=st.data())
    def set_active(self, data: st.DataObject) -> None:
        """Whom the next generations are for (nobody is a valid choice)."""
        chosen = self.choose(data, self.model.current(), "active")
        self.app.narrator.set_active(CHARACTER, [m.name for m in chosen], self.chat)
        self.model.active = tuple(m.id for m in chosen)

    @rule()
    def toggle_narrator_mode(self) -> None:
        """Off, replies come unstamped (legacy); on again, they are stamped."""
        if self.model.enabled:
            self.app.narrator.disable(CHARACTER, self.chat)
        else:
            self.app.narrator.enable(CHARACTER, self.chat)
        self.model.enabled = not self.model.enabled

    # -- turns ------------------------------------------------------------------------------

    def midway(self, data: st.DataObject) -> list[str] | None:
        if not data.draw(st.booleans(), "slow"):
            return None
        return [m.name for m in self.choose(data, self.model.current(), "midway")]

    def last_is_reply(self) -> bool:
        return bool(self.model.messages) and not self.model.messages[-1].user

    @rule(data=st.data(), kind=st.sampled_from(["send", "send", "swipe", "continue", "regenerate"]))
    def turn(self, data: st.DataObject, kind: str) -> None:
        """A generation: a new exchange, or (after a reply) a swipe, continue or regeneration."""
        self.generate(kind if self.last_is_reply() else "send", self.midway(data))

    @rule(data=st.data())
    def turn_with_a_new_cast(self, data: st.DataObject) -> None:
        """The most common move: choose who is present, then send."""
        self.set_active(data)
        self.generate("send", self.midway(data))

    @precondition(a_reply_with_swipes)
    @rule(data=st.data())
    def choose_swipe(self, data: st.DataObject) -> None:
        last = self.model.messages[-1]
        number = data.draw(st.integers(0, len(last.swipes) - 1), "swipe")
        self.s.run(self.app.chat.choose_swipe(CHARACTER, number + 1, self.chat))
        last.shown = number
        self.model.restore(last.stamp)

    @precondition(has_messages)
    @rule(data=st.data())
    def delete(self, data: st.DataObject) -> None:
        """From the end (the active cast comes back from the last stamped reply), or an
        older message (nothing else changes)."""
        messages = self.model.messages
        if len(messages) > 1 and data.draw(st.booleans(), "older"):
            index = data.draw(st.integers(0, len(messages) - 2), "index")
            self.s.run(self.app.chat.delete_message(CHARACTER, index, self.chat))
            del messages[index]
            return
        count = data.draw(st.integers(1, min(3, len(messages))), "deleted")
        self.s.run(self.app.chat.delete_last(CHARACTER, count, self.chat))
        del messages[-count:]
        stamped = [m.stamp for m in messages if not m.user and m.stamp is not None]
        if stamped:
            self.model.restore(stamped[-1])

    # -- memories ---------------------------------------------------------------------------

    @precondition(has_messages)
    @rule(data=st.data())
    def scene(self, data: st.DataObject) -> None:
        model = self.model
        last = len(model.messages) - 1
        first = data.draw(st.integers(0, last), "first")
        end = data.draw(st.integers(first, last), "last")
        part = model.messages[first : end + 1]
        replies = [m for m in part if not m.user] or part
        legacy = any(m.stamp is None for m in replies)
        confirmation = None
        if legacy:
            chosen = self.choose(data, model.current(), "present")
            confirmation = [m.name for m in chosen]
            present = tuple(m.id for m in chosen)
        else:
            present = tuple(dict.fromkeys(i for m in replies for i in m.stamp or ()))
        if not model.enabled:
            self.s.run(self.app.scenes.create(CHARACTER, SceneRange(first, end), self.chat))
            return
        saved = self.s.run(
            self.app.scenes.create(
                CHARACTER, SceneRange(first, end), self.chat, participants=confirmation
            )
        )
        if self.check_model:
            expected = [model.omniscient, *(m.book for m in model.members if m.id in present)]
            assert [entry.book for entry in saved.entries] == expected
        canonical = saved.entries[0]
        self.scenes[(canonical.book, canonical.uid)] = frozenset(present)

    @precondition(has_messages)
    @rule(data=st.data())
    def branch(self, data: st.DataObject) -> None:
        model = self.model
        at = data.draw(st.integers(0, len(model.messages) - 1), "at")
        branch = self.s.run(self.app.chat.branch(CHARACTER, at, self.chat))
        copies = dict(self.app.book_branching.copies(CHARACTER, branch))
        for (book, uid), present in list(self.scenes.items()):
            if book == model.omniscient:
                self.scenes[(copies[book], uid)] = present
        self.chats[branch] = ChatModel(
            branch,
            copies[model.omniscient],
            [replace(m, book=copies[m.book]) for m in model.members],
            model.active,
            model.enabled,
            [Msg(m.user, list(m.swipes), m.shown) for m in model.messages[: at + 1]],
        )
        if data.draw(st.booleans(), "go to the branch"):
            self.chat = branch

    # -- the two invariants -----------------------------------------------------------------

    @invariant()
    def offered_only_the_snapshots_books(self) -> None:
        for generation in self.generations:
            allowed = {b for b, i in generation.cast_books.items() if i in generation.snapshot}
            for book in generation.offered:
                if book in generation.cast_books:
                    assert book in allowed, f"knowledge boundary: {book} offered to {generation}"
            if generation.narrated:
                assert generation.omniscient not in generation.offered

    @invariant()
    def copies_only_for_those_present(self) -> None:
        owners = {book: i for chat in self.chats.values() for book, i in chat.owner_of().items()}
        for book, owner in owners.items():
            path = self.s.ws.worlds_dir / f"{book}.json"
            if not path.exists():
                continue
            for entry in parse_lorebook(path.read_text(encoding="utf-8")).entries.values():
                raw = entry.raw
                if raw.get("STMB_canonical") is not False:
                    continue
                scene = (raw["STMB_canonicalLorebook"], raw["STMB_canonicalEntryUid"])
                assert owner in self.scenes[scene], (
                    f"knowledge boundary: a copy in {book} for a scene without its owner: "
                    f"{json.dumps(raw)[:300]}"
                )
                assert raw["STMB_narratorOwnerIds"] == [owner]


EXAMPLES = int(os.environ.get("NARRATOR_PROPERTY_EXAMPLES", "2000"))
STEPS = 12


def run_machine(
    session: Session, examples: int, *, check_model: bool = True, **options: object
) -> None:
    KnowledgeBoundary.session = session
    KnowledgeBoundary.check_model = check_model
    # A function as the factory, not the class: Hypothesis digests the factory's source,
    # and Python 3.11 finds a class's source by parsing its whole module with `ast`.
    run_state_machine_as_test(
        lambda: KnowledgeBoundary(),
        settings=settings(
            **{"stateful_step_count": STEPS, **options},  # type: ignore[arg-type]
            max_examples=examples,
            deadline=None,
            suppress_health_check=list(HealthCheck),
        ),
    )


def test_the_knowledge_boundary_holds(session: Session) -> None:
    run_machine(session, EXAMPLES)


@pytest.mark.slow
def test_the_knowledge_boundary_holds_over_many_more_sessions(session: Session) -> None:
    run_machine(session, 10 * EXAMPLES, stateful_step_count=40)


def test_the_property_sees_a_snapshot_that_ignores_the_active_cast(
    session: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    everyone = lambda config, omniscient: narrator_stamps.CastSnapshot(  # noqa: E731
        tuple(m.id for m in config.current), tuple(m.book for m in config.current)
    )
    monkeypatch.setattr("charmemory.services.narrator.snapshot", everyone)
    with pytest.raises(AssertionError, match=r"knowledge boundary: .* offered to"):
        run_machine(session, 300, check_model=False, phases=[Phase.generate])


def test_the_property_sees_copies_routed_to_the_active_cast(
    session: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = narrator_scenes.narrator_targets

    def to_the_active_cast(omniscient, config, participant_ids, *, label):  # type: ignore[no-untyped-def]
        return real(omniscient, config, [*participant_ids, *config.active_ids], label=label)

    monkeypatch.setattr("charmemory.services.narrator.narrator_targets", to_the_active_cast)
    with pytest.raises(AssertionError, match="knowledge boundary: a copy in"):
        run_machine(session, 300, check_model=False, phases=[Phase.generate])
