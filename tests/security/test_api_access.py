"""Every route the API has, walked from ``app.routes``: who may call it, and what bodies it
refuses. New routes are covered without editing this file."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.routing import APIRoute

from monitor.api.app import create_app
from monitor.api.errors import MAX_BODY_BYTES
from monitor.settings import Settings
from tests.support import ApiClient

# Routes anyone may GET: liveness, Prometheus scraping, the public status page and the target,
# provider and pool pages its rows link to (alerts link there too), its drill-down, its badges
# and its Atom feed (what the page shows, to embed and to subscribe to), the docs.
PUBLIC = {
    "/healthz",
    "/metrics",
    "/",
    "/targets/{name:path}",
    "/providers/{slug}",
    "/pools/{name:path}",
    "/fleet",
    "/badges/{kind}/{name:path}/{metric}.svg",
    "/feed.atom",
    "/docs",
    "/docs/oauth2-redirect",
    "/openapi.json",
    "/redoc",
}
WRITE_BODIES = {
    "/api/v1/targets": {"name": "t", "kind": "http", "url": "http://10.0.0.1/"},
    "/api/v1/silences": {"match": {"rule": "x"}, "ends_at": "2100-01-01T00:00:00Z"},
}


def api_routes(routes: list[Any], prefix: str = "") -> Iterator[tuple[str, APIRoute]]:
    """``(path, route)`` for every API route, in included routers too (recent FastAPI keeps
    an included router as one entry of ``app.routes`` that holds the original router)."""
    for route in routes:
        if isinstance(route, APIRoute):
            yield prefix + route.path, route
        elif hasattr(route, "original_router"):
            inner = prefix + getattr(route.include_context, "prefix", "")
            yield from api_routes(route.original_router.routes, inner)


def all_routes() -> list[tuple[str, APIRoute]]:
    app = create_app(Settings(database_url="sqlite://", config="none.yaml"))  # type: ignore[call-arg]
    try:
        return list(api_routes(app.routes))
    finally:
        app.state.slamon.engine.dispose()


def app_routes() -> list[tuple[str, str]]:
    return [(method, path) for path, route in all_routes() for method in sorted(route.methods)]


ROUTES = app_routes()
WRITES = [(m, p) for m, p in ROUTES if m not in ("GET", "HEAD")]
READS = [(m, p) for m, p in ROUTES if m == "GET" and p not in PUBLIC]


def concrete(path: str) -> str:
    """A path with every ``{parameter}`` filled in with a plausible value."""
    return re.sub(r"\{(\w+)\}", lambda m: "1" if m.group(1).endswith("id") else "trainer-0", path)


def body_for(path: str) -> dict[str, Any] | None:
    return next((b for p, b in WRITE_BODIES.items() if concrete(path).startswith(p)), None)


def test_the_walk_finds_every_known_write_route() -> None:
    # If the walk broke (no routes found), every parametrized test below would pass vacuously.
    assert {
        ("POST", "/api/v1/targets"),
        ("DELETE", "/api/v1/targets/{name}"),
        ("POST", "/api/v1/heartbeats/{target}"),
        ("POST", "/api/v1/silences"),
        ("DELETE", "/api/v1/silences/{silence_id}"),
    } <= set(WRITES)


@pytest.mark.parametrize(("method", "path"), WRITES, ids=[f"{m} {p}" for m, p in WRITES])
def test_every_write_route_is_401_without_a_token(api: ApiClient, method: str, path: str) -> None:
    response: Any = api.request(method, concrete(path), json=body_for(path))
    assert response.status_code == 401, response.text
    assert response.headers["WWW-Authenticate"].startswith("Bearer")


@pytest.mark.parametrize(("method", "path"), WRITES, ids=[f"{m} {p}" for m, p in WRITES])
def test_every_write_route_is_403_for_a_read_token(
    api: ApiClient, reader: dict[str, str], method: str, path: str
) -> None:
    response: Any = api.request(method, concrete(path), json=body_for(path), headers=reader)
    assert response.status_code == 403, response.text
    assert response.json()["error"]["code"] == "forbidden"


@pytest.mark.parametrize(("method", "path"), READS, ids=[f"{m} {p}" for m, p in READS])
def test_every_api_read_route_is_401_without_a_token(
    api: ApiClient, method: str, path: str
) -> None:
    response: Any = api.request(method, concrete(path))
    assert response.status_code == 401, response.text


def test_no_route_lets_fastapi_read_a_body_unbounded() -> None:
    # Bodies are read by monitor.api.errors.body_reader, which stops at a size limit; a route
    # declaring a pydantic body parameter would have FastAPI read it whole, unbounded.
    assert [path for path, route in all_routes() if route.body_field] == []


# --------------------------------------------------------------------------- hostile bodies

BODY_ROUTES = [
    pytest.param("/api/v1/targets", id="targets"),
    pytest.param("/api/v1/silences", id="silences"),
    pytest.param("/api/v1/heartbeats/trainer-0", id="heartbeats"),
]


@pytest.fixture
def trainer(api: ApiClient, admin: dict[str, str]) -> None:
    body = {"name": "trainer-0", "kind": "http", "url": "http://10.0.0.5/healthz"}
    response: Any = api.post("/api/v1/targets", json=body, headers=admin)
    assert response.status_code == 201, response.text


@pytest.mark.usefixtures("trainer")
@pytest.mark.parametrize("path", BODY_ROUTES)
def test_an_oversized_body_is_413(api: ApiClient, admin: dict[str, str], path: str) -> None:
    raw = b'{"comment": "' + b"x" * (MAX_BODY_BYTES + 1) + b'"}'
    response: Any = api.post(
        path, content=raw, headers={**admin, "Content-Type": "application/json"}
    )
    assert response.status_code == 413, response.text
    assert response.json()["error"]["code"] == "payload_too_large"


def chunks(total: int, size: int = 8192) -> Iterator[bytes]:
    sent = 0
    while sent < total:
        yield b" " * min(size, total - sent)
        sent += size


@pytest.mark.usefixtures("trainer")
@pytest.mark.parametrize("path", BODY_ROUTES)
def test_an_oversized_chunked_body_without_a_length_is_413(
    api: ApiClient, admin: dict[str, str], path: str
) -> None:
    async def stream() -> Any:
        for chunk in chunks(MAX_BODY_BYTES * 4):
            yield chunk

    response: Any = api.post(path, content=stream(), headers=admin)
    assert response.status_code == 413, response.text


@pytest.mark.usefixtures("trainer")
@pytest.mark.parametrize("path", BODY_ROUTES)
@pytest.mark.parametrize(
    "raw",
    [
        pytest.param(b"[" * 10_000 + b"]" * 10_000, id="10000-arrays"),
        pytest.param(b'{"a":' * 10_000 + b"1" + b"}" * 10_000, id="10000-objects"),
        pytest.param(b"[" * 10_000, id="10000-unclosed"),
    ],
)
def test_deeply_nested_json_is_413_or_422_never_500(
    api: ApiClient, admin: dict[str, str], path: str, raw: bytes
) -> None:
    response: Any = api.post(
        path, content=raw, headers={**admin, "Content-Type": "application/json"}
    )
    assert response.status_code in (413, 422), response.text
    assert response.json()["error"]["code"] in ("payload_too_large", "validation_error")
