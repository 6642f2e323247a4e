"""Every error as one JSON line, `{"error": {"message", "type"}}`, never a stack trace.

User errors keep their own message and get the 4xx that fits; an upstream
provider's refusal keeps its HTTP status; anything unexpected is a 500 that
says to look at the server's log, where the traceback goes.
"""

from __future__ import annotations

import logging

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException

from charmemory.errors import (
    CharMemoryError,
    ConfigError,
    ConflictError,
    ContextTooSmallError,
    NotFoundError,
    ReadOnlyWorkspaceError,
    StaleVersionError,
    UpstreamError,
)

log = logging.getLogger("charmemory.server")

_STATUS: tuple[tuple[type[CharMemoryError], int, str], ...] = (
    (NotFoundError, 404, "not_found"),
    (StaleVersionError, 412, "precondition_failed"),
    (ConflictError, 409, "conflict"),
    (ReadOnlyWorkspaceError, 403, "read_only"),
    (ConfigError, 400, "config_error"),
    (ContextTooSmallError, 400, "context_too_small"),
)
_HTTP_TYPES = {
    401: "unauthorized",
    404: "not_found",
    405: "method_not_allowed",
    413: "payload_too_large",
    415: "unsupported_media_type",
}


def error_response(
    status: int, message: str, kind: str, headers: dict | None = None
) -> JSONResponse:
    return JSONResponse(
        {"error": {"message": message, "type": kind}}, status_code=status, headers=headers
    )


def error_status(error: CharMemoryError) -> tuple[int, str]:
    if isinstance(error, UpstreamError):
        status = error.status if error.status and 400 <= error.status <= 599 else None
        if status is None:
            status = 504 if "timeout" in type(error).__name__.lower() else 502
        return status, "upstream_error"
    for kind, status, name in _STATUS:
        if isinstance(error, kind):
            return status, name
    return 400, "invalid_request"


def install_error_handlers(api: FastAPI) -> None:
    @api.exception_handler(CharMemoryError)
    async def user_error(request: Request, error: CharMemoryError) -> JSONResponse:
        status, kind = error_status(error)
        return error_response(status, str(error), kind)

    @api.exception_handler(RequestValidationError)
    async def invalid(request: Request, error: RequestValidationError) -> JSONResponse:
        problems = [
            f"{'.'.join(str(p) for p in item.get('loc', ()) if p != 'body') or 'body'}: "
            f"{item.get('msg', 'invalid')}"
            for item in error.errors()
        ]
        return error_response(422, "; ".join(problems) or "invalid request", "invalid_request")

    @api.exception_handler(HTTPException)
    async def http_error(request: Request, error: HTTPException) -> JSONResponse:
        message = error.detail if isinstance(error.detail, str) else "request refused"
        kind = _HTTP_TYPES.get(error.status_code, "invalid_request")
        return error_response(error.status_code, message, kind, dict(error.headers or {}))

    @api.exception_handler(Exception)
    async def unexpected(request: Request, error: Exception) -> JSONResponse:
        log.exception("unexpected error on %s %s", request.method, request.url.path)
        return error_response(500, "internal error; the server log says more", "internal_error")
