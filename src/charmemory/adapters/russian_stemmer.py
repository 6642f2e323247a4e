"""The Snowball stemmer for Russian, so BM25 matches a word in its other forms.

FTS5's porter tokenizer stems English only; a Russian word keeps its ending, so
"лодку" never matched "лодка". This is the published Snowball algorithm for
Russian (snowballstem.org): endings are removed inside RV, the part of the word
after its first vowel; derivational endings only inside R2.
"""

from __future__ import annotations

from functools import lru_cache

_VOWELS = frozenset("аеиоуыэюя")


def _longest_first(endings: str) -> tuple[str, ...]:
    return tuple(sorted(endings.split(), key=len, reverse=True))


# Endings of the first group only count after "а" or "я", which stays.
_GERUND = (_longest_first("в вши вшись"), _longest_first("ив ивши ившись ыв ывши ывшись"))
_ADJECTIVE = _longest_first(
    "ее ие ые ое ими ыми ей ий ый ой ем им ым ом его ого ему ому их ых ую юю ая яя ою ею"
)
_PARTICIPLE = (_longest_first("ем нн вш ющ щ"), _longest_first("ивш ывш ующ"))
_REFLEXIVE = (_longest_first("ся сь"),)
_VERB = (
    _longest_first("ла на ете йте ли й л ем н ло но ет ют ны ть ешь нно"),
    _longest_first(
        "ила ыла ена ейте уйте ите или ыли ей уй ил ыл им ым ен ило ыло ено ят ует уют ит ыт "
        "ены ить ыть ишь ую ю"
    ),
)
_NOUN = (
    _longest_first(
        "а ев ов ие ье е иями ями ами еи ии и ией ей ой ий й иям ям ием ем ам ом о у ах иях ях "
        "ы ь ию ью ю ия ья я"
    ),
)
_SUPERLATIVE = (_longest_first("ейш ейше"),)
_DERIVATIONAL = (_longest_first("ост ость"),)


@lru_cache(maxsize=100_000)
def russian_stem(word: str) -> str:
    """The stem of a lowercase Russian word ("лодками" -> "лодк")."""
    word = word.replace("ё", "е")
    rv = _rv(word)
    r2 = _r(word, _r(word, 0))
    stem = word[:rv]
    tail = word[rv:]
    cut = _remove(tail, _GERUND)
    if cut is None:
        unreflexive = _remove(tail, _REFLEXIVE)
        tail = tail if unreflexive is None else unreflexive
        for endings in (_adjectival, _VERB, _NOUN):
            cut = endings(tail) if callable(endings) else _remove(tail, endings)
            if cut is not None:
                break
    tail = cut if cut is not None else tail
    if tail.endswith("и"):
        tail = tail[:-1]
    offset = max(r2 - rv, 0)  # where R2 begins within the tail
    derivational = _remove(tail, _DERIVATIONAL)
    if derivational is not None and len(derivational) >= offset:
        tail = derivational
    if tail.endswith("нн"):
        tail = tail[:-1]
    else:
        superlative = _remove(tail, _SUPERLATIVE)
        if superlative is not None:
            tail = superlative[:-1] if superlative.endswith("нн") else superlative
        elif tail.endswith("ь"):
            tail = tail[:-1]
    return stem + tail


def _rv(word: str) -> int:
    """Where RV begins: after the first vowel."""
    return next((i + 1 for i, letter in enumerate(word) if letter in _VOWELS), len(word))


def _r(word: str, start: int) -> int:
    """Where R1 begins when ``start`` is 0, R2 when it is R1: after a vowel and a non-vowel."""
    for i in range(start, len(word) - 1):
        if word[i] in _VOWELS and word[i + 1] not in _VOWELS:
            return i + 2
    return len(word)


def _remove(tail: str, groups: tuple[tuple[str, ...], ...]) -> str | None:
    """``tail`` without its longest ending of ``groups``; None when it has none.

    With two groups, the first group's endings count only after "а" or "я".
    """
    best: tuple[int, str] | None = None
    for number, endings in enumerate(groups):
        for ending in endings:
            if not tail.endswith(ending):
                continue
            rest = tail[: -len(ending)]
            if len(groups) == 2 and number == 0 and not rest.endswith(("а", "я")):
                continue
            if best is None or len(ending) > best[0]:
                best = (len(ending), rest)
            break  # endings are longest first
    return None if best is None else best[1]


def _adjectival(tail: str) -> str | None:
    rest = _remove(tail, (_ADJECTIVE,))
    if rest is None:
        return None
    participle = _remove(rest, _PARTICIPLE)
    return rest if participle is None else participle
