"""The Active Cast drawer on a narrator chat's screen: the members to tick for the next
reply, on the side and folded as the interface settings `narrator.drawer_*` keep it."""

from __future__ import annotations

from dataclasses import dataclass

from charmemory.composition import App
from charmemory.core.narrator.cast import CastMember
from charmemory.core.narrator.mode import activation
from charmemory.formats.chat import ChatHeader
from charmemory.ports import ChatRef

POSITION = "narrator.drawer_position"
COLLAPSED = "narrator.drawer_collapsed"


@dataclass(frozen=True)
class CastDrawer:
    url: str  # the chat's, /chat/<character>/<chat>
    narrator_url: str  # the chat's narrator screen
    members: tuple[CastMember, ...]  # the cast that is not retired
    active: frozenset[str]  # ids ticked for the next reply
    position: str  # right | left
    collapsed: bool

    @property
    def count(self) -> int:
        return len(self.active)


def cast_drawer_view(app: App, ref: ChatRef, header: ChatHeader, url: str) -> CastDrawer | None:
    """The drawer of a chat whose narrator mode is active (None: it has none)."""
    mode = app.books.settings(ref.character.name).lorebook_mode
    state = activation(header, group_chat=ref.group is not None, lorebook_mode=mode)
    if not state.active:
        return None
    return CastDrawer(
        url,
        "/narrator" + url.removeprefix("/chat"),
        state.config.current,
        frozenset(m.id for m in state.config.active_members),
        str(app.settings.value(POSITION)),
        bool(app.settings.value(COLLAPSED)),
    )
