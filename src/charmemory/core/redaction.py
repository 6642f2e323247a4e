"""Secrets kept out of every text charmemory shows or keeps.

A `Redactor` replaces every occurrence of every secret it was given (the keys
in the secrets file and `CHARMEMORY_API_KEY`, not just the provider in use),
then anything shaped like a credential whoever it belongs to: a bearer token,
an `api_key: ...` pair, or a token with a provider's key prefix (`sk-`,
`gsk_`, `xai-`, `nvapi-`). Redact a whole text before cutting it short: a key
cut in half no longer matches and its first half would show.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

REDACTED = "[redacted]"

# Credentials in an echoed header or body, whatever the key: `Bearer xyz`, `x-api-key: xyz`.
_CREDENTIAL = re.compile(
    r"(?i)(bearer\s+|x-api-key[\"']?\s*[:=]\s*[\"']?|api[_-]key[\"']?\s*[:=]\s*[\"']?)"
    r"[A-Za-z0-9._~+/=-]{8,}"
)
# Tokens shaped like the keys of OpenAI, Anthropic, OpenRouter, DeepSeek (sk-),
# Groq (gsk_), xAI (xai-) and NVIDIA (nvapi-): long, with a digit, so words are safe.
_KEY_SHAPED = re.compile(
    r"(?<![A-Za-z0-9_-])(?:sk-|gsk_|xai-|nvapi-)(?=[A-Za-z_-]*[0-9])[A-Za-z0-9_-]{16,}"
)


class Redactor:
    """Replaces every known secret, and every credential-shaped token, in a text."""

    def __init__(self, secrets: Iterable[str | None] = ()):
        # One pass over all of them, longest first, so a key that contains another
        # is replaced whole and no replacement is searched again.
        known = sorted({s for s in secrets if s}, key=len, reverse=True)
        self._known = re.compile("|".join(map(re.escape, known))) if known else None

    def __call__(self, text: str) -> str:
        if self._known is not None:
            text = self._known.sub(REDACTED, text)
        text = _CREDENTIAL.sub(lambda m: m.group(1) + REDACTED, text)
        return _KEY_SHAPED.sub(REDACTED, text)


SECRET = "secret"


def without_secrets(
    bullets: Iterable[str], redact: Callable[[str], str]
) -> tuple[list[str], list[str]]:
    """The memories that reveal no secret, and a warning (`secret: ...`) for each dropped.

    A model shown a key (in a chat, a card, an error it was fed) may repeat it as
    a memory; such a memory is dropped whole rather than kept with a hole in it.
    """
    kept: list[str] = []
    warnings: list[str] = []
    for bullet in bullets:
        shown = redact(bullet)
        if shown == bullet:
            kept.append(bullet)
        else:
            warnings.append(
                f"{SECRET}: dropped a memory that held an API key or token ({shown[:120]!r})"
            )
    return kept, warnings
