"""The LLM providers charmemory knows by name, and how their base URLs are written.

A preset says where a provider lives, which wire dialect it speaks, whether it
needs an API key, and the quirks a request must respect (how it asks for
structured JSON, which field carries the response budget, extra headers).
`custom` is any OpenAI-compatible server at a URL the user gives; `local` is
the in-process embedded model.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import urlsplit

from charmemory.errors import ConfigError

Dialect = Literal["openai", "anthropic", "embedded"]
# How a request asks for JSON that follows a schema: the OpenAI `json_schema`
# response format, plain JSON mode plus the schema in the prompt, or the
# schema in the prompt alone.
StructuredOutput = Literal["json_schema", "json_object", "prompt"]
STRUCTURED_OUTPUT_MODES: tuple[StructuredOutput, ...] = ("json_schema", "json_object", "prompt")

# OpenRouter credits requests to the app named in these headers.
APP_URL = "https://github.com/charmemory/charmemory"
APP_TITLE = "charmemory"

CUSTOM = "custom"
EMBEDDED = "local"
NANOGPT_FILTERS = ("subscription", "open-source", "roleplay", "reasoning")


@dataclass(frozen=True)
class ProviderPreset:
    name: str
    label: str
    base_url: str
    dialect: Dialect = "openai"
    key_required: bool = True
    structured_output: StructuredOutput = "json_schema"
    # OpenAI's reasoning models refuse `max_tokens`; the newer field works for all its models.
    max_tokens_field: str = "max_tokens"
    headers: tuple[tuple[str, str], ...] = ()
    # Names of the filters its model list understands (only NanoGPT has any).
    model_filters: tuple[str, ...] = ()


PRESETS: dict[str, ProviderPreset] = {
    preset.name: preset
    for preset in (
        ProviderPreset(
            "openai",
            "OpenAI",
            "https://api.openai.com/v1",
            max_tokens_field="max_completion_tokens",
        ),
        ProviderPreset(
            "anthropic",
            "Anthropic",
            "https://api.anthropic.com/v1",
            dialect="anthropic",
            structured_output="prompt",
        ),
        ProviderPreset(
            "openrouter",
            "OpenRouter",
            "https://openrouter.ai/api/v1",
            headers=(("HTTP-Referer", APP_URL), ("X-Title", APP_TITLE)),
        ),
        ProviderPreset(
            "groq", "Groq", "https://api.groq.com/openai/v1", structured_output="json_object"
        ),
        ProviderPreset(
            "deepseek", "DeepSeek", "https://api.deepseek.com/v1", structured_output="json_object"
        ),
        ProviderPreset("mistral", "Mistral", "https://api.mistral.ai/v1"),
        ProviderPreset("xai", "xAI", "https://api.x.ai/v1"),
        ProviderPreset(
            "nanogpt", "NanoGPT", "https://nano-gpt.com/api/v1", model_filters=NANOGPT_FILTERS
        ),
        ProviderPreset(
            "nvidia", "NVIDIA", "https://integrate.api.nvidia.com/v1", structured_output="prompt"
        ),
        ProviderPreset("ollama", "Ollama", "http://localhost:11434/v1", key_required=False),
        ProviderPreset(
            "local-server",
            "Local OpenAI-compatible server "
            "(KoboldCpp, llama.cpp server, LM Studio, text-generation-webui)",
            "http://localhost:5001/v1",
            key_required=False,
        ),
        ProviderPreset(CUSTOM, "Custom OpenAI-compatible server", "", key_required=False),
        ProviderPreset(
            EMBEDDED,
            "Embedded local model (runs inside charmemory)",
            "",
            dialect="embedded",
            key_required=False,
            structured_output="prompt",
        ),
    )
}


def preset_named(name: str) -> ProviderPreset:
    try:
        return PRESETS[name.strip().lower()]
    except KeyError:
        raise ConfigError(
            f"unknown provider {name!r}; choose one of: {', '.join(PRESETS)}"
        ) from None


# What people paste from a provider's docs: the endpoint, not the base.
_ENDPOINT_SUFFIXES = ("/chat/completions", "/messages")


def normalise_base_url(url: str) -> str:
    """The base URL a pasted URL means: no endpoint path, no trailing slash."""
    cleaned = url.strip()
    parts = urlsplit(cleaned)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ConfigError(f"base URL {url!r} is not an http(s) URL, e.g. http://localhost:5001/v1")
    if parts.query or parts.fragment:
        raise ConfigError(f"base URL {url!r} must not carry a query or fragment")
    cleaned = cleaned.rstrip("/")
    for suffix in _ENDPOINT_SUFFIXES:
        if cleaned.lower().endswith(suffix):
            cleaned = cleaned[: -len(suffix)].rstrip("/")
    return cleaned


_SCHEMA_NAME = re.compile(r"[^A-Za-z0-9_-]")


def response_format(
    name: str, schema: dict[str, Any], mode: StructuredOutput
) -> dict[str, Any] | None:
    """The OpenAI-style `response_format` for a named schema, or None where the prompt
    carries it."""
    if mode == "json_schema":
        name = _SCHEMA_NAME.sub("_", name)[:64] or "answer"
        return {"type": "json_schema", "json_schema": {"name": name, "schema": schema}}
    if mode == "json_object":
        return {"type": "json_object"}
    return None


def json_schema_hint(schema: dict[str, Any]) -> str:
    """Instruction added to the system prompt where the API cannot enforce a schema."""
    return (
        "Answer with one JSON value only (no prose, no code fence) that follows this "
        f"JSON schema:\n{json.dumps(schema, ensure_ascii=False)}"
    )
