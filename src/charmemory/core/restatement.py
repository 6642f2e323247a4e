"""Whether a new memory only restates a saved one, in other words.

The cosine of two embeddings cannot decide it alone. A small model restates a fact in
each later block in new words ("Tomas counted nineteen lanterns", "The lanterns Tomas
counted numbered nineteen"), far below a cosine that is safe for everything, while an
update ("Kael owes 40 crowns" after "Kael owes 50 crowns") sits above it. So a new
memory restates a saved one when it brings no number or name the saved one lacks and
says "not" or "no longer" where the saved one does (or neither does), and either the two
are very close, or they are close and the saved one already holds every word of the
new one (cut to its first letters, so "counted" meets "counting").

A small model also joins saved memories into one bullet, or copies them back with one
new sentence among them; each sentence of a new bullet is judged on its own
(`sentences`), and only the ones that are news are kept.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from charmemory.core.bullet_length import CUT_MARKER

# Close enough that, with nothing specific added, the new memory says nothing new.
CLOSE = 0.9
# Close, with the saved memory holding every content word of the new one: one new word
# can be the news ("Mira lost the silver swallow amulet her grandmother gave her").
RELATED = 0.65
_WORD = re.compile(r"[^\W_]+(?:['\u2019][^\W_]+)?")
# Not "one", "first" or "second": as often "one of them", "first went", "a second".
_NUMBER_WORDS = frozenset(
    """zero two three four five six seven eight nine ten eleven twelve thirteen fourteen
    fifteen sixteen seventeen eighteen nineteen twenty thirty forty fifty sixty seventy
    eighty ninety hundred thousand million third fourth fifth sixth seventh eighth ninth
    tenth dozen""".split()  # noqa: SIM905 (a word list reads better as words)
)
_STOP = frozenset(
    """a an the and or but of to in on at by for with from into onto as is are was were
    be been being has have had do does did that this these those it its he she
    they them their his her him who whom which what when where while than then there
    so also very still just about after before over under again will would can could
    shall should may might must""".split()  # noqa: SIM905
)


_NEGATION = re.compile(
    r"\b(?:not|no|never|nor|nobody|nothing|anymore|longer)\b|n['\u2019]t\b", re.I
)


# A sentence ends at . ! or ? (a closing quote may follow) before a capital or a quote;
# not after a title such as "Dr." or an initial such as "E.".
_SENTENCE_END = re.compile(
    r"(?<=[.!?])(?<!\b[A-Z]\.)(?<!\b(?:Dr|Mr|Ms|St|Mt)\.)(?<!\bMrs\.)(?<!\bProf\.)"
    r"([\"'\u201d\u2019]?)\s+(?=[\"'\u201c\u2018]?[A-Z\u00c0-\u024f\u0400-\u042f])"
)


def sentences(text: str) -> list[str]:
    """``text`` cut into its sentences (one, when it has no clear sentence end)."""
    pieces = _SENTENCE_END.split(text.strip())
    # split() gives the closing quote it matched apart: it ends the sentence before it.
    found = [words + quote for words, quote in zip(pieces[::2], [*pieces[1::2], ""], strict=True)]
    return [piece.strip() for piece in found if piece.strip()]


def news_in(parts: Sequence[str], restated: Sequence[bool]) -> list[str]:
    """The sentences of a new bullet (``parts``) that are news, given which restate a
    saved memory. A cut bullet's last piece (it ends with `CUT_MARKER`) after a restated
    sentence is the rest of a copied memory, not news of its own."""
    news = [part for part, old in zip(parts, restated, strict=True) if not old]
    copied = len(news) < len(parts)
    if copied and news and news[-1] == parts[-1] and parts[-1].endswith(CUT_MARKER):
        news.pop()
    return news


def restates(new: str, saved: str, cosine: float) -> bool:
    """Whether `new` says nothing that `saved` (whose embedding's cosine to it is
    `cosine`) does not already say."""
    if cosine < RELATED or _specifics(new) - _words(saved):
        return False
    if bool(_NEGATION.search(new)) != bool(_NEGATION.search(saved)):
        return False  # "Mira is no longer afraid of heights" is news
    if cosine >= CLOSE:
        return True
    words = _stems(new)
    return bool(words) and words <= _stems(saved)


def _specifics(text: str) -> set[str]:
    """Numbers and names: a number, a number word, or a capitalised word after the first."""
    found = set()
    for position, word in enumerate(_WORD.findall(text)):
        bare = re.split("['\u2019]", word)[0]
        lowered = bare.lower()
        if bare.isdigit() or lowered in _NUMBER_WORDS or (position > 0 and bare[:1].isupper()):
            found.add(lowered)
    return found


def _words(text: str) -> set[str]:
    return {re.split("['\u2019]", word)[0].lower() for word in _WORD.findall(text)}


def _stems(text: str) -> set[str]:
    """Content words, cut to five letters so "counted" and "counting" meet."""
    return {word[:5] for word in _words(text) if word not in _STOP and len(word) > 2}
