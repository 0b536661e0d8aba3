"""Secrets never leave through logs, error text, API output, CLI errors or reports.

The secrets: a Slack-style webhook URL (the token is in the path and the query), a webhook
signing secret, an API bearer token, and a database password. Receivers are real local HTTP
servers; the CLI runs as a subprocess; reports are rendered from a real database.
"""

from __future__ import annotations

import http.server
import json
import logging
import os
import subprocess
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
import sqlalchemy as sa

from monitor.alerts.channels.model import AlertMessage
from monitor.alerts.channels.send import send_message
from monitor.config.models import ChannelConfig
from tests.support import PG_TEST_DB, ApiClient, pg_url, slamon_command

PATH_TOKEN = "xoxbPathToken0123456789"
QUERY_TOKEN = "QuerySig9876543210abcd"
SIGNING_SECRET = "whsec-signing-secret-5551234"
DB_PASSWORD = "pg-Pa55word-never-shown"
NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
MESSAGE = AlertMessage(
    fingerprint="fp-1",
    rule="target_down",
    severity="critical",
    labels={"target": "trainer-0"},
    summary="trainer-0 is down",
    started_at=NOW,
)


class HostileReceiver:
    """A receiver that fails every POST and echoes the request line, headers and body back:
    whatever slamon keeps of its answer must still hold no secret."""

    def __init__(self, status: int = 500) -> None:
        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                echo = f"{self.requestline}\n{self.headers}\n".encode() + body
                self.send_response(status)
                self.send_header("Content-Length", str(len(echo)))
                self.end_headers()
                self.wfile.write(echo)

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receiver() -> Iterator[HostileReceiver]:
    server = HostileReceiver()
    yield server
    server.close()


def secret_url(port: int) -> str:
    return f"http://127.0.0.1:{port}/services/T0000/B0000/{PATH_TOKEN}?sig={QUERY_TOKEN}"


def assert_no_secret(text: str) -> None:
    for secret in (PATH_TOKEN, QUERY_TOKEN, SIGNING_SECRET, DB_PASSWORD):
        assert secret not in text


@pytest.mark.parametrize("kind", ["webhook", "slack", "discord", "teams"])
def test_a_failing_delivery_logs_and_reports_no_secret(
    receiver: HostileReceiver, caplog: pytest.LogCaptureFixture, kind: str
) -> None:
    channel = ChannelConfig(
        name="ops", kind=kind, url=secret_url(receiver.port), secret=SIGNING_SECRET
    )
    caplog.set_level(logging.DEBUG)
    with httpx.Client() as client:
        outcome = send_message(client, channel, MESSAGE, "key-1", NOW, timeout=5)

    assert not outcome.delivered
    assert outcome.status_code == 500
    assert "127.0.0.1" in (outcome.error or "")  # it does say where
    assert_no_secret(outcome.error or "")
    assert caplog.records  # httpx/httpcore did log the request
    for record in caplog.records:
        assert_no_secret(record.getMessage())


def test_an_unreachable_receiver_logs_and_reports_no_secret(
    caplog: pytest.LogCaptureFixture,
) -> None:
    closed = HostileReceiver()
    closed.close()  # the port is free again: connections are refused
    channel = ChannelConfig(name="ops", kind="slack", url=secret_url(closed.port))
    caplog.set_level(logging.DEBUG)
    with httpx.Client() as client:
        outcome = send_message(client, channel, MESSAGE, "key-1", NOW, timeout=5)

    assert outcome.retry
    assert_no_secret(outcome.error or "")
    for record in caplog.records:
        assert_no_secret(record.getMessage())


def test_a_refused_api_token_is_not_logged_or_echoed(
    api: ApiClient, caplog: pytest.LogCaptureFixture
) -> None:
    presented = "slm_" + PATH_TOKEN
    caplog.set_level(logging.DEBUG)
    for method, path in (("GET", "/api/v1/targets"), ("POST", "/api/v1/targets")):
        response: Any = api.request(method, path, headers={"Authorization": f"Bearer {presented}"})
        assert response.status_code == 401
        assert PATH_TOKEN not in response.text
    for record in caplog.records:
        assert PATH_TOKEN not in record.getMessage()


def test_api_output_holds_no_credential_of_a_target_url(
    api: ApiClient, admin: dict[str, str], reader: dict[str, str]
) -> None:
    url = f"https://probe:{DB_PASSWORD}@10.0.0.5/healthz"
    created: Any = api.post(
        "/api/v1/targets", json={"name": "trainer-0", "kind": "http", "url": url}, headers=admin
    )
    assert created.status_code == 201, created.text
    for path in ("/api/v1/targets", "/api/v1/targets/trainer-0", "/api/v1/alerts", "/metrics", "/"):
        response: Any = api.get(path, headers=reader)
        assert response.status_code == 200, path
        assert_no_secret(response.text)


# --------------------------------------------------------------------------- the CLI


def slamon(*args: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*slamon_command(), *args],
        cwd=cwd,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=90,
        check=False,
    )


BAD_DATABASE_URLS = [
    pytest.param(f"postgresql+psycopg://slamon:{DB_PASSWORD}@127.0.0.1:1/slamon", id="unreachable"),
    pytest.param(f"postgresql+psycopg://slamon:{DB_PASSWORD}@127.0.0.1:notaport/x", id="bad-port"),
    pytest.param(f"nosuchdialect://slamon:{DB_PASSWORD}@127.0.0.1/x", id="unknown-dialect"),
    pytest.param(f"postgresql+psycopg://slamon:{DB_PASSWORD}@[::1/x", id="unclosed-bracket"),
]


@pytest.mark.parametrize("database_url", BAD_DATABASE_URLS)
@pytest.mark.parametrize(
    "args",
    [
        pytest.param(("migrate",), id="migrate"),
        pytest.param(("alerts", "list"), id="alerts-list"),
        pytest.param(("probe", "once", "--json"), id="probe-once"),
        pytest.param(
            ("report", "monthly", "--month", "2026-10", "--format", "json", "--out", "r.json"),
            id="report",
        ),
        pytest.param(("token", "list"), id="token-list"),
    ],
)
def test_cli_errors_about_the_database_never_show_its_password(
    tmp_path: Path, args: tuple[str, ...], database_url: str
) -> None:
    result = slamon(*args, cwd=tmp_path, SLAMON_DATABASE_URL=database_url)
    assert result.returncode == 1
    assert result.stderr.startswith("error: "), result.stderr
    assert "Traceback" not in result.stderr
    assert DB_PASSWORD not in result.stderr + result.stdout


# --------------------------------------------------------------------------- reports

CONFIG_WITH_SECRETS = f"""
targets:
  - {{name: trainer-0, kind: http, url: "https://probe:{DB_PASSWORD}@10.0.0.5/healthz"}}
channels:
  - {{name: ops, kind: slack, url: "https://hooks.slack.com/services/T0/B0/{PATH_TOKEN}"}}
  - name: hook
    kind: webhook
    url: "https://h.example.com/x?sig={QUERY_TOKEN}"
    secret: {SIGNING_SECRET}
"""


@pytest.mark.postgres
@pytest.mark.parametrize("fmt", ["json", "html", "csv"])
def test_the_monthly_report_holds_no_secret(
    postgresql_engine: sa.Engine, tmp_path: Path, fmt: str
) -> None:
    # PostgreSQL trusts local connections, so a password in the URL is accepted and ignored.
    url = sa.make_url(pg_url(PG_TEST_DB)).set(password=DB_PASSWORD)
    (tmp_path / "slamon.yaml").write_text(CONFIG_WITH_SECRETS)
    out = tmp_path / f"report.{fmt}"
    result = slamon(
        "report",
        "monthly",
        "--month",
        "2026-10",
        "--format",
        fmt,
        "--out",
        str(out),
        cwd=tmp_path,
        SLAMON_DATABASE_URL=url.render_as_string(hide_password=False),
        SLAMON_CONFIG=str(tmp_path / "slamon.yaml"),
    )
    assert result.returncode == 0, result.stderr
    text = out.read_text(encoding="utf-8")
    if fmt == "json":
        assert json.loads(text)["month"] == "2026-10"
    assert_no_secret(text + result.stdout + result.stderr)
