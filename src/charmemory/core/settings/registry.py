"""The settings registry: every setting of charmemory by name, grouped by prefix."""

from __future__ import annotations

import difflib

from charmemory.core import (
    extraction_settings,
    model_settings,
    retrieval_settings,
    server_settings,
)
from charmemory.core.books import settings as book_settings
from charmemory.core.chat import settings as chat_settings
from charmemory.core.consolidation_prompt import DEFAULT_CONTEXT_TOKENS, MIN_CONTEXT_TOKENS
from charmemory.core.prompt import settings as prompt_settings
from charmemory.core.settings.spec import Setting
from charmemory.core.world_info import settings as world_info_settings
from charmemory.errors import ConfigError

CONSOLIDATION_SETTINGS: tuple[Setting, ...] = (
    Setting(
        "consolidation.context_tokens",
        "int",
        DEFAULT_CONTEXT_TOKENS,
        "Tokens one consolidation call may use (prompt and answer)",
        low=MIN_CONTEXT_TOKENS,
        high=2_000_000,
        scopes=frozenset({"workspace"}),
    ),
)

SETTINGS: dict[str, Setting] = {
    setting.name: setting
    for setting in (
        *extraction_settings.SETTINGS,
        *retrieval_settings.SETTINGS,
        *model_settings.SETTINGS,
        *CONSOLIDATION_SETTINGS,
        *world_info_settings.SETTINGS,
        world_info_settings.GLOBAL_BOOKS,
        world_info_settings.EXTRA_BOOKS,
        *prompt_settings.SETTINGS,
        *chat_settings.SETTINGS,
        *server_settings.SETTINGS,
        *book_settings.SETTINGS,
    )
}
GROUPS: tuple[str, ...] = tuple(dict.fromkeys(setting.group for setting in SETTINGS.values()))


def setting_named(name: str) -> Setting:
    """A setting by its full name; a near miss is answered with the names it may have meant."""
    wanted = name.strip().lower().replace("-", "_")
    if wanted.rsplit(".", 1)[-1] in ("api_key", "key"):
        raise ConfigError(
            "API keys are secrets, not settings: store one with `charmemory secrets set PROVIDER`"
        )
    if wanted in SETTINGS:
        return SETTINGS[wanted]
    close = difflib.get_close_matches(wanted, SETTINGS, n=3, cutoff=0.6)
    close += [full for full in SETTINGS if full.endswith("." + wanted) and full not in close]
    hint = f"; did you mean {' or '.join(close)}?" if close else ""
    raise ConfigError(f"unknown setting {name!r}{hint} (`charmemory settings show` lists them all)")


def in_group(prefix: str) -> list[Setting]:
    """The settings whose names start with ``prefix`` (`retrieval`, `model.`...)."""
    wanted = prefix.rstrip(".") + "."
    found = [setting for setting in SETTINGS.values() if setting.name.startswith(wanted)]
    if not found:
        raise ConfigError(f"no settings under {prefix!r}; groups: {', '.join(GROUPS)}")
    return found
