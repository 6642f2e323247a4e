"""World Info (lorebooks): which entries activate for a generation, where they go, and why.

The behaviour follows SillyTavern's World Info; docs/world-info.md lists every
entry field and each decision taken where SillyTavern is ambiguous.

    candidates = gather_candidates(LoreSources(character=(NamedBook("Eldoria", book),)))
    result = activate_world_info(candidates, scan, max_context=7892, rng=random.Random(7))
    result.placement.before        # text for the "World Info (before)" prompt section
    result.explanations()          # why each candidate was activated or not
"""

from charmemory.core.world_info.activation import (
    ActivatedEntry,
    WorldInfoResult,
    activate_world_info,
)
from charmemory.core.world_info.candidates import (
    Candidates,
    LoreSources,
    NamedBook,
    gather_candidates,
)
from charmemory.core.world_info.entries import GenerationType, LoreEntry, Role, lore_entry
from charmemory.core.world_info.explain import Explanation, Outcome
from charmemory.core.world_info.placement import DepthInjection, WorldInfoPlacement
from charmemory.core.world_info.scan import CardFields, ScanContext, ScanMessage, prompt_messages
from charmemory.core.world_info.settings import (
    DEFAULT_WORLD_INFO_SETTINGS,
    Strategy,
    WorldInfoSettings,
)
from charmemory.core.world_info.timed import TIMED_KEY

__all__ = [
    "DEFAULT_WORLD_INFO_SETTINGS",
    "TIMED_KEY",
    "ActivatedEntry",
    "Candidates",
    "CardFields",
    "DepthInjection",
    "Explanation",
    "GenerationType",
    "LoreEntry",
    "LoreSources",
    "NamedBook",
    "Outcome",
    "Role",
    "ScanContext",
    "ScanMessage",
    "Strategy",
    "WorldInfoPlacement",
    "WorldInfoResult",
    "WorldInfoSettings",
    "activate_world_info",
    "gather_candidates",
    "lore_entry",
    "prompt_messages",
]
