"""Pictures drawn on the server as inline SVG: no chart library, no script.

Every text that comes from data is escaped as the picture is built. Colours come
from CSS classes (`app.css`), so each picture follows the light or dark theme.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from markupsafe import Markup, escape

from charmemory.core.consolidation_merge import date_bounds
from charmemory.core.narrator.presence import Presence
from charmemory.formats.block_dates import (
    parse_block_date,
)
from charmemory.web.templating import path_part

AVATAR_HUES = 12


def initials_avatar(name: str) -> str:
    """A square picture of the name's initials on a colour chosen by the name."""
    initials = "".join(word[0] for word in name.split()[:2]).upper() or "?"
    hue = int(hashlib.sha256(name.encode()).hexdigest(), 16) % AVATAR_HUES * (360 // AVATAR_HUES)
    return (
        '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 64 64" width="64" height="64">'
        f'<rect width="64" height="64" rx="12" fill="hsl({hue} 45% 45%)"/>'
        '<text x="32" y="41" font-family="sans-serif" font-size="26" text-anchor="middle" '
        f'fill="#fff">{escape(initials)}</text></svg>'
    )


def _svg(width: int, height: int, body: str, label: str, css: str = "chart") -> Markup:
    return Markup(
        f'<svg class="{css}" viewBox="0 0 {width} {height}" width="{width}" height="{height}" '
        f'role="img" aria-label="{escape(label)}" preserveAspectRatio="xMinYMid meet">'
        f"<title>{escape(label)}</title>{body}</svg>"
    )


def _share(value: float | None, top: float) -> float:
    if value is None or top <= 0:
        return 0.0
    return max(0.0, min(1.0, value / top))


# -- retrieval scores ------------------------------------------------------------------------


def score_bars(score: float, bm25: float | None, bm25_top: float, cosine: float) -> Markup:
    """One memory's scores: the fused score, its BM25 part (against the best BM25 of the
    retrieval) and its vector part (the cosine)."""
    width, bar = 200, 110
    rows = (
        ("score", "fused", _share(score, 1.0), f"{score:.3f}"),
        ("bm25", "BM25", _share(bm25, bm25_top), "-" if bm25 is None else f"{bm25:.3g}"),
        ("vector", "vector", _share(cosine, 1.0), f"{cosine:.3f}"),
    )
    body = "".join(
        f'<text class="label" x="0" y="{12 + i * 14}">{name}</text>'
        f'<rect class="track" x="44" y="{4 + i * 14}" width="{bar}" height="10" rx="2"/>'
        f'<rect class="bar {css}" x="44" y="{4 + i * 14}" width="{share * bar:.1f}" '
        f'height="10" rx="2"/>'
        f'<text class="value" x="{width}" y="{12 + i * 14}" text-anchor="end">{value}</text>'
        for i, (css, name, share, value) in enumerate(rows)
    )
    label = f"score {score:.3f}, BM25 {rows[1][3]}, vector {cosine:.3f}"
    return _svg(width, 46, body, label, "chart scores")


# -- prompt budget ---------------------------------------------------------------------------


def budget_bar(used: int, budget: int, label: str) -> Markup:
    """How much of a token budget is used."""
    width = 320
    share = _share(used, budget) if budget else 0.0
    over = " over" if budget and used > budget else ""
    body = (
        f'<rect class="track" x="0" y="4" width="{width}" height="14" rx="3"/>'
        f'<rect class="bar budget{over}" x="0" y="4" width="{share * width:.1f}" '
        'height="14" rx="3"/>'
    )
    return _svg(width, 22, body, f"{label}: {used} of {budget} tokens")


@dataclass(frozen=True)
class Slice:
    name: str
    tokens: int


def token_breakdown(sections: Mapping[str, int], total: int) -> Markup:
    """The prompt's tokens by section, as one stacked bar of the whole prompt, with a legend."""
    width = 480
    scale = max(total, sum(int(t) for t in sections.values()), 1)
    slices = [Slice(name, int(tokens)) for name, tokens in sections.items() if int(tokens) > 0]
    slices.sort(key=lambda s: -s.tokens)
    x = 0.0
    parts = []
    legend = []
    for i, part in enumerate(slices):
        w = part.tokens / scale * width
        css = f"slice s{i % 8}"
        parts.append(
            f'<rect class="{css}" x="{x:.1f}" y="0" width="{w:.1f}" height="18">'
            f"<title>{escape(part.name)}: {part.tokens} tokens</title></rect>"
        )
        row, col = divmod(i, 3)
        legend.append(
            f'<rect class="{css}" x="{col * 160}" y="{28 + row * 16}" width="10" height="10"/>'
            f'<text class="label" x="{col * 160 + 14}" y="{37 + row * 16}">'
            f"{escape(part.name)} {part.tokens}</text>"
        )
        x += w
    rows = (len(slices) + 2) // 3
    return _svg(
        width,
        30 + rows * 16,
        "".join(parts) + "".join(legend),
        f"prompt: {total} tokens by section",
        "chart tokens",
    )


# -- the memory timeline ---------------------------------------------------------------------


@dataclass(frozen=True)
class TimelineBlock:
    index: int
    chat: str
    date: str
    bullets: int


def memory_timeline(blocks: Sequence[TimelineBlock]) -> Markup:
    """Blocks along their dates, one lane per chat; a dot's size is its memories, a
    consolidated block's date range is a span. A click opens the block."""
    placed = []
    for block in blocks:
        first, last = date_bounds(block.date) if block.date.strip() else ("", "")
        start, end = parse_block_date(first), parse_block_date(last)
        if start is not None:
            placed.append((block, start, end or start))
    if not placed:
        return Markup("")
    lanes = list(dict.fromkeys(block.chat for block, _, _ in placed))
    low = min(start for _, start, _ in placed)
    high = max(end for _, _, end in placed)
    left, width, lane_h = 150, 520, 26
    span = (high - low).total_seconds() or 1.0

    def x(moment: datetime) -> float:
        return left + (moment - low).total_seconds() / span * width

    body = []
    for row, chat in enumerate(lanes):
        y = 20 + row * lane_h
        name = chat if len(chat) <= 22 else chat[:21] + "…"
        body.append(
            f'<text class="label" x="0" y="{y + 4}"><title>{escape(chat)}</title>'
            f"{escape(name)}</text>"
        )
        body.append(f'<line class="lane" x1="{left}" x2="{left + width}" y1="{y}" y2="{y}"/>')
    for block, start, end in placed:
        y = 20 + lanes.index(block.chat) * lane_h
        radius = min(4 + block.bullets, 11)
        title = f"block {block.index + 1}: {block.bullets} memories, {block.date}"
        shape = (
            f'<line class="span" x1="{x(start):.1f}" x2="{x(end):.1f}" y1="{y}" y2="{y}"/>'
            if end > start
            else ""
        )
        body.append(
            f'<a href="#block-{block.index}">{shape}'
            f'<circle class="dot" cx="{x(end):.1f}" cy="{y}" r="{radius}">'
            f"<title>{escape(title)}</title></circle></a>"
        )
    axis_y = 20 + len(lanes) * lane_h
    body.append(
        f'<text class="label" x="{left}" y="{axis_y}">{low:%Y-%m-%d}</text>'
        f'<text class="label" x="{left + width}" y="{axis_y}" text-anchor="end">'
        f"{high:%Y-%m-%d}</text>"
    )
    return _svg(
        left + width + 14,
        axis_y + 6,
        "".join(body),
        f"memory timeline: {len(placed)} blocks in {len(lanes)} chats",
        "chart timeline",
    )


# -- the narrator presence grid --------------------------------------------------------------


def _entry_url(book: str, uid: int) -> str:
    return f"/books/{path_part(book)}#entry-{uid}"


def _short(text: str, most: int) -> str:
    return text if len(text) <= most else text[: most - 1] + "…"


def presence_grid(grid: Presence, omniscient: str) -> Markup:
    """Scenes of the omniscient book (rows, in order) against the cast (columns): a dot
    where that member's book holds the scene's copy; retired members greyed. A scene's
    title opens its entry, a dot the member's copy."""
    if not grid.scenes or not grid.members:
        return Markup("")
    left, column, row_h, top = 210, 72, 24, 34
    body = []
    for col, member in enumerate(grid.members):
        x = left + col * column + column / 2
        css = "label retired" if member.retired else "label"
        body.append(
            f'<text class="{css}" x="{x:.0f}" y="18" text-anchor="middle">'
            f"<title>{escape(member.name)} ({escape(member.book)})</title>"
            f"{escape(_short(member.name, 9))}</text>"
        )
    for row, scene in enumerate(grid.scenes):
        y = top + row * row_h
        body.append(
            f'<a href="{escape(_entry_url(omniscient, scene.uid))}"><text class="label" x="0" '
            f'y="{y + 4}"><title>{escape(scene.title)}</title>'
            f"{escape(_short(scene.title, 28))}</text></a>"
        )
        for col, member in enumerate(grid.members):
            x = left + col * column + column / 2
            cell = "cell retired" if member.retired else "cell"
            body.append(
                f'<rect class="{cell}" x="{x - 9:.0f}" y="{y - 9}" width="18" height="18" rx="3"/>'
            )
            uid = scene.copies.get(member.id)
            if uid is not None:
                title = f"{member.name}'s book holds {scene.title}"
                dot = "dot retired" if member.retired else "dot"
                body.append(
                    f'<a href="{escape(_entry_url(member.book, uid))}">'
                    f'<circle class="{dot}" cx="{x:.0f}" cy="{y}" r="6">'
                    f"<title>{escape(title)}</title></circle></a>"
                )
    held = sum(len(scene.copies) for scene in grid.scenes)
    return _svg(
        left + len(grid.members) * column,
        top + len(grid.scenes) * row_h - row_h // 2,
        "".join(body),
        f"narrator presence: {len(grid.scenes)} scenes, {len(grid.members)} members, "
        f"{held} copies held",
        "chart presence",
    )
