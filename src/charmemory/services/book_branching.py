"""Copying a chat's memory books for a branch, and binding the copies to it.

Runs right after a chat is branched (`books.copy_on_branch`). The copies and the
branch's new bindings are written in one transaction; if it fails, a second
one leaves the branch bound to no memory book and records why, so the branch
never writes its memories into its parent's books.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from charmemory.core.books import chat_state
from charmemory.core.books.branching import (
    BranchPlan,
    bind_copies,
    bound_books,
    branch_copy,
    branch_marker,
    plan_copies,
    unbind,
)
from charmemory.errors import CharMemoryError
from charmemory.ports import ActivityRecorder, ChatRef
from charmemory.services.books import BookService

BRANCH_CAUSE = "branch"


@dataclass(frozen=True)
class BranchCopies:
    branch: str
    plan: BranchPlan | None  # None: nothing was bound, or copying is off


class BookBranching:
    def __init__(
        self,
        books: BookService,
        activity: ActivityRecorder,
        *,
        clock: Callable[[], datetime],
    ):
        self._books = books
        self._activity = activity
        self._clock = clock

    def after_branch(
        self, parent: ChatRef, branch_id: str, *, extra_books: Sequence[str] = ()
    ) -> BranchCopies:
        """Copy the parent's memory books (and ``extra_books``) for the branch."""
        character = parent.character
        settings = self._books.settings(character.name)
        branch = self._books.library.chat(character, branch_id)
        if not settings.copy_on_branch:
            return BranchCopies(branch_id, None)
        parent_chat = self._books.library.load_chat(parent).chat
        manual = settings.lorebook_mode == "manual"
        sources = [*bound_books(parent_chat.header, manual=manual), *extra_books]
        if not sources:
            return BranchCopies(branch_id, None)
        at = self._clock().astimezone(UTC).isoformat(timespec="seconds")
        marker = chat_state.state_of(parent_chat.header).get(chat_state.BRANCH_COPIES)
        try:
            plan = plan_copies(sources, marker, self._books.store.names())
            names = plan.names
            books = [*names, *names.values()]
            with self._books.transactions.open(
                books, branch, cause=BRANCH_CAUSE, detail=f"{parent.id} -> {branch_id}"
            ) as write:
                for source, copy_name in names.items():
                    found = write.book(source)
                    if not found.exists:
                        raise CharMemoryError(f"memory book {source!r} is missing")
                    write.save(copy_name, branch_copy(found.book, parent.id, branch_id, names))
                chat = write.chat().chat
                bind_copies(chat.header, plan, manual=manual)
                chat_state.update_state(
                    chat.header,
                    **{
                        chat_state.BRANCH_COPIES: branch_marker(
                            "completed", parent.id, branch_id, at, plan
                        )
                    },
                )
                write.save_chat(chat)
        except CharMemoryError as error:
            self._unbind(parent, branch, manual, at, str(error))
            raise CharMemoryError(
                f"the branch {branch_id} was made, but its memory books could not be copied "
                f"({error}); it is bound to none of them, so it cannot write into the parent's"
            ) from None
        self._activity.record(
            "books.branch",
            "copied " + ", ".join(f"{item.source} -> {item.copy}" for item in plan.copies),
            character=character.name,
            chat=branch_id,
        )
        return BranchCopies(branch_id, plan)

    def copies(self, character_name: str, branch_id: str) -> list[tuple[str, str]]:
        """(book, copy) for each memory book copied for a branch, as the branch records them."""
        character = self._books.library.character(character_name)
        loaded = self._books.library.load_chat(self._books.library.chat(character, branch_id))
        marker = chat_state.state_of(loaded.chat.header).get(chat_state.BRANCH_COPIES)
        if not isinstance(marker, dict) or marker.get("status") != "completed":
            return []
        return [
            (str(item.get("sourceName")), str(item.get("copyName")))
            for item in marker.get("mappings") or []
            if isinstance(item, dict)
        ]

    def _unbind(self, parent: ChatRef, branch: ChatRef, manual: bool, at: str, error: str) -> None:
        with self._books.transactions.open([], branch, cause=BRANCH_CAUSE) as write:
            chat = write.chat().chat
            unbind(chat.header, manual=manual)
            chat_state.update_state(
                chat.header,
                **{
                    chat_state.BRANCH_COPIES: branch_marker(
                        "failed", parent.id, branch.id, at, error=error
                    )
                },
            )
            write.save_chat(chat)
