"""Who was in a narrator scene, and the books its memory goes to.

The participants of a range are read from the stamps: when every narrator reply
in it is stamped, they are the union of the replies' member ids (the user's
messages add nobody: the reply's snapshot is what its generation used). When a
reply has no stamp the scene is legacy: the user confirms who was present,
starting from the ids the range's stamps give plus the active cast, and an empty
confirmation means nobody (not everybody, as in group chats). Retired members
are not offered there, but a retired member stamped on a reply still gets its
copy.

The memory is one canonical entry in the omniscient book carrying
`STMB_narratorParticipantIds` (no character filter: cast members are not
cards) and a linked copy in each participant's book with `STMB_canonical:
false`, the canonical uid and `STMB_narratorOwnerIds: [id]`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from charmemory.core.books.entry import link_of
from charmemory.core.books.layout import CopyTarget, SceneTargets
from charmemory.core.books.scenes import SceneRange
from charmemory.core.narrator.cast import CastError, CastMember, NarratorConfig, find_member
from charmemory.core.narrator.stamps import stamp_of
from charmemory.errors import CharMemoryError
from charmemory.formats.chat import Chat
from charmemory.formats.lorebook import LorebookEntry

OWNER_IDS = "STMB_narratorOwnerIds"
PARTICIPANT_IDS = "STMB_narratorParticipantIds"


@dataclass(frozen=True)
class SceneCast:
    """What the stamps of a scene's messages say about who was there."""

    member_ids: tuple[str, ...]
    unstamped: tuple[int, ...]  # narrator replies without a stamp: the scene is legacy

    @property
    def stamped(self) -> bool:
        return not self.unstamped


class ConfirmationNeededError(CharMemoryError):
    """A legacy scene whose participants nobody confirmed."""

    def __init__(self, scene_range: SceneRange, unstamped: Sequence[int], suggested: Sequence[str]):
        self.scene_range = scene_range
        self.unstamped = tuple(unstamped)
        self.suggested = tuple(suggested)
        shown = ", ".join(map(str, unstamped[:8])) + (" ..." if len(unstamped) > 8 else "")
        super().__init__(
            f"messages {scene_range} hold replies without a cast stamp ({shown}): say who was "
            "present with --participants NAME (repeat), or --nobody"
            + (f" (stamps and active cast suggest {', '.join(suggested)})" if suggested else "")
        )


def scene_cast(chat: Chat, indices: Iterable[int]) -> SceneCast:
    """The member ids a scene's messages (given by index) are stamped with."""
    messages = [(index, chat.messages[index]) for index in indices]
    replies = [(index, message) for index, message in messages if not message.is_user]
    authoritative = replies or messages
    unstamped = tuple(index for index, message in authoritative if stamp_of(message) is None)
    read = messages if unstamped else authoritative
    ids = (member_id for _, message in read for member_id in stamp_of(message) or ())
    return SceneCast(tuple(dict.fromkeys(ids)), unstamped)


def suggested(config: NarratorConfig, cast: SceneCast) -> list[CastMember]:
    """Where a legacy scene's confirmation starts: the stamped ids and the active cast."""
    wanted = {*cast.member_ids, *config.active_ids}
    return [member for member in config.current if member.id in wanted]


def confirmed(config: NarratorConfig, names: Sequence[str]) -> tuple[CastMember, ...]:
    """The members a confirmation names (none: nobody was there); retired ones refused."""
    chosen: dict[str, CastMember] = {}
    for name in names:
        member = find_member(config, name)
        if member.retired:
            raise CastError(
                f"{member.name} is retired, so cannot be confirmed as present "
                "(charmemory cast restore brings them back)"
            )
        chosen.setdefault(member.id, member)
    return tuple(chosen.values())


def narrator_targets(
    omniscient: str, config: NarratorConfig, participant_ids: Sequence[str], *, label: str
) -> SceneTargets:
    """The canonical entry in the omniscient book and one copy per participant's book."""
    present = set(participant_ids)
    copies = tuple(
        CopyTarget(member.book, (member.name,), fields={OWNER_IDS: [member.id]})
        for member in config.members
        if member.id in present
    )
    return SceneTargets(
        omniscient,
        copies,
        linked=True,
        fields={PARTICIPANT_IDS: list(dict.fromkeys(participant_ids))},
        group_label=label,
    )


def owner_ids(entry: LorebookEntry) -> tuple[str, ...]:
    """The cast members whose copy an entry is (`STMB_narratorOwnerIds`)."""
    found = entry.raw.get(OWNER_IDS)
    listed = found if isinstance(found, list) else []
    return tuple(i for i in listed if isinstance(i, str) and i)


def prompt_for(entry: LorebookEntry) -> Literal["character", "group"] | None:
    """The prompt an entry is written again with, by its ownership: a copy for exactly one
    cast member (or any linked copy) takes the character prompt; a canonical entry (or one
    naming its scene's participants) the group prompt; anything else neither."""
    link = link_of(entry)
    if len(owner_ids(entry)) == 1 or (link is not None and not link.canonical):
        return "character"
    if link is not None or isinstance(entry.raw.get(PARTICIPANT_IDS), list):
        return "group"
    return None
