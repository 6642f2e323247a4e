"""The CharMemory memory file: plain markdown holding ``<memory>`` blocks of bullets.

    <memory chat="Seraphina - 2026-02-15@10h00m00s123ms" date="2026-02-15 10:42">
    - Seraphina healed the user's wounds in the Eldoria forest.
    </memory>

A file is an ordered sequence of segments: free text (headings, notes a person
typed) and blocks. Parsing never drops a byte: ``parse_memory_file(t).render() == t``
for every string ``t``. Parsed segments, bullets and tag lines remember their exact
source, so an edit re-renders only what it touched and leaves the rest byte-identical.

Structure is line-anchored: a line is an opening tag only when ``<memory ...>`` is
all it holds, and a closing tag only when it holds just ``</memory>``. A block is an
opening line followed by a closing line with no other opening line between them. An
opening line that is never closed stays free text (``stray_tag_lines`` reports it),
so a half-typed block is never lost and never swallows what follows.

Inside a block, a line starting with ``- `` or ``* `` (after indentation) starts a
bullet; indented lines right below it wrap onto it, as in markdown. Every other line
(a note a person typed, a heading, a line after a blank one) is a ``RawLine``: the
person's text, kept where it stands and never folded into a bullet, so deleting or
rewriting a bullet never takes it along.

A file may start with a byte order mark; it is remembered (``MemoryFile.bom``) and
written back, so a file keeps the encoding signature its editor gave it.

Untrusted text is made safe when a ``Bullet`` is built: control and bidi-override
characters are removed (`formats.unprintable`), whitespace runs (newlines included)
collapse to one space, so a bullet is always one line, and every ``<`` that starts a
memory tag (``<memory``, ``</memory``, any case, spaces allowed) becomes U+FF1C
FULLWIDTH LESS-THAN SIGN, which reads the same but is no tag for this parser or for
SillyTavern's. Attribute values are escaped (``& " < >``, line breaks, and control and
bidi characters as numeric references).

Edits are pure functions that return a new ``MemoryFile``; the values are frozen.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace

from charmemory.errors import FormatError, NotFoundError
from charmemory.formats.unprintable import without_unprintable

TAG_LOOKALIKE = "\uff1c"
BOM = "\ufeff"

_TAG_START = re.compile(r"<(?=\s*/?\s*memory)", re.IGNORECASE)
# Quoted values may hold ">"; the plain form still accepts tags written with an
# unbalanced quote (SillyTavern's extension does not escape attribute values).
_OPEN_QUOTED = re.compile(r"""\s*<memory((?:\s(?:[^>"']|"[^"]*"|'[^']*')*)?)>\s*""", re.I)
_OPEN_PLAIN = re.compile(r"\s*<memory(\s[^>]*)?>\s*", re.IGNORECASE)
_CLOSE = re.compile(r"\s*</memory\s*>\s*", re.IGNORECASE)
_NAME = r"[A-Za-z_:][-\w:.]*"
_ATTRIBUTE = re.compile(rf"""({_NAME})\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+))""")
_ATTRIBUTE_NAME = re.compile(_NAME)
_LINE = re.compile(r"[^\n]*\n|[^\n]+")
_ESCAPES = {"&": "&amp;", '"': "&quot;", "<": "&lt;", ">": "&gt;"}
_ESCAPE = re.compile('[&"<>\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]')
_BULLET_MARKERS = ("- ", "* ")
_ENTITY = re.compile(r"&(?:(amp|quot|lt|gt)|#(\d{1,7})|#[xX]([0-9a-fA-F]{1,6}));")
_NAMED_ENTITIES = {"amp": "&", "quot": '"', "lt": "<", "gt": ">"}


def clean_memory_text(text: str) -> str:
    """Return ``text`` as a safe one-line bullet text; raise if nothing is left."""
    text = without_unprintable(text)
    if "<" in text:  # the substitution is the cost of reading a large file; most have no "<"
        text = _TAG_START.sub(TAG_LOOKALIKE, text)
    cleaned = " ".join(text.split())
    if not cleaned:
        raise FormatError("a memory cannot be empty")
    return cleaned


@dataclass(frozen=True)
class FreeText:
    """Text outside every block, kept byte for byte."""

    text: str


@dataclass(frozen=True, slots=True)
class RawLine:
    """A non-bullet line inside a block, kept byte for byte (line ending included)."""

    raw: str

    def __post_init__(self) -> None:
        if not self.raw.endswith("\n") or "\n" in self.raw[:-1]:
            raise ValueError("a raw line is exactly one line ending with a newline")
        if _is_tag(self.raw) or _bullet_text(self.raw) is not None:
            raise ValueError(f"not a raw line: {self.raw!r}")

    @property
    def is_blank(self) -> bool:
        return not self.raw.strip()


@dataclass(frozen=True, slots=True)
class Bullet:
    """One memory. ``text`` is cleaned on construction (see the module docstring)."""

    text: str
    _source: str | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "text", clean_memory_text(self.text))

    def render(self, newline: str) -> str:
        return self._source if self._source is not None else f"- {self.text}{newline}"


@dataclass(frozen=True)
class MemoryBlock:
    """A ``<memory>`` block: ordered attributes and its body lines."""

    attributes: tuple[tuple[str, str], ...] = ()
    entries: tuple[Bullet | RawLine, ...] = ()
    newline: str = "\n"
    # Exact tag lines as read; `dataclasses.replace` drops them, so a changed
    # block can never render stale text.
    _opening: str | None = field(default=None, init=False, repr=False, compare=False)
    _closing: str | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "attributes", tuple((k, v) for k, v in self.attributes))
        object.__setattr__(self, "entries", tuple(self.entries))
        if self.newline not in ("\n", "\r\n"):
            raise ValueError(f"unsupported newline {self.newline!r}")
        for name, _ in self.attributes:
            if not _ATTRIBUTE_NAME.fullmatch(name):
                raise FormatError(f"invalid memory attribute name {name!r}")
        for before, entry in zip(self.entries, self.entries[1:], strict=False):
            if isinstance(before, Bullet) and isinstance(entry, RawLine) and _wraps(entry.raw):
                raise ValueError("an indented line right below a bullet would wrap onto it")

    def attribute(self, name: str) -> str | None:
        return attribute(self.attributes, name)

    @property
    def chat(self) -> str:
        return self.attribute("chat") or ""

    @property
    def date(self) -> str:
        return self.attribute("date") or ""

    @property
    def bullets(self) -> tuple[Bullet, ...]:
        return tuple(entry for entry in self.entries if isinstance(entry, Bullet))

    @property
    def notes(self) -> tuple[RawLine, ...]:
        """The non-blank lines that are not bullets: text a person typed into the block."""
        return tuple(e for e in self.entries if isinstance(e, RawLine) and not e.is_blank)

    def with_newline(self, newline: str) -> MemoryBlock:
        """The block as newly written with ``newline`` (its notes' line endings too)."""
        entries = tuple(
            RawLine(e.raw.rstrip("\r\n") + newline) if isinstance(e, RawLine) else e
            for e in self.entries
        )
        return replace(self, entries=entries, newline=newline)

    def render(self) -> str:
        nl = self.newline
        if self._opening is not None:
            opening = self._opening
        else:
            opening = "".join(f' {k}="{_escape(v)}"' for k, v in self.attributes)
            opening = f"<memory{opening}>{nl}"
        body = "".join(e.render(nl) if isinstance(e, Bullet) else e.raw for e in self.entries)
        closing = self._closing if self._closing is not None else f"</memory>{nl}"
        return opening + body + closing


Segment = FreeText | MemoryBlock
Attributes = tuple[tuple[str, str], ...]


def attribute(attributes: Attributes, name: str) -> str | None:
    """The value of a block's first attribute called ``name``."""
    for key, value in attributes:  # (a loop: asked twice per block of a large listing)
        if key == name:
            return value
    return None


@dataclass(frozen=True)
class MemoryFile:
    """A whole memory file as segments in file order (``bom``: it starts with U+FEFF)."""

    segments: tuple[Segment, ...] = ()
    bom: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "segments", tuple(self.segments))
        previous: Segment | None = None
        for segment in self.segments:
            if previous is not None and not _ends_line(previous):
                raise ValueError("only the last segment may lack a final newline")
            if isinstance(segment, FreeText):
                if not segment.text or isinstance(previous, FreeText):
                    raise ValueError("free text segments are non-empty and never adjacent")
                if next(_scan(_lines(segment.text)), None) is not None:
                    raise ValueError("free text must not hold a memory block")
            previous = segment

    def render(self) -> str:
        return BOM + _body(self) if self.bom else _body(self)

    @property
    def blocks(self) -> tuple[MemoryBlock, ...]:
        return tuple(s for s in self.segments if isinstance(s, MemoryBlock))

    @property
    def block_count(self) -> int:
        return len(self.blocks)

    @property
    def bullet_count(self) -> int:
        return sum(len(block.bullets) for block in self.blocks)

    @property
    def newline(self) -> str:
        """The file's dominant line ending, used for anything newly written."""
        text = self.render()
        crlf = text.count("\r\n")
        return "\r\n" if crlf > text.count("\n") - crlf else "\n"


@dataclass(frozen=True, order=True, slots=True)
class BulletAddress:
    """Where a bullet sits: 0-based block index and bullet index within the block."""

    block: int
    bullet: int


# ---- parsing ----------------------------------------------------------------


def parse_memory_file(text: str) -> MemoryFile:
    """Read any text as a memory file; never fails and never drops text."""
    bom = text.startswith(BOM)
    lines = _lines(text[1:] if bom else text)
    segments: list[Segment] = []
    cursor = 0
    for start, end in _scan(lines):
        if start > cursor:
            segments.append(FreeText("".join(lines[cursor:start])))
        segments.append(_parse_block(lines[start], lines[start + 1 : end], lines[end]))
        cursor = end + 1
    if cursor < len(lines):
        segments.append(FreeText("".join(lines[cursor:])))
    return MemoryFile(tuple(segments), bom)


def _lines(text: str) -> list[str]:
    return _LINE.findall(text)


def _opening_match(line: str) -> re.Match[str] | None:
    if "<" not in line:  # every line is tested: skip the regexes for the bulk of them
        return None
    return _OPEN_QUOTED.fullmatch(line) or _OPEN_PLAIN.fullmatch(line)


def _is_tag(line: str) -> bool:
    return "<" in line and bool(_opening_match(line) or _CLOSE.fullmatch(line))


def is_closing_line(line: str) -> bool:
    """Whether ``line`` (its line ending included) is a block's closing tag line."""
    return "<" in line and _CLOSE.fullmatch(line) is not None


def opening_attributes(line: str) -> Attributes | None:
    """The attributes of an opening tag line, in order, their values unescaped; None
    when ``line`` (its line ending included) is no opening tag line."""
    match = _opening_match(line)
    if match is None:
        return None
    attributes = []
    for m in _ATTRIBUTE.finditer(match[1] or ""):
        name, double, single, bare = m.groups()
        value = double if double is not None else single if single is not None else bare
        attributes.append((name, _unescape(value)))
    return tuple(attributes)


def _bullet_text(line: str) -> str | None:
    """The text of a bullet line; None when the line is no bullet (or nothing is left)."""
    stripped = line.strip()
    if not stripped.startswith(_BULLET_MARKERS):
        return None
    try:
        return clean_memory_text(stripped[2:])
    except FormatError:
        return None


def _scan(lines: list[str]) -> Iterator[tuple[int, int]]:
    """Yield (opening, closing) line indexes of every well-formed block."""
    i = 0
    while i < len(lines):
        if not _opening_match(lines[i]):
            i += 1
            continue
        j = i + 1
        while j < len(lines) and not _is_tag(lines[j]):
            j += 1
        if j < len(lines) and _CLOSE.fullmatch(lines[j]):
            yield i, j
            i = j + 1
        else:
            i = j  # unclosed: stays free text; resume at the next opening line


def _parse_block(opening: str, body: list[str], closing: str) -> MemoryBlock:
    newline = "\r\n" if opening.endswith("\r\n") else "\n"
    attributes = opening_attributes(opening)
    assert attributes is not None
    block = MemoryBlock(attributes, _parse_body(body), newline)
    object.__setattr__(block, "_opening", opening)
    object.__setattr__(block, "_closing", closing)
    return block


def _wraps(line: str) -> bool:
    """Whether ``line``, right below a bullet, continues it: indented text, no bullet."""
    return line[:1] in (" ", "\t") and bool(line.strip()) and _bullet_text(line) is None


def block_entries(body: str) -> tuple[Bullet | RawLine, ...]:
    """The bullets and other lines of a block's body (the text between its tag lines)."""
    return _parse_body(_lines(body))


def _parse_body(body: list[str]) -> tuple[Bullet | RawLine, ...]:
    entries: list[Bullet | RawLine] = []
    i = 0
    while i < len(body):
        first = _bullet_text(body[i])
        if first is None:
            entries.append(RawLine(body[i]))
            i += 1
            continue
        end = i + 1
        while end < len(body) and _wraps(body[end]):
            end += 1
        entries.append(_read_bullet(first, body[i + 1 : end], "".join(body[i:end])))
        i = end
    return tuple(entries)


def _read_bullet(first: str, wrapped: list[str], source: str) -> Bullet:
    """The bullet of the lines `source`: `first` is its cleaned first line, `wrapped` the
    lines that continue it. A one-line bullet (nearly all) is not cleaned a second time."""
    if wrapped:
        bullet = Bullet(" ".join([first, *wrapped]))
    else:
        bullet = object.__new__(Bullet)
        object.__setattr__(bullet, "text", first)
    object.__setattr__(bullet, "_source", source)
    return bullet


def _escape(value: str) -> str:
    return _ESCAPE.sub(lambda m: _ESCAPES.get(m[0]) or f"&#{ord(m[0])};", value)


def _unescape(value: str) -> str:
    if "&" not in value:
        return value

    def one(m: re.Match[str]) -> str:
        if m[1]:
            return _NAMED_ENTITIES[m[1]]
        code = int(m[2]) if m[2] else int(m[3], 16)
        return chr(code) if code <= 0x10FFFF else m[0]

    return _ENTITY.sub(one, value)


def _body(file: MemoryFile) -> str:
    """The file's text without its byte order mark."""
    return "".join(_render_segment(segment) for segment in file.segments)


def _render_segment(segment: Segment) -> str:
    return segment.text if isinstance(segment, FreeText) else segment.render()


def _ends_line(segment: Segment) -> bool:
    """Whether the segment's text ends with a line break (a block's is its closing line's)."""
    if isinstance(segment, FreeText):
        return segment.text.endswith("\n")
    return segment._closing is None or segment._closing.endswith("\n")


# ---- building and editing -----------------------------------------------------


def build_block(
    chat: str,
    date: str,
    bullets: Iterable[str],
    *,
    extra: Iterable[tuple[str, str]] = (),
) -> MemoryBlock:
    """A new block from untrusted text; bullets are cleaned, attributes escaped on render."""
    attributes = (("chat", chat), ("date", date), *extra)
    names = [name for name, _ in attributes]
    duplicate = next((n for i, n in enumerate(names) if n in names[:i]), None)
    if duplicate is not None:
        raise FormatError(f"memory attribute {duplicate!r} given twice")
    return MemoryBlock(attributes, tuple(Bullet(text) for text in bullets))


def append_block(file: MemoryFile, block: MemoryBlock) -> MemoryFile:
    return append_blocks(file, [block])


def append_blocks(
    file: MemoryFile, blocks: Iterable[MemoryBlock], *, newline: str | None = None
) -> MemoryFile:
    """Add blocks at the end, one blank line before each.

    New blocks use ``newline``, by default the file's dominant line ending.
    """
    newline = newline or file.newline
    text = _body(file)
    for block in blocks:
        text += _separator(text, newline) + block.with_newline(newline).render()
    return with_text(file, text)


def append_bullets(file: MemoryFile, block_index: int, texts: Iterable[str]) -> MemoryFile:
    """Add bullets (untrusted text) to a block, right after its last bullet (at its end
    when it has none); its tag lines and every other line stay as they are."""
    position = _block_position(file, block_index)
    block = file.segments[position]
    assert isinstance(block, MemoryBlock)
    entries = list(block.entries)
    bullets = [i + 1 for i, entry in enumerate(entries) if isinstance(entry, Bullet)]
    at = bullets[-1] if bullets else len(entries)
    entries[at:at] = [Bullet(text) for text in texts]
    return _with_segment(file, position, _rebuilt(block, entries))


def replace_bullet(file: MemoryFile, address: BulletAddress, text: str) -> MemoryFile:
    position, block, entry = _locate(file, address)
    entries = list(block.entries)
    entries[entry] = Bullet(text)
    return _with_segment(file, position, _rebuilt(block, entries))


def delete_bullet(file: MemoryFile, address: BulletAddress) -> MemoryFile:
    """Remove a bullet and the blank lines around it; an emptied block stays, and so
    does every other line of it (notes a person typed)."""
    position, block, entry = _locate(file, address)
    entries = list(block.entries)
    end = entry + 1
    while end < len(entries) and _is_blank_raw(entries[end]):
        end += 1
    start = entry
    if end == len(entries):
        while start > 0 and _is_blank_raw(entries[start - 1]):
            start -= 1
    after_bullet = start > 0 and isinstance(entries[start - 1], Bullet)
    if after_bullet and end > entry + 1 and _wraps_when_next(entries[end:]):
        end -= 1  # a blank line keeps the next note from wrapping onto the bullet above
    del entries[start:end]
    return _with_segment(file, position, _rebuilt(block, entries))


def delete_block(file: MemoryFile, block_index: int) -> MemoryFile:
    """Remove a block and the blank separator next to it; other text stays as is."""
    position = _block_position(file, block_index)
    dropped = {position}
    for neighbour in (position + 1, position - 1):
        if 0 <= neighbour < len(file.segments) and _is_blank_free_text(file.segments[neighbour]):
            dropped.add(neighbour)
            break
    return _reassembled(file, [s for i, s in enumerate(file.segments) if i not in dropped])


def _separator(text: str, newline: str) -> str:
    if not text:
        return ""
    closed = text if text.endswith("\n") else text + newline
    last_line = closed[closed.rfind("\n", 0, len(closed) - 1) + 1 :]
    return closed[len(text) :] + ("" if not last_line.strip() else newline)


def _wraps_when_next(entries: list[Bullet | RawLine]) -> bool:
    return bool(entries) and isinstance(entries[0], RawLine) and _wraps(entries[0].raw)


def _is_blank_raw(entry: Bullet | RawLine) -> bool:
    return isinstance(entry, RawLine) and entry.is_blank


def _is_blank_free_text(segment: Segment) -> bool:
    return isinstance(segment, FreeText) and not segment.text.strip()


def _rebuilt(block: MemoryBlock, entries: list[Bullet | RawLine]) -> MemoryBlock:
    """The block with new entries, keeping its tag lines exactly as read."""
    new = MemoryBlock(block.attributes, tuple(entries), block.newline)
    object.__setattr__(new, "_opening", block._opening)
    object.__setattr__(new, "_closing", block._closing)
    return new


def _with_segment(file: MemoryFile, position: int, replacement: Segment) -> MemoryFile:
    segments = [*file.segments[:position], replacement, *file.segments[position + 1 :]]
    return _reassembled(file, segments)


def _reassembled(file: MemoryFile, segments: Iterable[Segment]) -> MemoryFile:
    """``segments`` read back as ``file``'s replacement (its byte order mark kept)."""
    return with_text(file, "".join(_render_segment(s) for s in segments))


def with_text(file: MemoryFile, text: str) -> MemoryFile:
    """``text`` (without a byte order mark) read as the new content of ``file``."""
    return replace(parse_memory_file(text), bom=file.bom)


def _block_position(file: MemoryFile, block_index: int) -> int:
    positions = [i for i, s in enumerate(file.segments) if isinstance(s, MemoryBlock)]
    if not 0 <= block_index < len(positions):
        raise NotFoundError(
            f"memory block {block_index} does not exist (the file has {len(positions)})"
        )
    return positions[block_index]


def _locate(file: MemoryFile, address: BulletAddress) -> tuple[int, MemoryBlock, int]:
    position = _block_position(file, address.block)
    block = file.segments[position]
    assert isinstance(block, MemoryBlock)
    bullets = [i for i, e in enumerate(block.entries) if isinstance(e, Bullet)]
    if not 0 <= address.bullet < len(bullets):
        raise NotFoundError(
            f"memory {address.block}:{address.bullet} does not exist "
            f"(block {address.block} has {len(bullets)} bullets)"
        )
    return position, block, bullets[address.bullet]


def stray_tag_lines(file: MemoryFile) -> tuple[int, ...]:
    """1-based numbers of tag lines kept as free text (unclosed or unmatched tags)."""
    found: list[int] = []
    line_number = 1
    for segment in file.segments:
        text = _render_segment(segment)
        if isinstance(segment, FreeText):
            found.extend(
                line_number + offset for offset, line in enumerate(_lines(text)) if _is_tag(line)
            )
        line_number += text.count("\n")
    return tuple(found)


def stray_tag_warning(file: MemoryFile) -> str | None:
    """What a person reading the file should know about its stray tag lines, if any."""
    return stray_lines_warning(stray_tag_lines(file))


def stray_lines_warning(stray: Sequence[int]) -> str | None:
    """The warning about stray tag lines at these 1-based line numbers (None: no such line)."""
    if not stray:
        return None
    return (
        f"line(s) {', '.join(map(str, stray))} hold a <memory> tag without its pair; the "
        "lines they would enclose are text, not memories, and are not searched"
    )
