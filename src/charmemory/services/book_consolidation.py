"""Consolidating a memory book: entries of one tier folded into one entry of the next.

`preview` has the model summarise the chosen entries (by default every enabled
entry of the tier below) into one summary; nothing is written. `apply` adds the
summary to the book, optionally disabling its sources (each then names the
summary), in one versioned write that `books undo` reverts. A book of linked
copies is one character's view: its prompt says that scenes missing from it
are gaps in that character's knowledge, not events that never happened.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from charmemory.core.books.answer import SceneAnswer
from charmemory.core.books.entry import link_of, memory_entry
from charmemory.core.books.presets import (
    CONSOLIDATION,
    ContextEntry,
    PromptNames,
    entry_messages,
    with_names,
)
from charmemory.core.books.tiers import (
    DISABLED_BY,
    default_title_format,
    eligible_sources,
    next_summary_number,
    summary_draft,
    summary_title,
    tier_name,
    tier_named,
)
from charmemory.errors import CharMemoryError, ConflictError, NotFoundError
from charmemory.formats.lorebook import LorebookEntry
from charmemory.ports import ActivityRecorder
from charmemory.services.book_profiles import ProfileService
from charmemory.services.books import BookService
from charmemory.services.scene_writer import EntryWriter

CONSOLIDATION_CAUSE = "consolidation"


@dataclass(frozen=True)
class ConsolidationPlan:
    book: str
    tier: int
    sources: tuple[int, ...]
    answer: SceneAnswer
    before: dict[int, str]  # each source's content when the summary was written
    profile: str


@dataclass(frozen=True)
class Consolidated:
    book: str
    uid: int
    title: str
    disabled: tuple[int, ...]


class BookConsolidation:
    def __init__(
        self,
        books: BookService,
        profiles: ProfileService,
        writer: EntryWriter,
        activity: ActivityRecorder,
    ):
        self._books = books
        self._profiles = profiles
        self._writer = writer
        self._activity = activity

    async def preview(
        self,
        book: str,
        *,
        tier: str = "arc",
        uids: Sequence[int] | None = None,
        profile: str | None = None,
    ) -> ConsolidationPlan:
        """The summary of ``uids`` (default: every eligible entry), written but not saved."""
        target = tier_named(tier)
        loaded = self._books.book(book)
        eligible = {entry.uid: entry for entry in eligible_sources(loaded.book, target)}
        if uids is None:
            sources = list(eligible.values())
        else:
            missing = [uid for uid in uids if uid not in eligible]
            if missing:
                raise NotFoundError(
                    f"{loaded.name} has no enabled {tier_name(target - 1)} entry {missing[0]}"
                )
            sources = [eligible[uid] for uid in dict.fromkeys(uids)]
        if not sources:
            below = tier_name(target - 1)
            raise CharMemoryError(
                f"nothing to consolidate: {loaded.name} has no enabled {below} entries"
            )
        chosen = self._profiles.get(profile)
        owners = _owners(sources)
        chat_character, user = self._books.people_of(sources)
        name = " and ".join(owners) if owners else chat_character
        instructions = with_names(
            CONSOLIDATION, tier=tier_name(target), sources=f"{tier_name(target - 1)} entries"
        )
        asked = await self._writer.write(
            chat_character,
            chosen,
            entry_messages(
                instructions,
                PromptNames(name, user),
                [ContextEntry(entry.comment, entry.content) for entry in sources],
                gap_note=bool(owners),
            ),
        )
        return ConsolidationPlan(
            loaded.name,
            target,
            tuple(entry.uid for entry in sources),
            asked.answer,
            {entry.uid: entry.content for entry in sources},
            chosen.name,
        )

    def apply(self, plan: ConsolidationPlan, *, disable_sources: bool = False) -> Consolidated:
        profile = self._profiles.get(plan.profile)
        detail = f"{tier_name(plan.tier)} of entries {', '.join(map(str, plan.sources))}"
        with self._books.transactions.open(
            [plan.book], cause=CONSOLIDATION_CAUSE, detail=detail
        ) as write:
            lore = write.book(plan.book).book
            sources = []
            for uid in plan.sources:
                entry = lore.entries.get(uid)
                if entry is None or entry.content != plan.before[uid]:
                    raise ConflictError(
                        f"{plan.book} entry {uid} changed since the summary was written; "
                        "nothing was saved"
                    )
                sources.append(entry)
            number = next_summary_number(lore, plan.tier)
            title = summary_title(
                plan.tier, default_title_format(plan.tier), plan.answer.title, number
            )
            draft = summary_draft(
                title, plan.answer.content, plan.answer.keywords, plan.tier, sources
            )
            uid = lore.next_uid()
            lore.put(memory_entry(uid, draft, profile.entry))
            disabled = tuple(plan.sources) if disable_sources else ()
            for source in disabled:
                lore.update(source, disable=True, **{DISABLED_BY: uid})
            write.save(plan.book, lore)
        self._activity.record("books.consolidation", f"{plan.book}: {title} ({detail})")
        return Consolidated(plan.book, uid, title, disabled)


def _owners(sources: Sequence[LorebookEntry]) -> list[str]:
    """Whose copies the sources are, when they are all linked copies (a character's book)."""
    names: dict[str, None] = {}
    for entry in sources:
        link = link_of(entry)
        if link is None or link.canonical:
            return []
        found = entry.raw.get("characterFilter")
        for name in found.get("names", []) if isinstance(found, dict) else []:
            names[str(name)] = None
    return list(names) or ["this character"]
