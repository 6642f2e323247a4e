"""The settings of retrieval and injection: defaults, allowed values and where values come from.

Values are stored as JSON under keys `retrieval.<name>`, once for the workspace
and optionally per character; a character's value wins over the workspace's,
and `None` means "not set here". Keys of other settings may sit in the same
mapping and are left alone, while an unknown `retrieval.*` key is a typo and
is refused.

Two granularities: per bullet (the default; each bullet carries its block's
topic, and optionally its date and chat, as context) and SillyTavern-style
chunks of the whole memory file, for people who want Vector Storage's familiar
behaviour: the same size threshold, chunk size, overlap and number of chunks,
and no token budget.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Literal

from charmemory.core.chunking import ChunkSettings
from charmemory.core.fusion import DEFAULT_FUSION, Fusion, fusion_from_dict, fusion_to_dict
from charmemory.core.injection import InjectionSettings
from charmemory.core.retrieval import EmbeddingContext
from charmemory.core.setting_text import parse_switch, setting_name
from charmemory.errors import ConfigError

KEY_PREFIX = "retrieval."
Granularity = Literal["bullet", "chunk"]
Kind = Literal["int", "number", "bool", "choice", "template", "fusion"]


@dataclass(frozen=True)
class RetrievalSettings:
    granularity: Granularity = "bullet"
    top_k: int = 5
    candidates: int = 30  # taken from each signal before fusion
    fusion: Fusion = DEFAULT_FUSION
    # The score threshold, on cosine similarity; 0.2 lost no recall on the labelled
    # set (bench/RESULTS.md) and keeps unrelated memories out when nothing fits.
    min_cosine: float = 0.2
    query_messages: int = 2
    dedupe: bool = True
    context: EmbeddingContext = field(default_factory=EmbeddingContext)
    injection: InjectionSettings = field(default_factory=InjectionSettings)
    chunks: ChunkSettings = field(default_factory=ChunkSettings)
    chunk_count: int = 5  # chunks to retrieve, in chunk granularity

    @property
    def retrieved(self) -> int:
        """How many items a retrieval returns at most."""
        return self.chunk_count if self.granularity == "chunk" else self.top_k

    @property
    def injection_in_force(self) -> InjectionSettings:
        """The injection settings; chunks go in as SillyTavern's Data Bank puts them.

        That is: whole, in file order, one per line, whatever their size.
        """
        if self.granularity == "chunk":
            return replace(
                self.injection,
                item_template="{{text}}",
                separator="\n",
                order="document",
                token_budget=None,
            )
        return self.injection

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["fusion"] = fusion_to_dict(self.fusion)
        return data


@dataclass(frozen=True)
class SettingSpec:
    """How one setting is shown and checked; `low`/`high` bound numbers."""

    label: str
    kind: Kind
    read: Callable[[RetrievalSettings], Any]
    low: float | None = None
    high: float | None = None
    choices: tuple[str, ...] = ()


SPECS: dict[str, SettingSpec] = {
    "granularity": SettingSpec(
        "Retrieve bullets, or SillyTavern-style chunks of the file",
        "choice",
        lambda s: s.granularity,
        choices=("bullet", "chunk"),
    ),
    "top_k": SettingSpec("Memories to retrieve", "int", lambda s: s.top_k, 1, 50),
    "candidates": SettingSpec(
        "Candidates per signal before fusion", "int", lambda s: s.candidates, 5, 500
    ),
    "fusion": SettingSpec(
        "Fusion of BM25 and cosine", "fusion", lambda s: fusion_to_dict(s.fusion)
    ),
    "min_cosine": SettingSpec(
        "Score threshold (cosine similarity)", "number", lambda s: s.min_cosine, 0, 1
    ),
    "query_messages": SettingSpec(
        "Chat messages in the query", "int", lambda s: s.query_messages, 1, 20
    ),
    "dedupe": SettingSpec("Return the same memory once", "bool", lambda s: s.dedupe),
    "embed_topic": SettingSpec(
        "Embed each bullet with its block's topic", "bool", lambda s: s.context.topic
    ),
    "embed_date": SettingSpec(
        "Embed each bullet with its block's date", "bool", lambda s: s.context.date
    ),
    "embed_chat": SettingSpec(
        "Embed each bullet with its block's chat", "bool", lambda s: s.context.chat
    ),
    "template": SettingSpec("Injection template", "template", lambda s: s.injection.template),
    "item_template": SettingSpec(
        "Template of one memory (bullets)", "template", lambda s: s.injection.item_template
    ),
    "token_budget": SettingSpec(
        "Injection budget in tokens (bullets; chunks have none)",
        "int",
        lambda s: s.injection.token_budget,
        50,
        32000,
    ),
    "order": SettingSpec(
        "Order of injected memories (bullets)",
        "choice",
        lambda s: s.injection.order,
        choices=("document", "relevance"),
    ),
    "position": SettingSpec(
        "Injection position",
        "choice",
        lambda s: s.injection.position,
        choices=("in_prompt", "in_chat", "before_prompt"),
    ),
    "depth": SettingSpec("Injection depth", "int", lambda s: s.injection.depth, 0, 10000),
    "role": SettingSpec(
        "Injection role",
        "choice",
        lambda s: s.injection.role,
        choices=("system", "user", "assistant"),
    ),
    "chunk_threshold_kb": SettingSpec(
        "Cut files larger than (KB)", "number", lambda s: s.chunks.size_threshold_kb, 0, 100000
    ),
    "chunk_size": SettingSpec(
        "Chunk size (characters)", "int", lambda s: s.chunks.chunk_size, 100, 100000
    ),
    "chunk_overlap_percent": SettingSpec(
        "Chunk overlap (%)", "number", lambda s: s.chunks.overlap_percent, 0, 50
    ),
    "chunk_count": SettingSpec("Chunks to retrieve", "int", lambda s: s.chunk_count, 1, 50),
}


def setting_key(name: str) -> str:
    """The storage key of a setting named with or without its prefix, e.g. `retrieval.top_k`."""
    key = KEY_PREFIX + name.removeprefix(KEY_PREFIX)
    _name_of(key)
    return key


def setting_values(settings: RetrievalSettings) -> dict[str, Any]:
    """Every setting by name, as stored (the inverse of `merge_settings`)."""
    return {name: spec.read(settings) for name, spec in SPECS.items()}


def merge_settings(
    workspace: Mapping[str, Any], character: Mapping[str, Any] | None = None
) -> RetrievalSettings:
    """The settings in force for a character: defaults < workspace < character."""
    values = setting_values(RetrievalSettings())
    scopes = (("workspace", workspace), ("character", character or {}))
    for scope, stored in scopes:
        for key, value in stored.items():
            if key.startswith(KEY_PREFIX) and value is not None:
                name = _name_of(key, scope=f" in the {scope} settings")
                values[name] = _checked(name, value)
    return _assembled(values)


def validate_setting(key: str, value: Any) -> Any:
    """Check one value before it is stored; returns the form to store (None: unset)."""
    name = _name_of(key)
    return None if value is None else _checked(name, value)


def parse_setting_text(key: str, text: str) -> Any:
    """Turn typed text (a CLI argument, a form field) into the setting's checked JSON value."""
    name = _name_of(key)
    spec = SPECS[name]
    word = text.strip()
    try:
        if spec.kind == "int":
            return _checked(name, int(word))
        if spec.kind == "number":
            return _checked(name, float(word))
    except ValueError:
        raise ConfigError(f"{KEY_PREFIX}{name} must be a number, not {text!r}") from None
    if spec.kind == "bool":
        return parse_switch(KEY_PREFIX + name, word)
    if spec.kind == "template":
        # A typed "\n" means a line break: a shell argument rarely holds a real one.
        return _checked(name, text.replace("\\n", "\n"))
    if spec.kind == "fusion":
        try:
            return _checked(name, json.loads(text))
        except json.JSONDecodeError:
            raise ConfigError(
                f'{KEY_PREFIX}fusion must be a JSON object such as {{"kind": "rrf", "k": 60}}'
            ) from None
    return _checked(name, word)


def _name_of(key: str, *, scope: str = "") -> str:
    return setting_name(key, KEY_PREFIX, SPECS, scope=scope)


def _checked(name: str, value: Any) -> Any:
    spec = SPECS[name]
    key = KEY_PREFIX + name
    if spec.kind == "bool":
        if not isinstance(value, bool):
            raise ConfigError(f"{key} must be true or false, not {value!r}")
        return value
    if spec.kind == "choice":
        if value not in spec.choices:
            raise ConfigError(f"{key} must be one of {', '.join(spec.choices)}, not {value!r}")
        return value
    if spec.kind == "template":
        if not isinstance(value, str) or "{{text}}" not in value:
            raise ConfigError(f"{key} must be text holding {{{{text}}}}, not {value!r}")
        return value
    if spec.kind == "fusion":
        if not isinstance(value, dict):
            raise ConfigError(f'{key} must be an object such as {{"kind": "weighted"}}')
        try:
            return fusion_to_dict(fusion_from_dict(value))
        except (TypeError, ValueError) as error:
            raise ConfigError(f"{key}: {error}") from None
    # bool is an int in Python; `true` for a count is a mistake, not 1.
    whole = spec.kind == "int"
    wanted = int if whole else int | float
    if isinstance(value, bool) or not isinstance(value, wanted):
        kind = "a whole number" if whole else "a number"
        raise ConfigError(f"{key} must be {kind}, not {value!r}")
    assert spec.low is not None and spec.high is not None
    if not spec.low <= value <= spec.high:
        raise ConfigError(
            f"{key} ({spec.label}) must be between {spec.low:g} and {spec.high:g}, not {value}"
        )
    return value


def _assembled(values: dict[str, Any]) -> RetrievalSettings:
    return RetrievalSettings(
        granularity=values["granularity"],
        top_k=values["top_k"],
        candidates=values["candidates"],
        fusion=fusion_from_dict(values["fusion"]),
        min_cosine=values["min_cosine"],
        query_messages=values["query_messages"],
        dedupe=values["dedupe"],
        context=EmbeddingContext(
            topic=values["embed_topic"], date=values["embed_date"], chat=values["embed_chat"]
        ),
        injection=InjectionSettings(
            template=values["template"],
            item_template=values["item_template"],
            token_budget=values["token_budget"],
            order=values["order"],
            position=values["position"],
            depth=values["depth"],
            role=values["role"],
        ),
        chunks=ChunkSettings(
            size_threshold_kb=values["chunk_threshold_kb"],
            chunk_size=values["chunk_size"],
            overlap_percent=values["chunk_overlap_percent"],
        ),
        chunk_count=values["chunk_count"],
    )
