"""Narrator mode for a chat: turned on and off, its cast managed, and its part in each turn.

The cast and the active cast are chat state (`chat_metadata.STMemoryBooks.
narratorMode`), changed in one locked write of the chat. The chat engine asks
this service, while narrator mode is active, for the snapshot of the active cast
a generation starts with, to stamp the user's message with the active cast, and
to bring the active cast back from a swipe's stamp (when a swipe is chosen) or
from the last stamped reply (when messages are deleted from the end). Scene
memories ask it for their books (`scene_targets`). Manual lorebook mode cannot be
turned off under a chat whose narrator mode is on (`guard_setting`).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any, TypeVar

from charmemory.core.books import chat_state
from charmemory.core.books.layout import SceneTargets
from charmemory.core.books.scenes import Scene
from charmemory.core.narrator.cast import (
    CastError,
    CastMember,
    NarratorConfig,
    add_member,
    book_issues,
    find_member,
    set_active,
    set_retired,
)
from charmemory.core.narrator.mode import MANUAL, Activation, activation, narrator_of, write_config
from charmemory.core.narrator.scenes import (
    ConfirmationNeededError,
    confirmed,
    narrator_targets,
    scene_cast,
    suggested,
)
from charmemory.core.narrator.stamps import CastSnapshot, last_stamped, snapshot, stamp, stamp_of
from charmemory.errors import CharMemoryError, ConfigError, NotFoundError
from charmemory.formats.chat import Chat, Message
from charmemory.ports import ActivityRecorder, ChatRef, LoadedChat
from charmemory.services.books import BookService
from charmemory.services.settings import SettingsService

LOREBOOK_MODE = "books.lorebook_mode"
CAUSE = "narrator"
T = TypeVar("T")


@dataclass(frozen=True)
class NarratorState:
    """A chat's narrator mode as it stands, with what reading its cast dropped."""

    ref: ChatRef
    activation: Activation
    dropped: tuple[str, ...] = ()

    @property
    def config(self) -> NarratorConfig:
        return self.activation.config

    @property
    def omniscient(self) -> str | None:
        return self.activation.omniscient

    @property
    def active(self) -> bool:
        return self.activation.active


class NarratorService:
    def __init__(
        self,
        books: BookService,
        settings: SettingsService,
        activity: ActivityRecorder,
        *,
        new_id: Callable[[], str] = lambda: str(uuid.uuid4()),
    ):
        self._books = books
        self._settings = settings
        self._activity = activity
        self._new_id = new_id

    # -- reading ------------------------------------------------------------------------

    def state(self, character_name: str, chat_id: str | None = None) -> NarratorState:
        _, loaded = self._books.chat(character_name, chat_id)
        return self.state_of(loaded.ref, loaded.chat)

    def state_of(self, ref: ChatRef, chat: Chat) -> NarratorState:
        mode = self._settings.value(LOREBOOK_MODE, ref.character.name)
        found = activation(chat.header, group_chat=ref.group is not None, lorebook_mode=mode)
        return NarratorState(ref, found, narrator_of(chat.header).dropped)

    # -- turning it on and off --------------------------------------------------------------

    def enable(
        self, character_name: str, chat_id: str | None = None, *, omniscient: str | None = None
    ) -> NarratorState:
        """Turn narrator mode on; ``omniscient`` selects the chat's manual memory book and
        turns manual lorebook mode on first."""
        ref = self._one_on_one(character_name, chat_id)
        book = self._books.book(omniscient).name if omniscient is not None else None
        manual = self._settings.value(LOREBOOK_MODE, ref.character.name) == MANUAL
        if book is None and not manual:
            raise ConfigError(
                "narrator mode needs manual lorebook mode: `charmemory narrator enable "
                f"{ref.character.name!r} --omniscient BOOK` selects the book and turns it on"
            )

        def enabled(chat: Chat, config: NarratorConfig) -> NarratorConfig:
            bindings = chat_state.bindings_of(chat.header)
            if book is not None:
                taken = [m.name for m in config.members if m.book == book]
                if taken or book in bindings.member_books.values():
                    owner = taken[0] if taken else "a member"
                    raise CastError(f"{book} is {owner}'s memory book; choose another omniscient")
                chat_state.update_state(chat.header, **{chat_state.MANUAL_BOOK: book})
            elif bindings.manual_book is None:
                raise ConfigError(
                    "no omniscient memory book is selected for this chat: add --omniscient BOOK"
                )
            return replace(config, enabled=True)

        self._change_cast(ref, enabled, "narrator mode on")
        if not manual:
            self._settings.set(LOREBOOK_MODE, MANUAL, character=ref.character.name)
        return self.state(ref.character.name, ref.id)

    def disable(self, character_name: str, chat_id: str | None = None) -> NarratorState:
        ref = self._chat_ref(character_name, chat_id)
        self._change_cast(ref, lambda _, cast: replace(cast, enabled=False), "narrator mode off")
        return self.state(ref.character.name, ref.id)

    # -- the cast ---------------------------------------------------------------------------

    def add(
        self, character_name: str, name: str, book: str, chat_id: str | None = None
    ) -> CastMember:
        """A new cast member with a memory book of their own (the book must exist)."""
        ref = self._one_on_one(character_name, chat_id)
        book_name = self._books.book(book).name
        member_id = self._new_id()

        def added(chat: Chat, config: NarratorConfig) -> NarratorConfig:
            omniscient = chat_state.bindings_of(chat.header).manual_book
            return add_member(config, name, book_name, member_id=member_id, omniscient=omniscient)

        config = self._change_cast(ref, added, f"cast: added {name.strip()}")
        found = config.member(member_id)
        assert found is not None
        return found

    def retire(self, character_name: str, name: str, chat_id: str | None = None) -> CastMember:
        """Take a member out of the cast (id and book kept, both still theirs)."""
        return self._set_retired(character_name, name, chat_id, True)

    def restore(self, character_name: str, name: str, chat_id: str | None = None) -> CastMember:
        return self._set_retired(character_name, name, chat_id, False)

    def set_active(
        self, character_name: str, names: Sequence[str], chat_id: str | None = None
    ) -> tuple[CastMember, ...]:
        """The active cast for the next generations (no names: nobody)."""
        ref = self._chat_ref(character_name, chat_id)

        def chosen(_: Chat, config: NarratorConfig) -> NarratorConfig:
            members = [find_member(config, name) for name in names]
            for member in members:
                if member.retired:
                    raise CastError(f"{member.name} is retired (charmemory cast restore first)")
            return set_active(config, [member.id for member in members])

        shown = ", ".join(names) or "nobody"
        return self._change_cast(ref, chosen, f"active cast: {shown}").active_members

    def _set_retired(
        self, character_name: str, name: str, chat_id: str | None, retired: bool
    ) -> CastMember:
        ref = self._chat_ref(character_name, chat_id)

        def changed(_: Chat, config: NarratorConfig) -> NarratorConfig:
            member = find_member(config, name)
            if member.retired == retired:
                raise CastError(f"{member.name} is {'already' if retired else 'not'} retired")
            return set_retired(config, member.id, retired)

        verb = "retired" if retired else "restored"
        return find_member(self._change_cast(ref, changed, f"cast: {verb} {name.strip()}"), name)

    # -- what the chat engine asks ----------------------------------------------------------

    def snapshot(self, ref: ChatRef, chat: Chat) -> CastSnapshot | None:
        """The active cast as a generation starts (None: narrator mode is not active)."""
        state = self.state_of(ref, chat)
        return snapshot(state.config, state.omniscient) if state.active else None

    def stamp_sent(self, ref: ChatRef, chat: Chat, message: Message) -> None:
        """Stamp the user's new message with the active cast."""
        state = self.state_of(ref, chat)
        if state.active:
            stamp(message, state.config.active_ids)

    def follow_swipe(self, ref: ChatRef, chat: Chat, message: Message) -> None:
        """The active cast brought back from the chosen swipe's stamp (if it has one)."""
        self._restore(ref, chat, stamp_of(message))

    def follow_deletion(self, ref: ChatRef, chat: Chat) -> None:
        """After deleting from the end: the active cast of the last stamped reply left."""
        self._restore(ref, chat, last_stamped(chat))

    def _restore(self, ref: ChatRef, chat: Chat, ids: Sequence[str] | None) -> None:
        state = self.state_of(ref, chat)
        if ids is None or not state.active:
            return
        restored = set_active(state.config, ids)
        if restored != state.config:
            self._write(chat, restored, state.dropped)

    # -- scene memories ---------------------------------------------------------------------

    def scene_targets(
        self, loaded: LoadedChat, scene: Scene, participants: Sequence[str] | None
    ) -> SceneTargets | None:
        """Where a scene memory of a narrator chat goes (None: narrator mode is not active).

        ``participants`` confirm who was present in a scene with unstamped replies (an
        empty list: nobody); without them such a scene is refused.
        """
        state = self.state_of(loaded.ref, loaded.chat)
        if not state.active or state.omniscient is None:
            return None
        config, omniscient = state.config, state.omniscient
        if not self._books.store.load(omniscient).exists:
            raise NotFoundError(f"the omniscient book {omniscient!r} does not exist")
        issues = book_issues(config, omniscient, self._books.store.names())
        if issues:
            raise CastError(
                f"the cast's books are not valid: {issues[0]} "
                f"(charmemory doctor {loaded.ref.character.name!r} lists every problem)"
            )
        cast = scene_cast(loaded.chat, [line.index for line in scene.lines])
        if cast.stamped:
            if participants is not None:
                present = ", ".join(config.names(cast.member_ids)) or "nobody"
                raise CastError(
                    f"every reply in messages {scene.range} is stamped with its cast "
                    f"(present: {present}); --participants is for scenes with unstamped replies"
                )
            ids: Sequence[str] = cast.member_ids
        elif participants is None:
            names = [member.name for member in suggested(config, cast)]
            raise ConfirmationNeededError(scene.range, cast.unstamped, names)
        else:
            ids = [member.id for member in confirmed(config, participants)]
        return narrator_targets(omniscient, config, ids, label=loaded.ref.id)

    # -- manual mode stays on under narrator chats ------------------------------------------

    def guard_lorebook_mode(self, value: Any, character: str | None) -> None:
        """Refuse turning manual lorebook mode off (``value``, None: unset, for ``character``
        or the workspace) where a chat of a character it applies to has narrator mode on."""
        if value == MANUAL:
            return
        library = self._books.library
        if character is not None:
            names = [character]
            after = value if value is not None else self._settings.value(LOREBOOK_MODE)
        else:
            names = [
                c.name
                for c in library.characters()
                if self._settings.origin(LOREBOOK_MODE, c.name) != "character"
            ]
            after = value
        if after == MANUAL:
            return
        for who in names:
            for ref in library.chats(library.character(who)):
                header = library.load_chat(ref).chat.header
                if ref.group is None and narrator_of(header).config.enabled:
                    raise ConfigError(
                        f"narrator mode is on in {who}'s chat {ref.id}, and it needs manual "
                        f"lorebook mode: turn it off first (charmemory narrator disable {who!r} "
                        f"--chat {ref.id!r})"
                    )

    # -- internals --------------------------------------------------------------------------

    def _chat_ref(self, character_name: str, chat_id: str | None) -> ChatRef:
        library = self._books.library
        return library.chat(library.character(character_name), chat_id)

    def _one_on_one(self, character_name: str, chat_id: str | None) -> ChatRef:
        ref = self._chat_ref(character_name, chat_id)
        if ref.group is not None:
            raise CharMemoryError("narrator mode is for one-on-one chats, not group chats")
        return ref

    def _change_cast(
        self,
        ref: ChatRef,
        change: Callable[[Chat, NarratorConfig], NarratorConfig],
        what: str,
    ) -> NarratorConfig:
        """Apply ``change`` to the chat's cast in one locked write of the chat."""
        with self._books.transactions.open([], ref, cause=CAUSE, detail=what) as write:
            chat = write.chat().chat
            read = narrator_of(chat.header)
            config = change(chat, read.config)
            self._write(chat, config, read.dropped)
            write.save_chat(chat)
        self._activity.record("narrator.cast", what, character=ref.character.name, chat=ref.id)
        return config

    def _write(self, chat: Chat, config: NarratorConfig, dropped: Sequence[str]) -> None:
        """Write the cast back; what reading it dropped is logged, since it is now gone."""
        write_config(chat.header, config)
        if dropped:
            self._activity.record(
                "narrator.cast", "dropped from the cast: " + "; ".join(dropped), level="warning"
            )
