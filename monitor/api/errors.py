"""One JSON shape for every error the API answers, and the request-body reading that feeds it.

Every 4xx (and the rare 5xx) body is::

    {"error": {"code": "validation_error", "message": "interval: must be ≥ 1 s",
               "details": [{"location": "body", "path": "interval",
                            "message": "must be ≥ 1 s", "type": "value_error"}]}}

``details`` is a list, empty unless there is something per field to say. Bodies never echo
the input (it may hold a token or a password in a URL).
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, NoReturn, TypeVar

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException

from monitor.config.loader import format_path
from monitor.errors import MonthNotStarted, SlamonError

MAX_BODY_BYTES = 64 * 1024
ModelT = TypeVar("ModelT", bound=BaseModel)

CODES = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    409: "conflict",
    413: "payload_too_large",
    415: "unsupported_media_type",
    422: "validation_error",
    429: "too_many_requests",
    500: "internal_error",
    503: "unavailable",
}
_LOCATIONS = ("body", "query", "path", "header", "cookie")
# Model-level validators name their field as a prefix ("url: a tcp target needs …").
_FIELD_PREFIX = re.compile(r"^([a-z_][a-z0-9_]*): (.+)$", re.DOTALL)


class ErrorDetail(BaseModel):
    location: str
    path: str
    message: str
    type: str


class ErrorInfo(BaseModel):
    code: str
    message: str
    details: list[ErrorDetail]


class ErrorBody(BaseModel):
    """The body of every error response (documents the shape in the OpenAPI schema)."""

    error: ErrorInfo


def error_responses(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """``responses=`` for a route or router: these statuses answer an ``ErrorBody``."""
    return {status: {"model": ErrorBody, "description": CODES[status]} for status in statuses}


class ApiError(Exception):
    """Raise in a handler or dependency to answer ``status`` with the standard error body."""

    def __init__(
        self,
        status: int,
        message: str,
        *,
        code: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code or CODES.get(status, f"http_{status}")
        self.message = message
        self.headers = headers


def error_response(
    status: int,
    message: str,
    *,
    code: str | None = None,
    details: Sequence[dict[str, Any]] = (),
    headers: Mapping[str, str] | None = None,
) -> JSONResponse:
    body = {
        "error": {
            "code": code or CODES.get(status, f"http_{status}"),
            "message": message,
            "details": list(details),
        }
    }
    return JSONResponse(body, status_code=status, headers=dict(headers) if headers else None)


def validation_details(errors: Sequence[Any]) -> list[dict[str, Any]]:
    """pydantic/FastAPI error dicts as ``{location, path, message, type}``, without input."""
    return [_detail(error) for error in errors]


def _detail(error: Any) -> dict[str, Any]:
    loc = tuple(error.get("loc", ()))
    location = loc[0] if loc and loc[0] in _LOCATIONS else "body"
    path = loc[1:] if loc and loc[0] in _LOCATIONS else loc
    message = str(error.get("msg", "invalid"))
    message = message.removeprefix("Value error, ").removeprefix("Assertion failed, ")
    if error.get("type") == "extra_forbidden":
        message = "unknown field (check the spelling)"
    named = _FIELD_PREFIX.match(message)
    if named and not path:
        path, message = (named.group(1),), named.group(2)
    kind = str(error.get("type", "value_error"))
    return {"location": location, "path": format_path(path), "message": message, "type": kind}


def _summary(details: list[dict[str, Any]]) -> str:
    shown = [f"{d['path']}: {d['message']}" if d["path"] else d["message"] for d in details[:3]]
    more = f" (and {len(details) - 3} more)" if len(details) > 3 else ""
    return "; ".join(shown) + more if shown else "the request is not valid"


async def _on_api_error(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, ApiError)
    return error_response(exc.status, exc.message, code=exc.code, headers=exc.headers)


async def _on_slamon_error(_request: Request, exc: Exception) -> JSONResponse:
    """slamon's own errors reached through a request are the client's input: 422 with the
    message, never a 500; a month that has not begun has no report yet: 404."""
    if isinstance(exc, MonthNotStarted):
        return error_response(404, str(exc))
    return error_response(422, str(exc), code="unprocessable")


async def _on_http_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    message = exc.detail if isinstance(exc.detail, str) else "request failed"
    headers = exc.headers
    if exc.status_code == 405:
        # Starlette names only the methods of the first route matching the path; the path may
        # have several (GET and POST are separate routes): Allow lists them all (RFC 9110).
        headers = {**(headers or {}), "Allow": ", ".join(allowed_methods(request))}
    return error_response(exc.status_code, message, headers=headers)


def allowed_methods(request: Request) -> list[str]:
    """Every method the app's OpenAPI document gives the request's path (what clients read)."""
    methods: set[str] = set()
    for template, operations in request.app.openapi()["paths"].items():
        pattern = re.sub(r"\\\{[^/]+?\\\}", "[^/]+", re.escape(template))
        if re.fullmatch(pattern, request.url.path):
            methods |= {m.upper() for m in operations if m.upper() in HTTP_METHODS}
    return sorted(methods)


HTTP_METHODS = {"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"}


async def _on_validation_error(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    details = validation_details(exc.errors())
    return error_response(422, _summary(details), details=details)


async def _on_unexpected(_request: Request, _exc: Exception) -> JSONResponse:
    # Starlette still logs the traceback; the client learns nothing about the internals.
    return error_response(500, "internal error; the server log has the details")


def install_error_handlers(app: FastAPI) -> None:
    """Make every error answer in the standard JSON shape."""
    app.add_exception_handler(ApiError, _on_api_error)
    app.add_exception_handler(SlamonError, _on_slamon_error)
    app.add_exception_handler(StarletteHTTPException, _on_http_error)
    app.add_exception_handler(RequestValidationError, _on_validation_error)
    app.add_exception_handler(Exception, _on_unexpected)


# --------------------------------------------------------------------------- request bodies


async def read_body(request: Request, limit: int = MAX_BODY_BYTES) -> bytes:
    """The raw request body, refused with 413 beyond ``limit`` bytes (checked while reading,
    so a lying or absent Content-Length does not help)."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise _too_large(limit)
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise _too_large(limit)
        chunks.append(chunk)
    return b"".join(chunks)


def body_reader(limit: int = MAX_BODY_BYTES) -> Callable[[Request], Awaitable[bytes]]:
    """A dependency giving the raw body, at most ``limit`` bytes. Declare it after the auth
    dependency: FastAPI solves dependencies in order, so anonymous bodies are never read."""

    async def raw_body(request: Request) -> bytes:
        return await read_body(request, limit)

    return raw_body


def _too_large(limit: int) -> ApiError:
    return ApiError(413, f"the request body is larger than {limit // 1024} KiB")


def parse_body(model: type[ModelT], raw: bytes) -> ModelT:
    """``raw`` validated as ``model``; a 422 with each field's path when it is not valid.

    JSON's non-standard NaN and Infinity are refused: they are not numbers a client means,
    and PostgreSQL's JSON columns reject them.
    """
    if not raw.strip():
        raise _invalid_json("the body is empty; send a JSON object")
    try:
        data = json.loads(raw, parse_constant=_refuse_constant)
    except (ValueError, RecursionError) as exc:
        reason = exc.args[0] if isinstance(exc, ValueError) else "nested too deeply"
        raise _invalid_json(str(reason)) from None
    if holds_nul(data):
        raise _invalid_json("strings must not contain NUL (\\u0000) characters")
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        errors = [{**e, "loc": ("body", *e["loc"])} for e in exc.errors(include_input=False)]
        raise RequestValidationError(errors) from None


def holds_nul(data: Any) -> bool:
    """Whether any string (key or value) in parsed JSON holds a NUL, which PostgreSQL refuses
    to store. Iterative: the depth is the client's choice."""
    stack = [data]
    while stack:
        item = stack.pop()
        if isinstance(item, str) and "\x00" in item:
            return True
        if isinstance(item, dict):
            stack += [*item.keys(), *item.values()]
        elif isinstance(item, list):
            stack += item
    return False


def _refuse_constant(name: str) -> NoReturn:
    raise ValueError(f"{name} is not a JSON number")


def _invalid_json(reason: str) -> RequestValidationError:
    reason = reason.splitlines()[0] if reason else "not JSON"
    error = {"type": "json_invalid", "loc": ("body",), "msg": f"not valid JSON: {reason}"}
    return RequestValidationError([error])
