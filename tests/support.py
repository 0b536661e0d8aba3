"""Helpers the tests share: where the real servers are, and fresh databases on them."""

from __future__ import annotations

import http.server
import os
import ssl
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
import sqlalchemy as sa

FIXTURES = Path(__file__).parent / "fixtures"
PG_ADMIN_URL = os.environ.get(
    "SLAMON_TEST_POSTGRES_ADMIN_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
)
PG_TEST_DB = os.environ.get("SLAMON_TEST_POSTGRES_DB", "slamon_test")
REDIS_URL = os.environ.get("SLAMON_TEST_REDIS_URL", "redis://127.0.0.1:6379/15")
REQUIRE_SERVICES = os.environ.get("SLAMON_TEST_REQUIRE_SERVICES") == "1"
CHROMIUM = Path("/usr/bin/chromium")  # Debian's, driven by playwright (never a downloaded one)
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]


def unavailable(what: str, reason: object) -> None:
    """Skip on a laptop without the server; fail in CI where it must be there."""
    message = f"{what} not reachable: {reason}"
    if REQUIRE_SERVICES:
        pytest.fail(message)
    pytest.skip(message)


def pg_url(database: str = PG_TEST_DB) -> str:
    return PG_ADMIN_URL.rsplit("/", 1)[0] + f"/{database}"


def recreate_pg_database(name: str) -> str:
    """A fresh, empty PostgreSQL database called ``name``; its URL."""
    admin = sa.create_engine(PG_ADMIN_URL, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as connection:
            connection.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
            connection.execute(sa.text(f'CREATE DATABASE "{name}"'))
    finally:
        admin.dispose()
    return pg_url(name)


def slamon_command() -> list[str]:
    """The installed `slamon` console script (what users run), beside this interpreter."""
    import sys

    script = Path(sys.executable).parent / "slamon"
    return [str(script)] if script.exists() else [sys.executable, "-m", "monitor.cli"]


def wait_for(
    predicate: object, timeout: float = 30.0, every: float = 0.2, explain: object = None
) -> object:
    """Poll ``predicate`` until it returns something truthy; fail the test on timeout, with
    what ``explain()`` returns (process logs, say) when given."""
    import time

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()  # type: ignore[operator]
        if value:
            return value
        time.sleep(every)
    detail = f"\n{explain()}" if explain else ""  # type: ignore[operator]
    pytest.fail(f"condition not met within {timeout} s{detail}")


class ApiClient:
    """Synchronous requests to an ASGI app in-process (httpx's ASGI transport, no server)."""

    def __init__(self, app: object) -> None:
        self.app = app

    def request(self, method: str, path: str, **kwargs: object) -> object:
        import asyncio

        import httpx

        async def go() -> httpx.Response:
            transport = httpx.ASGITransport(app=self.app)  # type: ignore[arg-type]
            async with httpx.AsyncClient(transport=transport, base_url="http://slamon.test") as c:
                return await c.request(method, path, **kwargs)  # type: ignore[arg-type]

        return asyncio.run(go())

    def get(self, path: str, **kwargs: object) -> object:
        return self.request("GET", path, **kwargs)

    def post(self, path: str, **kwargs: object) -> object:
        return self.request("POST", path, **kwargs)

    def delete(self, path: str, **kwargs: object) -> object:
        return self.request("DELETE", path, **kwargs)

    def __enter__(self) -> ApiClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.app.state.slamon.engine.dispose()  # type: ignore[attr-defined]


class FeedServer:
    """A real HTTP server on loopback whose answers the test sets (and changes) per path:
    ``routes[path] = (status, body)``; ``delays[path] = seconds`` makes it hang first."""

    def __init__(self) -> None:
        import http.server
        import threading
        import time

        self.routes: dict[str, tuple[int, bytes]] = {}
        self.delays: dict[str, float] = {}
        self.hits: list[str] = []
        owner = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                owner.hits.append(self.path)
                if owner.delays.get(self.path):
                    time.sleep(owner.delays[self.path])
                status, body = owner.routes.get(self.path, (404, b"not found"))
                try:
                    self.send_response(status)
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up waiting, or its process was killed

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class ApiServer:
    """A real HTTP server on loopback standing in for a cloud's API: ``answer(path, query)``
    (the path without its query, the query parsed) returns ``(status, JSON value or bytes)``;
    ``requests`` records each GET as ``(path, query, headers)``, header names in lower case;
    ``delay_s`` holds each answer back (a timeout test); with ``tls`` it serves HTTPS.
    ``close()`` frees the port (connections to it are then refused)."""

    def __init__(
        self,
        answer: Callable[[str, dict[str, str]], tuple[int, object]],
        tls: ssl.SSLContext | None = None,
    ) -> None:
        import json
        from urllib.parse import parse_qsl, urlsplit

        self.answer = answer
        self.delay_s = 0.0
        self.requests: list[tuple[str, dict[str, str], dict[str, str]]] = []
        owner = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                parts = urlsplit(self.path)
                query = dict(parse_qsl(parts.query, keep_blank_values=True))
                headers = {name.lower(): value for name, value in self.headers.items()}
                owner.requests.append((parts.path, query, headers))
                time.sleep(owner.delay_s)
                status, value = owner.answer(parts.path, query)
                body = value if isinstance(value, bytes) else json.dumps(value).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up waiting (a timeout test)

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        if tls is not None:
            self.server.socket = tls.wrap_socket(self.server.socket, server_side=True)
        self.scheme = "https" if tls else "http"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"{self.scheme}://127.0.0.1:{self.server.server_address[1]}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class WebhookReceiver:
    """A real webhook receiver on loopback: records every POST; answers ``status`` (the test
    flips it to simulate an outage); ``accepted`` holds the Idempotency-Keys it took (2xx).

    ``stop()`` closes the port (connections refused) and ``start()`` opens the same port again;
    ``delay_s`` holds each answer back after the request was recorded (so a sender can be
    killed mid-send); ``on_request`` runs with each request's headers before it is answered.
    """

    def __init__(
        self,
        port: int = 0,
        *,
        started: bool = True,
        delay_s: float = 0.0,
        on_request: Callable[[dict[str, str]], None] | None = None,
    ) -> None:
        self.port = port
        self.status = 200
        self.delay_s = delay_s
        self.on_request = on_request
        self.requests: list[tuple[dict[str, str], bytes]] = []
        self.accepted: list[str] = []
        self.server: http.server.ThreadingHTTPServer | None = None
        if started:
            self.start()

    def start(self) -> None:
        owner = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                headers = {k.lower(): v for k, v in self.headers.items()}
                owner.requests.append((headers, body))
                if owner.on_request is not None:
                    owner.on_request(headers)
                time.sleep(owner.delay_s)
                status = owner.status
                if 200 <= status < 300:
                    owner.accepted.append(headers.get("idempotency-key", ""))
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self.port = self.server.server_address[1]  # a restart reopens the same port
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hook"

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
            self.server = None

    close = stop


FIGURES: list[str] = []  # measured figures tests report; printed at the end of the run


def report_figure(line: str) -> None:
    """Keep one measured figure (a fault test's gap, takeover time…) for the run's summary,
    where CI's log shows it whether the test passed or not."""
    FIGURES.append(line)
