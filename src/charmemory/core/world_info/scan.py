"""The text World Info keys are looked for in, as SillyTavern's WorldInfoBuffer builds it.

The scan text of an entry is, newest first, the last `scanDepth` chat messages
(each `Name: text` when names are included, trimmed), then the card and persona
fields the entry opted into, then the prompts scanned with the chat (Author's
Note, depth prompt), then the content activated on earlier recursion steps.
Every part starts with `\\x01` and parts are joined by a newline, so a regex
key can tell messages apart (`/\\x01Wren:[^\\x01]*hello/`) and no whole word
spans two parts. A scan depth of 0 scans nothing at all.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from charmemory.core.world_info.entries import GenerationType
from charmemory.core.world_info.haystack import Haystack
from charmemory.core.world_info.keys import KeyMatcher
from charmemory.core.world_info.settings import WorldInfoSettings
from charmemory.formats.chat import Chat

MAX_SCAN_DEPTH = 1000
_MARK = "\x01"
_JOINER = "\n\x01"
FIELD_LABELS = (
    "persona description",
    "character description",
    "character personality",
    "character depth prompt",
    "scenario",
    "creator notes",
)


@dataclass(frozen=True)
class ScanMessage:
    """A chat message as the scan sees it: its id in the chat, speaker and active text."""

    id: int
    name: str
    text: str


@dataclass(frozen=True)
class CardFields:
    """The texts an entry may opt into scanning (`matchPersonaDescription`, ...)."""

    persona_description: str = ""
    character_description: str = ""
    character_personality: str = ""
    character_depth_prompt: str = ""
    scenario: str = ""
    creator_notes: str = ""

    def texts(self) -> tuple[str, str, str, str, str, str]:
        return (
            self.persona_description,
            self.character_description,
            self.character_personality,
            self.character_depth_prompt,
            self.scenario,
            self.creator_notes,
        )


@dataclass(frozen=True)
class ScanContext:
    """What one generation's World Info scan reads besides the lorebooks."""

    messages: tuple[ScanMessage, ...] = ()  # the prompt's chat messages, oldest first
    fields: CardFields = CardFields()
    injections: tuple[tuple[str, str], ...] = ()  # (label, text) scanned with the chat
    generation_type: GenerationType = "normal"
    character: str = ""  # the character's file name, for `characterFilter.names`
    character_tags: tuple[str, ...] = ()  # for `characterFilter.tags`


def prompt_messages(chat: Chat, generation_type: GenerationType = "normal") -> list[ScanMessage]:
    """The chat messages a prompt is built from, oldest first.

    Hidden (`is_system`) messages are left out; for a swipe the last message is
    the one being replaced, so it is left out too, as SillyTavern does.
    """
    visible = [
        ScanMessage(index, message.name, message.active_text)
        for index, message in enumerate(chat.messages)
        if not message.is_hidden
    ]
    if generation_type == "swipe" and visible:
        visible.pop()
    return visible


class ScanBuffer:
    """The scan texts of one generation: built per scan depth and opted-in fields, cached."""

    def __init__(self, context: ScanContext, settings: WorldInfoSettings) -> None:
        self._settings = settings
        self._newest = context.messages[::-1][:MAX_SCAN_DEPTH]
        # (label, scan line) of the newest messages, newest first, read only as deep as asked:
        # a long chat's older messages matter only to an entry that scans that deep.
        self._messages: list[tuple[str, str]] = []
        self._fields = list(zip(FIELD_LABELS, context.fields.texts(), strict=True))
        self._injections = [(label, text) for label, text in context.injections if text]
        self._recursion: list[list[tuple[str, str]]] = []
        self._recursion_texts: list[str] = []  # each pass's content, joined as SillyTavern does
        self._built: dict[
            tuple[int, tuple[bool, ...], bool, int], tuple[tuple[str, ...], Haystack]
        ] = {}
        self.skew = 0
        self.chat_length = len(context.messages)

    @property
    def depth(self) -> int:
        """The global scan depth, widened by minimum-activation passes."""
        return self._settings.scan_depth + self.skew

    @property
    def has_recursion(self) -> bool:
        return bool(self._recursion)

    def add_recursion(self, parts: Sequence[tuple[str, str]]) -> None:
        """Content activated in one pass, as (label, text), to be scanned by later passes."""
        if any(text for _, text in parts):
            self._recursion.append(list(parts))
            self._recursion_texts.append("\n".join(text for _, text in parts))

    def haystack(
        self, scan_depth: int | None, flags: tuple[bool, ...], include_recursion: bool
    ) -> Haystack:
        return self._entry(scan_depth, flags, include_recursion)[1]

    def parts(
        self, scan_depth: int | None, flags: tuple[bool, ...], include_recursion: bool
    ) -> tuple[str, ...]:
        """The parts the scan text joins, in order (empty when the scan depth is 0)."""
        return self._entry(scan_depth, flags, include_recursion)[0]

    def locate(
        self, matcher: KeyMatcher, scan_depth: int | None, flags: tuple[bool, ...], recursion: bool
    ) -> str:
        """Which part of the scan text `matcher` matches in, for explanations."""
        depth = self._effective_depth(scan_depth)
        for label, text in self._labelled(depth, flags, recursion):
            if matcher.matches(Haystack(_MARK + text, (text,))):
                return label
        return "the scan text"

    def _entry(
        self, scan_depth: int | None, flags: tuple[bool, ...], recursion: bool
    ) -> tuple[tuple[str, ...], Haystack]:
        depth = self._effective_depth(scan_depth)
        key = (depth, flags, recursion, len(self._recursion) if recursion else 0)
        found = self._built.get(key)
        if found is None:
            chunks = self._chunks(depth, flags, recursion)
            text = _MARK + _JOINER.join(chunks) if chunks else ""
            found = self._built[key] = (chunks, Haystack(text, chunks))
        return found

    def _effective_depth(self, scan_depth: int | None) -> int:
        depth = self.depth if scan_depth is None else scan_depth
        return min(depth, MAX_SCAN_DEPTH)

    def _chunks(self, depth: int, flags: tuple[bool, ...], recursion: bool) -> tuple[str, ...]:
        if depth <= 0:
            return ()
        chunks = [text for _, text in self._newest_read(depth)]
        chunks += [
            text for (_, text), wanted in zip(self._fields, flags, strict=True) if wanted and text
        ]
        chunks += [text for _, text in self._injections]
        if recursion:
            chunks += self._recursion_texts
        return tuple(chunks)

    def _labelled(
        self, depth: int, flags: tuple[bool, ...], recursion: bool
    ) -> list[tuple[str, str]]:
        if depth <= 0:
            return []
        parts = self._newest_read(depth)
        parts += [
            field for field, wanted in zip(self._fields, flags, strict=True) if wanted and field[1]
        ]
        parts += self._injections
        if recursion:
            parts += [part for step in self._recursion for part in step]
        return parts

    def _newest_read(self, depth: int) -> list[tuple[str, str]]:
        """(label, scan line) of the ``depth`` newest messages, newest first."""
        for message in self._newest[len(self._messages) : depth]:
            self._messages.append((_message_label(message), _scan_line(message, self._settings)))
        return self._messages[:depth]


def _scan_line(message: ScanMessage, settings: WorldInfoSettings) -> str:
    text = f"{message.name}: {message.text}" if settings.include_names else message.text
    return text.strip()


def _message_label(message: ScanMessage) -> str:
    return f"message {message.id} ({message.name})" if message.name else f"message {message.id}"
