"""Typed errors for everything a provider can answer besides a completion.

Each error names the provider, the HTTP status and the provider's own words,
reduced to one clean line whatever the dialect: OpenAI-style
`{"error": {"message"}}`, Anthropic `{"type": "error", "error": {...}}`,
Ollama `{"error": "..."}`, NVIDIA problem details `{"title", "detail"}`,
FastAPI `{"detail": [...]}`, an HTML error page (its title) or plain text
(truncated). Well-known cases carry a hint on what to do. Messages pass
through a redactor before they are cut short, so no part of a key a server
echoes back ever reaches the user.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from charmemory.errors import ResponseBudgetError, UpstreamError

MESSAGE_LIMIT = 300


class ProviderError(UpstreamError):
    """A request to an LLM provider failed; `str()` is the one-line explanation."""

    def __init__(
        self,
        provider: str,
        summary: str,
        *,
        status: int | None = None,
        provider_message: str = "",
        hint: str = "",
    ):
        self.provider = provider
        self.status = status
        self.provider_message = provider_message
        self.hint = hint
        detail = [part for part in (f"HTTP {status}" if status else "", provider_message) if part]
        text = f"{provider}: {summary}"
        if detail:
            text += f" ({': '.join(detail)})"
        if hint:
            text += f"; {hint}"
        super().__init__(text)


class AuthenticationError(ProviderError):
    """401, or 403 for a key without access."""


class PaymentRequiredError(ProviderError):
    """402: the account is out of credit."""


class ModelNotFoundError(ProviderError):
    """404: no such model (or endpoint) at this provider."""


class ModelTermsNotAcceptedError(ProviderError):
    """NVIDIA refuses a model until its terms of use are accepted on build.nvidia.com."""


class RateLimitedError(ProviderError):
    """429, still after the retries."""


class ContextTooLongError(ProviderError):
    """The prompt does not fit the model's context window."""


class BadRequestError(ProviderError):
    """Any other refusal of the request itself (4xx)."""


class ProviderUnavailableError(ProviderError):
    """5xx, still after the retries."""


class ProviderTimeoutError(ProviderError):
    """No answer (or no next piece of one) within the read timeout."""


class ProviderConnectionError(ProviderError):
    """The server could not be reached, or dropped the connection."""


class MalformedResponseError(ProviderError):
    """The answer is not in the shape the API promises (bad JSON, no choices...)."""


class ModelListUnavailableError(ProviderError):
    """The server offers no model list to choose from."""


class ReasoningBudgetExhaustedError(ProviderError, ResponseBudgetError):
    """The response budget ran out while the model was still reasoning."""


Redact = Callable[[str], str]


def unredacted(text: str) -> str:
    return text


@dataclass(frozen=True)
class ErrorContext:
    """What an error message may mention about the request that failed."""

    provider: str
    model: str
    base_url: str
    has_extra_params: bool = False
    redact: Redact = unredacted


def clip(text: str, limit: int = MESSAGE_LIMIT) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def redacted_clip(text: str, redact: Redact) -> str:
    """One short line of `text` with every secret removed first (a cut key would show)."""
    return clip(redact(text))


def _from_json(data: Any) -> str | None:
    if isinstance(data, list):
        return _from_json(data[0]) if data else None
    if not isinstance(data, dict):
        return None
    error = data.get("error")
    if isinstance(error, dict):
        nested = _from_json(error)
        if nested:
            return nested
    message = data.get("message")
    if isinstance(error, str) and error:
        return f"{error}: {message}" if isinstance(message, str) and message else error
    detail = data.get("detail")
    if isinstance(detail, list):  # FastAPI validation errors
        detail = "; ".join(str(item.get("msg", item)) for item in detail if isinstance(item, dict))
    for value in (message, detail, data.get("title"), data.get("error_description")):
        if isinstance(value, str) and value.strip():
            return value
    return None


_TITLE = re.compile(r"<title[^>]*>(.*?)</title>", re.I | re.S)
_INVISIBLE = re.compile(r"<(script|style|head)[^>]*>.*?</\1>", re.I | re.S)
_TAG = re.compile(r"<[^>]+>")


def _from_html(text: str) -> str:
    title = _TITLE.search(text)
    if title and title.group(1).strip():
        return html.unescape(title.group(1))
    return html.unescape(_TAG.sub(" ", _INVISIBLE.sub(" ", text)))


def provider_message(body: bytes, content_type: str = "", redact: Redact = unredacted) -> str:
    """The provider's own explanation in an error body, as one short line without secrets."""
    text = body.decode("utf-8", errors="replace").strip()
    if not text:
        return ""
    if "json" in content_type or text[:1] in "{[":
        try:
            found = _from_json(json.loads(text))
        except ValueError:
            found = None
        if found:
            return redacted_clip(found, redact)
    if "html" in content_type or text.lower().startswith(("<!doctype", "<html", "<")):
        return redacted_clip(_from_html(text), redact)
    return redacted_clip(text, redact)


_CONTEXT_WORDS = re.compile(
    r"context[ _-]?(length|window)|maximum context|too many tokens|prompt is too long"
    r"|input is too long|reduce the length|tokens? limit",
    re.I,
)
_TERMS_WORDS = re.compile(r"terms|accept|agreement|eula|licen[cs]e", re.I)


def error_for_status(
    ctx: ErrorContext, status: int, body: bytes, content_type: str = "", *, retries: int = 0
) -> ProviderError:
    """The typed error for an HTTP error answer, with a hint where one helps."""
    message = provider_message(body, content_type, ctx.redact)
    after = f" after {retries} retries" if retries else ""
    args: dict[str, Any] = {"status": status, "provider_message": message}
    p = ctx.provider
    if status == 401:
        hint = f"store a working key with `charmemory secrets set {p}`"
        return AuthenticationError(p, "the API key was refused", hint=hint, **args)
    if status == 402:
        hint = "the account is out of credit: top it up, or choose a free or subscription model"
        return PaymentRequiredError(p, "payment required", hint=hint, **args)
    # NVIDIA answers 403 (or 404 "not found for account") until the model's terms are accepted.
    nvidia_refusal = p == "nvidia" and (
        status == 403 or (status == 404 and "for account" in message.lower())
    )
    if nvidia_refusal or (status == 403 and _TERMS_WORDS.search(message)):
        hint = (
            f"open {ctx.model}'s page on build.nvidia.com, sign in and accept its terms of use "
            "(a key without access to the model is refused the same way)"
            if p == "nvidia"
            else "accept the model's terms of use in the provider's web console"
        )
        return ModelTermsNotAcceptedError(
            p, f"model {ctx.model!r} is not enabled for this key", hint=hint, **args
        )
    if status == 403:
        hint = "the key may not use this model or endpoint; check its permissions"
        return AuthenticationError(p, "access denied", hint=hint, **args)
    if status == 404:
        hint = f"list the models with `charmemory models --provider {p}` and check base_url"
        what = f"model {ctx.model!r} or the API" if ctx.model else "the API"
        return ModelNotFoundError(p, f"{what} was not found at {ctx.base_url}", hint=hint, **args)
    if status == 413 or (400 <= status < 500 and _CONTEXT_WORDS.search(message)):
        hint = "send less text, or choose a model with a larger context window"
        return ContextTooLongError(p, "the prompt is too long for the model", hint=hint, **args)
    if status == 429:
        hint = "wait a little and try again; a free tier may allow only a few requests a minute"
        return RateLimitedError(p, f"rate limited{after}", hint=hint, **args)
    if status >= 500:
        hint = "the provider is having trouble; try again later"
        return ProviderUnavailableError(p, f"server error{after}", hint=hint, **args)
    hint = "one of the extra_params may not be supported" if ctx.has_extra_params else ""
    return BadRequestError(p, "the request was refused", hint=hint, **args)


# Anthropic names its errors instead of numbering them inside a stream.
_ERROR_TYPE_STATUS = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "api_error": 500,
    "overloaded_error": 529,
}


def error_in_payload(ctx: ErrorContext, data: Any) -> ProviderError | None:
    """The error a successful HTTP answer (or a stream event) may carry instead of content."""
    if not isinstance(data, dict) or "error" not in data:
        return None
    error = data["error"]
    status = None
    if isinstance(error, dict):
        code = error.get("code")
        status = code if isinstance(code, int) else _ERROR_TYPE_STATUS.get(str(error.get("type")))
    raw = json.dumps(data).encode()
    if status and 400 <= status <= 599:
        return error_for_status(ctx, status, raw, "application/json")
    message = provider_message(raw, "application/json", ctx.redact)
    return ProviderError(ctx.provider, "the provider reported an error", provider_message=message)
