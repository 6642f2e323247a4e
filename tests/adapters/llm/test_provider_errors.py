import json

import pytest

from charmemory.adapters.llm.provider_errors import (
    AuthenticationError,
    BadRequestError,
    ContextTooLongError,
    ErrorContext,
    ModelNotFoundError,
    ModelTermsNotAcceptedError,
    PaymentRequiredError,
    ProviderError,
    RateLimitedError,
    error_for_status,
    provider_message,
)
from charmemory.adapters.secrets import Redactor
from charmemory.errors import CharMemoryError


def as_json(data: object) -> bytes:
    return json.dumps(data).encode()


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            as_json({"error": {"message": "Invalid model", "type": "invalid_request_error"}}),
            "Invalid model",
        ),
        (
            as_json({"type": "error", "error": {"type": "rate_limit_error", "message": "Slow"}}),
            "Slow",
        ),
        (
            as_json({"error": "model 'llama9' not found, try pulling it first"}),
            "model 'llama9' not found, try pulling it first",
        ),
        (
            as_json({"status": 403, "title": "Forbidden", "detail": "Authorization failed"}),
            "Authorization failed",
        ),
        (
            as_json({"detail": [{"loc": ["body", "model"], "msg": "field required"}]}),
            "field required",
        ),
        (
            as_json({"code": "rate_limited", "message": "Rate limit exceeded"}),
            "Rate limit exceeded",
        ),
        (
            as_json({"error": "Unauthorized", "message": "Invalid API key"}),
            "Unauthorized: Invalid API key",
        ),
        (as_json([{"error": {"code": 400, "message": "Bad thing"}}]), "Bad thing"),
        (
            b"<html><head><title>503 Service Unavailable</title></head><body>...</body></html>",
            "503 Service Unavailable",
        ),
        (
            b"<html><body><h1>Oops</h1><script>var x = 1;</script><p>try later</p></body></html>",
            "Oops try later",
        ),
        (
            b"upstream connect error or disconnect/reset before headers",
            "upstream connect error or disconnect/reset before headers",
        ),
        (b"", ""),
    ],
)
def test_each_dialect_is_reduced_to_its_message(body: bytes, message: str) -> None:
    assert provider_message(body) == message


def test_long_bodies_are_truncated() -> None:
    text = provider_message(b"x " * 5000)
    assert len(text) <= 300 and text.endswith("…")


CTX = ErrorContext("nvidia", "meta/llama-3.1-405b", "https://integrate.api.nvidia.com/v1")


@pytest.mark.parametrize(
    ("ctx", "status", "body", "kind", "hint"),
    [
        (CTX, 401, b'{"error": "bad key"}', AuthenticationError, "charmemory secrets set nvidia"),
        (CTX, 402, b"{}", PaymentRequiredError, "out of credit"),
        (
            CTX,
            403,
            b'{"detail": "Authorization failed"}',
            ModelTermsNotAcceptedError,
            "build.nvidia.com",
        ),
        (
            CTX,
            404,
            b'{"detail": "Function abc: Not found for account xyz"}',
            ModelTermsNotAcceptedError,
            "terms of use",
        ),
        (ErrorContext("groq", "m", "u"), 403, b"{}", AuthenticationError, "permissions"),
        (
            ErrorContext("groq", "m", "u"),
            404,
            b"{}",
            ModelNotFoundError,
            "charmemory models --provider groq",
        ),
        (CTX, 429, b"{}", RateLimitedError, "wait a little"),
        (
            CTX,
            400,
            b'{"error": {"message": "This model\'s maximum context length is 8192 tokens"}}',
            ContextTooLongError,
            "larger context",
        ),
        (CTX, 413, b"too big", ContextTooLongError, "send less text"),
        (
            ErrorContext("x", "m", "u", has_extra_params=True),
            400,
            b"{}",
            BadRequestError,
            "extra_params",
        ),
    ],
)
def test_well_known_failures_carry_a_hint(
    ctx: ErrorContext, status: int, body: bytes, kind: type[ProviderError], hint: str
) -> None:
    error = error_for_status(ctx, status, body)
    assert type(error) is kind and isinstance(error, CharMemoryError)
    assert error.status == status and error.provider == ctx.provider
    assert hint in str(error)
    assert "\n" not in str(error)


def test_an_echoed_key_is_redacted() -> None:
    ctx = ErrorContext("openai", "m", "u", redact=Redactor(["sk-live-abcdef123456"]))
    error = error_for_status(
        ctx, 401, b'{"error": {"message": "key sk-live-abcdef123456 is revoked"}}'
    )
    assert "sk-live" not in str(error) and error.provider_message == "key [redacted] is revoked"


HOSTILE_KEY = "hostile0key0not0shaped0like0any0key93af"


@pytest.mark.parametrize("at", range(270, 300, 3))
@pytest.mark.parametrize(
    "body",
    [
        lambda text: as_json({"error": {"message": text}}),
        lambda text: f"<html><title>{text}</title></html>".encode(),
        lambda text: text.encode(),
    ],
    ids=["json", "html", "text"],
)
def test_a_key_near_the_cut_is_redacted_before_the_message_is_cut(at: int, body) -> None:
    # Cut first, the key's first part would survive the cut and no longer match it.
    text = "x" * at + f" your key {HOSTILE_KEY} is not allowed here"
    ctx = ErrorContext("openai", "m", "u", redact=Redactor(["unrelated-key", HOSTILE_KEY]))
    error = error_for_status(ctx, 500, body(text))
    shown = str(error)
    assert not any(HOSTILE_KEY[:n] in shown for n in range(4, len(HOSTILE_KEY)))
