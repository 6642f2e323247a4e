"""A memory file's history: every version with its cause, diffs, and undo to any version."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from fastapi import Form, Query, Request
from fastapi.responses import Response

from charmemory.api.deps import Services
from charmemory.composition import App
from charmemory.web.memories import Scope, memory_scope
from charmemory.web.pages import new_router
from charmemory.web.templating import fragment, page

router = new_router()


@dataclass(frozen=True)
class DiffLine:
    kind: str  # add, del, hunk, head or same
    text: str


def diff_lines(diff: str) -> list[DiffLine]:
    """A unified diff's lines, each with what it is (for its colour)."""
    lines = []
    for line in diff.splitlines():
        if line.startswith(("+++", "---")):
            kind = "head"
        elif line.startswith("@@"):
            kind = "hunk"
        elif line.startswith("+"):
            kind = "add"
        elif line.startswith("-"):
            kind = "del"
        else:
            kind = "same"
        lines.append(DiffLine(kind, line))
    return lines


def _history(app: App, scope: Scope, notice: str = "") -> dict[str, object]:
    history = app.history.history(scope.character, chat=scope.chat or None)
    versions = list(history.versions)[::-1]
    return {"scope": scope, "history": history, "versions": versions, "notice": notice}


@router.get("/memories/{character}/history")
def history_page(
    character: str, request: Request, services: Services, chat: str | None = None
) -> Response:
    scope = memory_scope(services, character, chat)
    return page(request, "history.html", **_history(services, scope))


@router.get("/memories/{character}/history/diff")
def diff(
    character: str,
    services: Services,
    old: Annotated[int, Query(ge=1)],
    new: Annotated[int | None, Query(ge=1)] = None,
    chat: str | None = None,
) -> Response:
    scope = memory_scope(services, character, chat)
    text = services.history.diff(scope.character, old, new, chat=scope.chat or None)
    return fragment("_diff.html", lines=diff_lines(text), old=old, new=new)


@router.post("/memories/{character}/history/restore")
async def restore(
    character: str, to: Annotated[int, Form()], services: Services, chat: str = ""
) -> Response:
    scope = memory_scope(services, character, chat)
    undone = await services.history.undo(scope.character, to=to, chat=chat or None)
    said = "; ".join(
        [
            f"version {undone.restored.number} restored as version {undone.recorded.number}",
            *undone.progress,
            *undone.warnings,
        ]
    )
    return fragment("_history_table.html", **_history(services, scope, said))
