"""Sorting, grouping and filtering the model lists providers return.

NanoGPT's detailed model list (`GET /api/v1/models?detailed=true`) carries
`owned_by`, `name`, `description` and `capabilities`, but no open-source or
role-play flag. Subscription membership comes from its own endpoint (the
adapter asks that one instead); the other filters are judged here:

- reasoning: `capabilities.reasoning`, else a thinking/reasoner marker in the id;
- open-source: published by an open-weights lab or a role-play fine-tuner, or an
  open-weights family (Gemma, gpt-oss ...) of a lab that also sells closed models;
- roleplay: published by a role-play fine-tuner, or described as being for
  role-play or creative writing.

Filters combine as an intersection.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from charmemory.errors import ConfigError
from charmemory.ports import ModelInfo

OPEN_WEIGHT_PUBLISHERS = frozenset(
    {
        "meta-llama", "meta", "deepseek", "deepseek-ai", "qwen", "alibaba", "mistralai",
        "nousresearch", "moonshotai", "z-ai", "zai-org", "thudm", "minimax", "minimaxai",
        "microsoft", "allenai", "ibm-granite", "tencent", "baidu", "stepfun-ai", "01-ai",
        "cohereforai", "arcee-ai", "tngtech", "shisa-ai", "cognitivecomputations",
    }
)  # fmt: skip
OPEN_WEIGHT_FAMILIES = re.compile(r"gemma|gpt-oss|llama|qwen|mixtral|mistral-nemo|olmo|phi-")
ROLEPLAY_PUBLISHERS = frozenset(
    {
        "thedrummer", "sao10k", "gryphe", "neversleep", "anthracite-org", "eva-unit-01",
        "sophosympatheia", "latitudegames", "steelskull", "nothingiisreal", "undi95",
        "mancer", "raifle", "aion-labs", "arliai", "inflatebot", "doctor-shotgun",
    }
)  # fmt: skip
ROLEPLAY_WORDS = re.compile(r"role-?play|\brp\b|creative writing|storytelling|\bnsfw\b", re.I)
REASONING_MARKERS = re.compile(r"thinking|reasoner|reasoning|[-/]r1\b|\bqwq\b|\bo[134](-|$)")


def publisher(model: ModelInfo) -> str:
    """The lab or company behind a model: its owner, else the id's `vendor/` prefix."""
    if model.owner:
        return model.owner.lower()
    vendor, slash, _ = model.id.partition("/")
    return vendor.lower() if slash else "other"


def _is_reasoning(model: ModelInfo) -> bool:
    capabilities = model.extra.get("capabilities")
    if isinstance(capabilities, dict) and isinstance(capabilities.get("reasoning"), bool):
        return capabilities["reasoning"]
    return bool(REASONING_MARKERS.search(model.id.lower()))


def _is_open_source(model: ModelInfo) -> bool:
    vendor = model.id.partition("/")[0].lower() if "/" in model.id else ""
    # Role-play fine-tunes are built on open weights and published as such.
    open_labs = OPEN_WEIGHT_PUBLISHERS | ROLEPLAY_PUBLISHERS
    return (
        publisher(model) in open_labs
        or vendor in open_labs
        or bool(OPEN_WEIGHT_FAMILIES.search(model.id.lower()))
    )


def _is_roleplay(model: ModelInfo) -> bool:
    vendor = model.id.partition("/")[0].lower() if "/" in model.id else ""
    if publisher(model) in ROLEPLAY_PUBLISHERS or vendor in ROLEPLAY_PUBLISHERS:
        return True
    words = " ".join(str(model.extra.get(key) or "") for key in ("name", "description"))
    return bool(ROLEPLAY_WORDS.search(f"{model.id} {words}"))


_PREDICATES = {
    "reasoning": _is_reasoning,
    "open-source": _is_open_source,
    "roleplay": _is_roleplay,
}


def parse_filters(names: Iterable[str], *, allowed: Sequence[str]) -> frozenset[str]:
    """Filter names from flags (repeatable or comma-separated), checked against `allowed`."""
    chosen = {part.strip().lower() for name in names for part in name.split(",") if part.strip()}
    unknown = sorted(chosen - set(allowed))
    if unknown:
        known = ", ".join(allowed) if allowed else "none for this provider"
        raise ConfigError(f"unknown model filter {unknown[0]!r}; known: {known}")
    return frozenset(chosen)


def matching(models: Iterable[ModelInfo], filters: frozenset[str]) -> list[ModelInfo]:
    """The models every filter accepts, sorted by id (`subscription` is the caller's job)."""
    predicates = [_PREDICATES[name] for name in sorted(filters) if name in _PREDICATES]
    return sorted_models(m for m in models if all(test(m) for test in predicates))


def sorted_models(models: Iterable[ModelInfo]) -> list[ModelInfo]:
    return sorted(models, key=lambda model: (model.id.lower(), model.id))


def grouped_by_publisher(models: Iterable[ModelInfo]) -> list[tuple[str, list[ModelInfo]]]:
    groups: dict[str, list[ModelInfo]] = {}
    for model in models:
        groups.setdefault(publisher(model), []).append(model)
    return [(name, sorted_models(groups[name])) for name in sorted(groups)]
