"""The settings of retrieval and injection: declared once (`SETTINGS`), read as one value.

Values live in the settings registry under `retrieval.<name>`, for the workspace
and per character (a character's value wins).

Two granularities: per bullet (the default; each bullet carries its block's
topic, and optionally its date and chat, as context) and SillyTavern-style
chunks of the whole memory file, for people who want Vector Storage's familiar
behaviour: the same size threshold, chunk size, overlap and number of chunks,
and no token budget.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Literal

from charmemory.core.chunking import ChunkSettings
from charmemory.core.fusion import DEFAULT_FUSION, Fusion, fusion_from_dict, fusion_to_dict
from charmemory.core.injection import InjectionSettings
from charmemory.core.providers import normalise_base_url
from charmemory.core.retrieval import EmbeddingContext
from charmemory.core.settings.spec import Kind, ScopeKind, Setting, checked

GROUP = "retrieval"
Granularity = Literal["bullet", "chunk"]
# Where query and memory embeddings come from; an index holds one model's vectors.
EMBEDDERS = ("local", "openai", "ollama")
# The local embedding models; "auto" takes the English one for memory files written in
# English and the multilingual one (when installed) for the others (core/language.py).
ENGLISH_MODEL = "all-minilm-l6-v2-int8"
MULTILINGUAL_MODEL = "multilingual-e5-small-q4"
LOCAL_MODELS = ("auto", ENGLISH_MODEL, MULTILINGUAL_MODEL)
_WORKSPACE: frozenset[ScopeKind] = frozenset({"workspace"})


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
    # Words of a query that are embedded (of a chat query: of each message, embedded
    # apart); BM25 reads all of it. Two role-play messages run to 250-300 words, and
    # embedding 256 tokens took 4x a question's time; 96 words lost no recall on long
    # chat queries (bench/RESULTS.md).
    query_vector_words: int = 96
    dedupe: bool = True
    # Each memory gains this share of the mean score of its block's other candidates.
    block_weight: float = 0.2
    # Questions about time ("what happened yesterday?") rank the memories of those days
    # first: time questions recall@5 0.40 -> 0.90 on the labelled set (bench/RESULTS.md).
    time_questions: bool = True
    local_model: str = "auto"
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


def _template(value: str) -> str:
    if "{{text}}" not in value:
        raise ValueError("must be text holding {{text}}")
    return value


def _fusion(value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ValueError('must be an object such as {"kind": "rrf", "k": 60}')
    try:
        return fusion_to_dict(fusion_from_dict(value))
    except (TypeError, ValueError) as error:
        raise ValueError(str(error)) from None


def _setting(name: str, kind: Kind, default: Any, help: str, **rules: Any) -> Setting:
    return Setting(f"{GROUP}.{name}", kind, default, help, **rules)


_DEFAULT = RetrievalSettings()
SETTINGS: tuple[Setting, ...] = (
    _setting(
        "granularity",
        "choice",
        _DEFAULT.granularity,
        "Retrieve bullets, or SillyTavern-style chunks of the file",
        choices=("bullet", "chunk"),
    ),
    _setting("top_k", "int", _DEFAULT.top_k, "Memories to retrieve", low=1, high=50),
    _setting(
        "candidates",
        "int",
        _DEFAULT.candidates,
        "Candidates per signal before fusion",
        low=5,
        high=500,
    ),
    _setting(
        "fusion",
        "json",
        fusion_to_dict(_DEFAULT.fusion),
        "Fusion of BM25 and cosine",
        check=_fusion,
    ),
    _setting(
        "min_cosine",
        "number",
        _DEFAULT.min_cosine,
        "Score threshold (cosine similarity)",
        low=0,
        high=1,
    ),
    _setting(
        "query_messages",
        "int",
        _DEFAULT.query_messages,
        "Chat messages in the query",
        low=1,
        high=20,
    ),
    _setting(
        "query_vector_words",
        "int",
        _DEFAULT.query_vector_words,
        "Words of the query that are embedded, of each chat message apart (BM25 reads them all)",
        low=8,
        high=1000,
    ),
    _setting("dedupe", "bool", _DEFAULT.dedupe, "Return the same memory once"),
    _setting(
        "block_weight",
        "number",
        _DEFAULT.block_weight,
        "Weight of a memory's block: the mean score of its block's other memories (bullets)",
        low=0,
        high=2,
    ),
    _setting(
        "time_questions",
        "bool",
        _DEFAULT.time_questions,
        "Rank memories of the days a question asks about first (by block dates)",
    ),
    _setting("embed_topic", "bool", True, "Embed each bullet with its block's topic"),
    _setting("embed_date", "bool", False, "Embed each bullet with its block's date"),
    _setting("embed_chat", "bool", False, "Embed each bullet with its block's chat"),
    _setting(
        "template", "text", _DEFAULT.injection.template, "Injection template", check=_template
    ),
    _setting(
        "item_template",
        "text",
        _DEFAULT.injection.item_template,
        "Template of one memory (bullets)",
        check=_template,
    ),
    _setting(
        "token_budget",
        "int",
        _DEFAULT.injection.token_budget,
        "Injection budget in tokens (bullets; chunks have none)",
        low=50,
        high=32000,
    ),
    _setting(
        "order",
        "choice",
        _DEFAULT.injection.order,
        "Order of injected memories (bullets)",
        choices=("document", "relevance"),
    ),
    _setting(
        "position",
        "choice",
        _DEFAULT.injection.position,
        "Injection position",
        choices=("in_prompt", "in_chat", "before_prompt"),
    ),
    _setting("depth", "int", _DEFAULT.injection.depth, "Injection depth", low=0, high=10000),
    _setting(
        "role",
        "choice",
        _DEFAULT.injection.role,
        "Injection role",
        choices=("system", "user", "assistant"),
    ),
    _setting(
        "chunk_threshold_kb",
        "number",
        _DEFAULT.chunks.size_threshold_kb,
        "Cut files larger than (KB)",
        low=0,
        high=100000,
    ),
    _setting(
        "chunk_size",
        "int",
        _DEFAULT.chunks.chunk_size,
        "Chunk size (characters)",
        low=100,
        high=100000,
    ),
    _setting(
        "chunk_overlap_percent",
        "number",
        _DEFAULT.chunks.overlap_percent,
        "Chunk overlap (%)",
        low=0,
        high=50,
    ),
    _setting("chunk_count", "int", _DEFAULT.chunk_count, "Chunks to retrieve", low=1, high=50),
    _setting(
        "embedder",
        "choice",
        "local",
        "Embedding model: the local one, or an OpenAI-compatible or Ollama server",
        choices=EMBEDDERS,
        scopes=_WORKSPACE,
    ),
    _setting(
        "local_model",
        "choice",
        "auto",
        "Local embedding model: auto (English memories: MiniLM; others: multilingual-e5 "
        "when installed), or one for every memory file",
        choices=LOCAL_MODELS,
    ),
    _setting(
        "embedder_url",
        "text",
        None,
        "Base URL of the embedding server (default: OpenAI's, or Ollama on this machine)",
        check=lambda url: normalise_base_url(url.strip()),
        blank_is_unset=True,
        scopes=_WORKSPACE,
    ),
    _setting(
        "embedder_model",
        "text",
        None,
        "Model the embedding server runs (e.g. text-embedding-3-small, nomic-embed-text)",
        check=str.strip,
        blank_is_unset=True,
        scopes=_WORKSPACE,
    ),
)


def from_values(values: Mapping[str, Any]) -> RetrievalSettings:
    """The settings from values by full name (`retrieval.top_k`); missing ones are defaults."""
    chosen = {}
    for setting in SETTINGS:
        value = checked(setting, values.get(setting.name))
        chosen[setting.short] = setting.default if value is None else value
    return _assembled(chosen)


def _assembled(values: dict[str, Any]) -> RetrievalSettings:
    return RetrievalSettings(
        granularity=values["granularity"],
        top_k=values["top_k"],
        candidates=values["candidates"],
        fusion=fusion_from_dict(values["fusion"]),
        min_cosine=values["min_cosine"],
        query_messages=values["query_messages"],
        query_vector_words=values["query_vector_words"],
        dedupe=values["dedupe"],
        block_weight=values["block_weight"],
        time_questions=values["time_questions"],
        local_model=values["local_model"],
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
