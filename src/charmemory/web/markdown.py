"""Chat text as markdown, safe to show whatever it holds.

A message, a card or a lorebook entry may hold anything: raw HTML is never passed
through (markdown-it with `html` off escapes it, so `<3` and `a < b` read as written
and `<script>` is text), images are not rendered (a message must not make the browser
fetch from elsewhere), and links keep only the schemes markdown-it allows
(`javascript:`, `vbscript:`, `file:` and `data:` are refused and stay text).
Single line breaks are kept, as SillyTavern shows them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.renderer import RendererHTML
from markdown_it.token import Token
from markupsafe import Markup

_RENDERER = MarkdownIt("commonmark", {"html": False, "breaks": True, "linkify": False}).disable(
    ["image", "html_block", "html_inline"]
)


def _link_open(
    renderer: RendererHTML, tokens: Sequence[Token], idx: int, options: Any, env: Any
) -> str:
    """Links open elsewhere and tell the other site nothing about this page."""
    tokens[idx].attrSet("rel", "noopener noreferrer nofollow")
    tokens[idx].attrSet("target", "_blank")
    return renderer.renderToken(tokens, idx, options, env)


_RENDERER.add_render_rule("link_open", _link_open)


def render_markdown(text: str) -> Markup:
    """`text` as HTML from markdown, with nothing in it that runs or loads."""
    return Markup(_RENDERER.render(text))
