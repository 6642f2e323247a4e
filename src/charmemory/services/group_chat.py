"""Group chats: SillyTavern's groups, who replies in what order, and each member's turn.

A group is a SillyTavern group file (`groups/<id>.json`); its chats hold every
member's replies. A message from the user is answered by the members its reply
order drafts (muted members never are), one after the other, each with its own
card, memories, lorebooks and model: the chat service runs each turn on the
group chat as that member's (`ChatService.reply_in_group`). Every member hears
every message, muted ones too, so after each reply every member's own
extraction follows, with its own watermark. A member added while a chat is
under way has its join recorded in the group, so its memories start there.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime

from charmemory.core.chat.group_joins import join_now
from charmemory.core.chat.group_order import (
    Member,
    Spoken,
    Strategy,
    reply_order,
    speaker_to_redo,
    strategy_code,
    strategy_named,
    talkativeness,
)
from charmemory.core.chat.messages import (
    group_greeting,
    iso_time,
    new_chat_header,
    user_message,
)
from charmemory.core.prompt.macros import MacroContext
from charmemory.errors import CharMemoryError, NotFoundError
from charmemory.formats.chat import Chat
from charmemory.formats.group import Group
from charmemory.formats.send_date import format_humanized
from charmemory.ports import ActivityRecorder, Character, CharacterLibrary, ChatRef, LoadedGroup
from charmemory.services.chat import ChatService, Kind, OnDelta, Turn
from charmemory.services.prompting import PromptPreparer

OnSpeaker = Callable[[str], object]  # told each drafted member's name before it speaks


@dataclass(frozen=True)
class GroupReply:
    speaker: str
    turn: Turn


@dataclass(frozen=True)
class GroupRound:
    """What one message (or one trigger) brought: the replies, in order."""

    group: str
    chat: str
    replies: list[GroupReply]


@dataclass(frozen=True)
class MemberState:
    id: str  # the card file name, as SillyTavern lists members
    name: str
    present: bool  # the card is in the workspace
    muted: bool
    joined_at: int | None = None  # in the group's current chat, when it joined late


@dataclass(frozen=True)
class GroupView:
    id: str
    name: str
    strategy: Strategy
    allow_self_responses: bool
    members: list[MemberState]
    chat: str | None  # the chat SillyTavern opens for the group
    chats: list[str]


class GroupChatService:
    def __init__(
        self,
        library: CharacterLibrary,
        chat: ChatService,
        preparer: PromptPreparer,
        activity: ActivityRecorder,
        *,
        clock: Callable[[], datetime],
        rng: Callable[[], random.Random] = random.Random,
    ):
        self._library = library
        self._chat = chat
        self._preparer = preparer
        self._activity = activity
        self._clock = clock
        self._rng = rng

    # -- groups -------------------------------------------------------------------------

    def view(self, name: str) -> GroupView:
        loaded = self._library.group(name)
        group = loaded.group
        joins = group.joins(group.chat_id) if group.chat_id else {}
        members = [
            MemberState(
                member_id,
                found.name if found is not None else member_id,
                found is not None,
                member_id in group.disabled_members,
                joins[member_id].at if member_id in joins else None,
            )
            for member_id, found in self._members(group)
        ]
        return GroupView(
            group.id,
            group.name,
            strategy_named(group.activation_strategy),
            group.allow_self_responses,
            members,
            group.chat_id,
            list(group.chats),
        )

    def groups(self) -> list[GroupView]:
        return [self.view(loaded.group.id) for loaded in self._library.groups()]

    def create(
        self,
        name: str,
        members: Sequence[str],
        *,
        strategy: Strategy = "natural",
        allow_self_responses: bool = False,
    ) -> GroupView:
        """A new group with a first chat holding each member's greeting."""
        characters = self._characters(members)
        if not characters:
            raise CharMemoryError("a group needs at least one member")
        now = self._clock()
        chat_id = format_humanized(now.astimezone())
        group = Group.new(
            str(round(now.timestamp() * 1000)),
            name.strip() or "Group: " + ", ".join(c.name for c in characters),
            [c.card_path.name for c in characters],
            chat_id,
        )
        group.set("activation_strategy", strategy_code(strategy))
        group.set("allow_self_responses", allow_self_responses)
        loaded = self._library.create_group(group)
        self._start_chat(loaded, chat_id)
        self._activity.record("group.new", f"new group {group.name!r}", chat=chat_id)
        return self.view(group.id)

    def new_chat(self, name: str) -> str:
        """A new chat for the group, made its current one; returns its id."""
        loaded = self._library.group(name)
        chat_id = format_humanized(self._clock().astimezone())
        group = loaded.group
        if chat_id in group.chats:
            raise CharMemoryError(f"group {group.name!r} already has a chat {chat_id!r}")
        group.set("chats", [*group.chats, chat_id])
        group.set("chat_id", chat_id)
        self._start_chat(self._library.save_group(loaded, group), chat_id)
        return chat_id

    def add(self, name: str, members: Sequence[str]) -> GroupView:
        """New members, last in the list; in chats under way they hear from now on."""
        loaded = self._library.group(name)
        group = loaded.group
        added = [c for c in self._characters(members) if c.card_path.name not in group.members]
        if not added:
            raise CharMemoryError("they are all members already")
        date = iso_time(self._clock())
        for chat_id in group.chats:
            ref = self._library.group_chat(loaded, added[0], chat_id)
            if not ref.path.is_file():
                continue
            join = join_now(self._library.load_chat(ref).chat, date)
            if join.at:
                for character in added:
                    group.record_join(chat_id, character.card_path.name, join)
        group.set("members", [*group.members, *(c.card_path.name for c in added)])
        self._library.save_group(loaded, group)
        return self.view(group.id)

    def remove(self, name: str, members: Sequence[str]) -> GroupView:
        loaded = self._library.group(name)
        gone = {self._member_id(loaded.group, member) for member in members}
        group = loaded.group
        group.set("members", [m for m in group.members if m not in gone])
        group.set("disabled_members", [m for m in group.disabled_members if m not in gone])
        self._library.save_group(loaded, group)
        return self.view(group.id)

    def mute(self, name: str, members: Sequence[str], *, muted: bool = True) -> GroupView:
        """Muted members never speak but still hear (and remember)."""
        loaded = self._library.group(name)
        group = loaded.group
        chosen = {self._member_id(group, member) for member in members}
        disabled = [m for m in group.disabled_members if m not in chosen]
        if muted:
            disabled += [m for m in group.members if m in chosen]
        group.set("disabled_members", disabled)
        self._library.save_group(loaded, group)
        return self.view(group.id)

    def set_strategy(
        self, name: str, strategy: Strategy, *, allow_self_responses: bool | None = None
    ) -> GroupView:
        loaded = self._library.group(name)
        group = loaded.group
        group.set("activation_strategy", strategy_code(strategy))
        if allow_self_responses is not None:
            group.set("allow_self_responses", allow_self_responses)
        self._library.save_group(loaded, group)
        return self.view(group.id)

    # -- turns --------------------------------------------------------------------------

    async def send(
        self,
        name: str,
        text: str,
        chat_id: str | None = None,
        *,
        new: bool = False,
        on_delta: OnDelta | None = None,
        on_speaker: OnSpeaker | None = None,
        stop: asyncio.Event | None = None,
    ) -> GroupRound:
        """The user's message, then the replies of the members its reply order drafts."""
        if not text.strip():
            raise CharMemoryError("the message is empty")
        loaded, chat_id = self._group_chat(name, chat_id, new=new)
        ref = self._any_member_ref(loaded, chat_id)
        async with self._chat.chat_lock(ref):
            chat = self._library.load_chat(ref)
            before = _spoken(chat.chat)
            persona = self._preparer.persona(chat.chat)
            chat.chat.append(user_message(persona.name, text, self._clock()))
            self._library.save_chat(chat, chat.chat)
            drafted = self._drafted(loaded.group, before, text)
            return await self._replies(loaded, chat_id, drafted, on_delta, on_speaker, stop)

    async def trigger(
        self,
        name: str,
        chat_id: str | None = None,
        *,
        member: str | None = None,
        on_delta: OnDelta | None = None,
        on_speaker: OnSpeaker | None = None,
        stop: asyncio.Event | None = None,
    ) -> GroupRound:
        """Replies without a user message: ``member``'s (muted or not), else the drafted ones."""
        loaded, chat_id = self._group_chat(name, chat_id)
        ref = self._any_member_ref(loaded, chat_id)
        async with self._chat.chat_lock(ref):
            if member is not None:
                drafted = [self._member_id(loaded.group, member)]
            else:
                chat = self._library.load_chat(ref).chat
                drafted = self._drafted(loaded.group, _spoken(chat), "")
            return await self._replies(loaded, chat_id, drafted, on_delta, on_speaker, stop)

    async def redo(
        self,
        name: str,
        kind: Kind,
        chat_id: str | None = None,
        *,
        on_delta: OnDelta | None = None,
        stop: asyncio.Event | None = None,
    ) -> GroupReply:
        """A swipe or continuation of the last reply, by the member who wrote it."""
        if kind not in ("swipe", "continue"):
            raise CharMemoryError(f"a group chat can swipe or continue, not {kind}")
        loaded, chat_id = self._group_chat(name, chat_id)
        ref = self._any_member_ref(loaded, chat_id)
        async with self._chat.chat_lock(ref):
            chat = self._library.load_chat(ref).chat
            members = self._order_members(loaded.group, include_muted=True)
            speaker = speaker_to_redo(members, _spoken(chat), self._rng())
            if speaker is None:
                raise CharMemoryError("the last reply's writer is no longer in the group")
            character = self._character_of(loaded.group, speaker)
            turn = await self._chat.reply_in_group(
                self._library.group_chat(loaded, character, chat_id),
                batch=_batch(self._clock()),
                kind=kind,
                on_delta=on_delta,
                stop=stop,
            )
            return GroupReply(character.name, turn)

    async def _replies(
        self,
        loaded: LoadedGroup,
        chat_id: str,
        drafted: list[str],
        on_delta: OnDelta | None,
        on_speaker: OnSpeaker | None,
        stop: asyncio.Event | None,
    ) -> GroupRound:
        batch = _batch(self._clock())
        replies: list[GroupReply] = []
        for member_id in drafted:
            if stop is not None and stop.is_set():
                break
            character = self._character_of(loaded.group, member_id)
            if on_speaker is not None:
                on_speaker(character.name)
            turn = await self._chat.reply_in_group(
                self._library.group_chat(loaded, character, chat_id),
                batch=batch,
                on_delta=on_delta,
                stop=stop,
            )
            replies.append(GroupReply(character.name, turn))
        return GroupRound(loaded.group.name, chat_id, replies)

    def _drafted(self, group: Group, chat: list[Spoken], user_input: str) -> list[str]:
        return reply_order(
            strategy_named(group.activation_strategy),
            self._order_members(group, include_muted=False),
            chat,
            user_input=user_input,
            allow_self_responses=group.allow_self_responses,
            rng=self._rng(),
        )

    # -- places and members ---------------------------------------------------------------

    def _group_chat(
        self, name: str, chat_id: str | None, *, new: bool = False
    ) -> tuple[LoadedGroup, str]:
        """The group and the chat an operation is on: the one named, a new one, or its current."""
        if new or not (chat_id or self._library.group(name).group.chats):
            chat_id = self.new_chat(name)
        loaded = self._library.group(name)
        chosen = chat_id or loaded.group.chat_id or loaded.group.chats[-1]
        if chosen not in loaded.group.chats:
            known = ", ".join(loaded.group.chats) or "none"
            raise NotFoundError(
                f"group {loaded.group.name!r} has no chat {chosen!r}; chats: {known}"
            )
        return loaded, chosen

    def _start_chat(self, loaded: LoadedGroup, chat_id: str) -> None:
        """A new chat opening with every member's greeting, as SillyTavern starts one."""
        characters = [c for _, c in self._members(loaded.group) if c is not None]
        if not characters:
            raise CharMemoryError(f"none of the members of {loaded.group.name!r} is here")
        now = self._clock()
        chat = Chat(new_chat_header())
        rng = self._rng()
        user = self._preparer.persona(chat).name
        names = ", ".join(self._names(loaded.group))
        for character in characters:
            card = character.card
            # One greeting at random among the first message and the alternates.
            texts = [t for t in (card.first_mes, *card.alternate_greetings) if t]
            if not texts:
                continue
            text = texts[int(rng.random() * len(texts))]
            macros = MacroContext(user=user, char=character.name, rng=rng, now=now, group=names)
            gen_id = now.timestamp() * 1000 * rng.random() * 1_000_000
            chat.append(
                group_greeting(
                    character.name,
                    macros.substitute(text.strip()),
                    character.card_path.name,
                    now,
                    gen_id,
                )
            )
        self._library.create_group_chat(loaded, characters[0], chat_id, chat)

    def _any_member_ref(self, loaded: LoadedGroup, chat_id: str) -> ChatRef:
        present = next((c for _, c in self._members(loaded.group) if c is not None), None)
        if present is None:
            raise CharMemoryError(f"none of the members of {loaded.group.name!r} is here")
        return self._library.group_chat(loaded, present, chat_id)

    def _members(self, group: Group) -> list[tuple[str, Character | None]]:
        return list(zip(group.members, self._library.group_members(group), strict=True))

    def _names(self, group: Group) -> list[str]:
        return [c.name if c is not None else m for m, c in self._members(group)]

    def _order_members(self, group: Group, *, include_muted: bool) -> list[Member]:
        return [
            Member(member_id, c.name, talkativeness(_talkativeness_value(c)))
            for member_id, c in self._members(group)
            if c is not None and (include_muted or member_id not in group.disabled_members)
        ]

    def _character_of(self, group: Group, member_id: str) -> Character:
        for found_id, character in self._members(group):
            if found_id == member_id and character is not None:
                return character
        raise NotFoundError(f"member {member_id!r} of {group.name!r} has no card here")

    def _member_id(self, group: Group, name: str) -> str:
        """A member by card name, card file name or card file stem (case-insensitive)."""
        wanted = name.casefold()
        for member_id, character in self._members(group):
            known = [member_id] + ([character.name, character.stem] if character else [])
            if wanted in (k.casefold() for k in known):
                return member_id
        members = ", ".join(self._names(group)) or "none"
        raise NotFoundError(f"{name!r} is not a member of {group.name!r}; members: {members}")

    def _characters(self, names: Sequence[str]) -> list[Character]:
        found: dict[str, Character] = {}
        for name in names:
            character = self._library.character(name)
            found.setdefault(character.card_path.name, character)
        return list(found.values())


def _spoken(chat: Chat) -> list[Spoken]:
    return [
        Spoken(
            name=message.name,
            is_user=message.is_user,
            is_hidden=message.is_hidden,
            is_narrator=message.role == "narrator",
            member=_str_or_none(message.data.get("original_avatar")),
            text=message.mes,
        )
        for message in chat.messages
    ]


def _talkativeness_value(character: Character) -> object:
    """`data.extensions.talkativeness`, else the top-level field SillyTavern also writes."""
    value = character.card.extensions.get("talkativeness")
    return value if value is not None else character.card.raw.get("talkativeness")


def _batch(at: datetime) -> int:
    """SillyTavern's `group_generation_id`: the time a round of replies began, in ms."""
    return round(at.timestamp() * 1000)


def _str_or_none(value: object) -> str | None:
    return value if isinstance(value, str) and value else None
