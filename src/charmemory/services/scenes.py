"""Scene memories: a range of a chat turned into memory-book entries.

`prepare` reads the scene, decides where it goes, refuses a range that
overlaps a memory already there, and has the model write the memory (and, with
separate prompts, each participant's copy): every call is made before anything
is written, and nothing is. The plan it returns can be accepted, edited or
retried. `save` writes the plan in one transaction with the chat: the entries
in every book, the chat's highest processed message moved to the scene's end,
and the summarised messages hidden if the settings say so. Either all of it is
written or none.

`auto_due` and `after_reply` write a scene memory every `books.auto_interval`
messages, leaving the newest `books.auto_buffer` out; `catch_up` turns a long
chat into consecutive scene memories, stopping at the first failure with what
was saved kept.

In a narrator chat the narrator service says where a scene goes (the omniscient
book and the participants' books, from the replies' cast stamps); a range with
unstamped replies needs its participants confirmed, so catch-up and automatic
memories stop there and name it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from charmemory.core.books import chat_state
from charmemory.core.books.answer import SceneAnswer
from charmemory.core.books.entry import memories, tier_of
from charmemory.core.books.layout import (
    PlacedEntry,
    SceneTargets,
    SceneWriting,
    check_scene_fits,
    confirmed_participants,
    group_targets,
    participants_of,
    place_scene,
    single_book,
)
from charmemory.core.books.presets import ContextEntry, PromptNames, scene_messages
from charmemory.core.books.profiles import Profile
from charmemory.core.books.progress import AutoDecision, auto_range, catch_up_ranges, hide_ranges
from charmemory.core.books.scenes import Scene, SceneRange, compile_scene
from charmemory.core.books.settings import BookSettings
from charmemory.core.books.titles import TitleValues
from charmemory.core.chat import editing
from charmemory.core.chat_user import chat_user_name
from charmemory.core.narrator.scenes import ConfirmationNeededError
from charmemory.errors import CharMemoryError, ConfigError, ConflictError, NotFoundError
from charmemory.formats.chat import message_fingerprint
from charmemory.formats.lorebook import Lorebook
from charmemory.ports import ActivityRecorder, Character, ChatRef, LoadedChat
from charmemory.services.book_profiles import ProfileService
from charmemory.services.books import BookService
from charmemory.services.narrator import NarratorService
from charmemory.services.scene_writer import EntryWriter

SCENE_CAUSE = "scene memory"


@dataclass(frozen=True)
class ScenePlan:
    """A scene memory written by the model and not yet saved."""

    character: Character
    chat: ChatRef
    scene: Scene
    targets: SceneTargets
    profile: Profile
    answer: SceneAnswer
    copy_answers: dict[str, SceneAnswer] = field(default_factory=dict)
    new_book: str | None = None  # auto-created and bound to the chat when saved
    fingerprints: tuple[str, ...] = ()  # of the scene's messages, to notice edits meanwhile
    calls: int = 0

    def edited(self, title: str, content: str, keywords: Sequence[str]) -> ScenePlan:
        """The plan with the canonical entry's text replaced (copies follow it unless
        written separately)."""
        words = tuple(dict.fromkeys(w.strip() for w in keywords if w.strip()))
        return replace(self, answer=SceneAnswer(title.strip(), content.strip(), words))


@dataclass(frozen=True)
class SavedScene:
    plan: ScenePlan
    entries: list[PlacedEntry]
    hidden: list[int]  # messages hidden once saved


@dataclass(frozen=True)
class CatchUp:
    saved: list[SavedScene]
    remaining: list[SceneRange]
    error: str | None = None  # why it stopped early
    # Set when it stopped at a narrator scene whose participants nobody confirmed.
    confirmation: ConfirmationNeededError | None = None


class SceneService:
    def __init__(
        self,
        books: BookService,
        profiles: ProfileService,
        writer: EntryWriter,
        activity: ActivityRecorder,
        *,
        clock: Callable[[], datetime],
        narrator: NarratorService | None = None,
    ):
        self._books = books
        self._profiles = profiles
        self._writer = writer
        self._activity = activity
        self._clock = clock
        self._narrator = narrator

    # -- one scene ------------------------------------------------------------------------

    async def prepare(
        self,
        character_name: str,
        scene_range: SceneRange,
        chat_id: str | None = None,
        *,
        book: str | None = None,
        participants: Sequence[str] | None = None,
        profile: str | None = None,
        targets: SceneTargets | None = None,
        references: Sequence[tuple[str, int]] = (),
    ) -> ScenePlan:
        """Write the memory of ``scene_range`` without saving it.

        ``book`` writes to that book alone; ``targets`` say the books outright;
        otherwise narrator mode or the lorebook mode decides. ``participants`` confirm
        who was in a multi-book scene (an empty list: every member of a group; nobody
        of a narrator's cast, whose scenes take them only when a reply is unstamped).
        """
        character, loaded = self._books.chat(character_name, chat_id)
        settings = self._books.settings(character.name)
        user = chat_user_name(loaded.chat)
        scene = compile_scene(
            loaded.chat,
            scene_range,
            chat_id=loaded.ref.id,
            character=character.name,
            user=user,
            include_hidden=settings.include_hidden,
        )
        new_book = None
        if targets is None:
            targets, new_book = self._targets(character, loaded, scene, book, participants)
        chosen = self._profiles.get(profile)
        books = {name: self._books.store.load(name) for name in targets.books}
        missing = [name for name, found in books.items() if not found.exists and name != new_book]
        if missing:
            raise NotFoundError(f"no lorebook named {missing[0]!r}; bind an existing book")
        check_scene_fits(
            {name: found.book for name, found in books.items()},
            scene.range,
            scene.chat_id,
            allow_overlap=settings.allow_overlap,
        )
        previous = _previous(books[targets.canonical].book, settings.previous_memories)
        reference_entries = [self._reference(name, uid) for name, uid in references]
        names = PromptNames(character.name, user, targets.group_label or scene.chat_id)
        separate = chosen.separate_prompts and bool(targets.copies)
        preset = chosen.group_preset if separate else chosen.preset
        calls = 0
        asked = await self._writer.write(
            character.name,
            chosen,
            scene_messages(
                self._writer.instructions(preset),
                names,
                scene.transcript(),
                previous=previous,
                references=reference_entries,
            ),
        )
        calls += asked.calls
        copy_answers: dict[str, SceneAnswer] = {}
        if separate:
            for target in targets.copies:
                own = await self._writer.write(
                    character.name,
                    chosen,
                    scene_messages(
                        self._writer.instructions(chosen.character_preset),
                        replace(names, char=" and ".join(target.owners)),
                        scene.transcript(),
                        previous=_previous(books[target.book].book, settings.previous_memories),
                        references=reference_entries,
                    ),
                )
                copy_answers[target.book] = own.answer
                calls += own.calls
        return ScenePlan(
            character,
            loaded.ref,
            scene,
            targets,
            chosen,
            asked.answer,
            copy_answers,
            new_book,
            _fingerprints(loaded, scene.range),
            calls,
        )

    def save(self, plan: ScenePlan) -> SavedScene:
        """Write the plan's entries and the chat's progress, all together or not at all."""
        settings = self._books.settings(plan.character.name)
        scene = plan.scene
        names = plan.targets.books
        detail = f"{plan.chat.id} messages {scene.range}"
        with self._books.transactions.open(
            names, plan.chat, cause=SCENE_CAUSE, detail=detail
        ) as write:
            loaded = {name: write.book(name) for name in names}
            for name, found in loaded.items():
                if not found.exists and name != plan.new_book:
                    raise ConflictError(f"lorebook {name!r} disappeared; nothing was written")
            books = {name: found.book for name, found in loaded.items()}
            check_scene_fits(
                books, scene.range, scene.chat_id, allow_overlap=settings.allow_overlap
            )
            chat = write.chat()
            if _fingerprints(chat, scene.range) != plan.fingerprints:
                raise ConflictError(
                    f"messages {scene.range} changed since the memory was written; "
                    "nothing was saved (write it again)"
                )
            placed = place_scene(books, plan.targets, self._writing(plan))
            for name in names:
                write.save(name, books[name])
            header = chat.chat.header
            chat_state.update_state(header, **{chat_state.HIGHEST: scene.range.last})
            if plan.new_book is not None:
                chat_state.set_chat_book(header, plan.new_book)
            hidden: list[int] = []
            for part in hide_ranges(settings.auto_hide, settings.keep_unhidden, scene.range):
                hidden += editing.set_hidden(chat.chat, part.first, part.last, True)
            write.save_chat(chat.chat)
        self._activity.record(
            "books.scene",
            f"scene memory {placed[0].title!r} of messages {scene.range} in "
            + ", ".join(entry.book for entry in placed),
            character=plan.character.name,
            chat=plan.chat.id,
        )
        return SavedScene(plan, placed, hidden)

    async def create(
        self,
        character_name: str,
        scene_range: SceneRange,
        chat_id: str | None = None,
        **options: Any,
    ) -> SavedScene:
        """Prepare and save at once (no preview)."""
        return self.save(await self.prepare(character_name, scene_range, chat_id, **options))

    # -- automatic and catch-up -----------------------------------------------------------

    def auto_due(self, character_name: str, chat_id: str | None = None) -> AutoDecision:
        character, loaded = self._books.chat(character_name, chat_id)
        settings = self._books.settings(character.name)
        return auto_range(
            len(loaded.chat.messages),
            chat_state.highest_processed(loaded.chat.header),
            settings.auto_interval,
            settings.auto_buffer,
        )

    async def after_reply(self, ref: ChatRef, lock: asyncio.Lock) -> SavedScene | None:
        """Write the automatic scene memory now due, if any; the chat's lock is held
        only while it is saved, not while the model writes it."""
        character = ref.character.name
        if not self._books.settings(character).auto_enabled:
            return None
        decision = self.auto_due(character, ref.id)
        if not decision.due or decision.range is None:
            return None
        plan = await self.prepare(character, decision.range, ref.id)
        async with lock:
            return self.save(plan)

    async def catch_up(
        self,
        character_name: str,
        chat_id: str | None = None,
        *,
        interval: int | None = None,
        first: int | None = None,
        last: int | None = None,
        on_saved: Callable[[SavedScene], object] | None = None,
    ) -> CatchUp:
        """Scene memories for consecutive ranges, from the message after the highest one
        processed (or ``first``) to the last (or ``last``); stops at the first failure."""
        character, loaded = self._books.chat(character_name, chat_id)
        settings = self._books.settings(character.name)
        highest = chat_state.highest_processed(loaded.chat.header)
        start = first if first is not None else (highest + 1 if highest is not None else 0)
        end = last if last is not None else len(loaded.chat.messages) - 1
        ranges = catch_up_ranges(start, end, interval or settings.auto_interval)
        saved: list[SavedScene] = []
        for position, scene_range in enumerate(ranges):
            try:
                plan = await self.prepare(character.name, scene_range, loaded.ref.id)
                done = self.save(plan)
            except ConfirmationNeededError as error:
                return CatchUp(saved, ranges[position:], str(error), confirmation=error)
            except CharMemoryError as error:
                return CatchUp(saved, ranges[position:], f"messages {scene_range}: {error}")
            saved.append(done)
            if on_saved is not None:
                on_saved(done)
        return CatchUp(saved, [])

    # -- internals --------------------------------------------------------------------------

    def _targets(
        self,
        character: Character,
        loaded: LoadedChat,
        scene: Scene,
        book: str | None,
        participants: Sequence[str] | None,
    ) -> tuple[SceneTargets, str | None]:
        narrator = self._narrator
        if narrator is not None and narrator.state_of(loaded.ref, loaded.chat).active:
            if book is not None:
                raise ConfigError(
                    "narrator mode writes a scene to the omniscient book and the books of the "
                    "cast present; --book is not used in a narrator chat"
                )
            narrated = narrator.scene_targets(loaded, scene, participants)
            if narrated is not None:
                return narrated, None
        if book is not None:
            return single_book(self._books.book(book).name), None
        settings: BookSettings = self._books.settings(character.name)
        bindings = chat_state.bindings_of(loaded.chat.header)
        mode = settings.lorebook_mode
        if mode == "manual":
            if bindings.manual_book is None:
                raise ConfigError(
                    f"manual mode: no memory book is chosen for {loaded.ref.id} "
                    f"(charmemory books bind {character.name!r} BOOK --manual)"
                )
            if not bindings.member_books:
                return single_book(bindings.manual_book), None
            members = self._books.members(loaded)
            detected = participants_of(scene, members)
            chosen = confirmed_participants(members, detected, participants)
            return (
                group_targets(
                    bindings.manual_book, chosen, bindings.member_books, group_label=loaded.ref.id
                ),
                None,
            )
        if bindings.chat_book is not None and (
            mode == "automatic" or self._books.store.load(bindings.chat_book).exists
        ):
            return single_book(bindings.chat_book), None
        if mode == "auto-create":
            name = self._books.new_book_name(character, loaded.ref, scene.user)
            return single_book(name), name
        raise ConfigError(
            f"no lorebook is bound to {loaded.ref.id} "
            f"(charmemory books bind {character.name!r} BOOK, or pass --book, "
            "or set books.lorebook_mode auto-create)"
        )

    def _reference(self, book: str, uid: int) -> ContextEntry:
        entry = self._books.book(book).book.entries.get(uid)
        if entry is None:
            raise NotFoundError(f"{book} has no entry {uid}")
        return ContextEntry(entry.comment or f"{book}#{uid}", entry.content)

    def _writing(self, plan: ScenePlan) -> SceneWriting:
        now = self._clock().astimezone()
        return SceneWriting(
            plan.scene,
            plan.answer,
            plan.profile.title_format,
            plan.profile.entry,
            TitleValues(
                char=plan.character.name,
                user=plan.scene.user,
                profile=plan.profile.name,
                date=now.strftime("%Y-%m-%d"),
                time=now.strftime("%H:%M:%S"),
            ),
            plan.copy_answers,
        )


def _previous(book: Lorebook, count: int) -> list[ContextEntry]:
    """The book's ``count`` latest scene memories, oldest first."""
    if count <= 0:
        return []
    scenes = [e for e in memories(list(book.entries.values())) if tier_of(e) == 0]
    return [ContextEntry(entry.comment, entry.content, entry.keys) for entry in scenes[-count:]]


def _fingerprints(loaded: LoadedChat, scene_range: SceneRange) -> tuple[str, ...]:
    messages = loaded.chat.messages[scene_range.first : scene_range.last + 1]
    return tuple(message_fingerprint(message) for message in messages)
