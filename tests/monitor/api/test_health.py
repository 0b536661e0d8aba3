from __future__ import annotations

import re
from pathlib import Path

from fastapi import FastAPI
from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy import Engine
from sqlalchemy.orm import Session, sessionmaker

from monitor.api.app import create_app
from monitor.settings import Settings
from tests.monitor.health.rows import clear, put_delivery, put_feed, put_lease, put_slot
from tests.support import ApiClient


def settings_for(engine: Engine, tmp_path: Path, **overrides: str) -> Settings:
    values = {
        "database_url": engine.url.render_as_string(hide_password=False),
        "config": str(tmp_path / "none.yaml"),
        "state_dir": str(tmp_path / "state"),
        **overrides,
    }
    return Settings(**values)  # type: ignore[arg-type]


def app_reading(sessions: sessionmaker[Session], settings: Settings) -> FastAPI:
    """The real app, its database read through the test's transaction."""
    app = create_app(settings)
    app.state.slamon.sessions = sessions
    return app


def on_time(sessions: sessionmaker[Session]) -> None:
    """A leader for an hour, the dispatch on time, nothing pending, a feed polled a minute ago."""
    with sessions() as session:
        clear(session)
        put_lease(session, "web-1:4242", 7)
        put_slot(session, "probes-dispatch", 1.0, done_ago_s=0.2, fenced=1)
        put_slot(session, "reports-monthly", None)
        put_feed(session, "https://status.example/feed", polled_ago_s=60)
        session.commit()


def test_healthz_is_ok_while_a_scheduler_leads_on_time(
    engine: Engine, sessions: sessionmaker[Session], tmp_path: Path
) -> None:
    on_time(sessions)
    with ApiClient(app_reading(sessions, settings_for(engine, tmp_path))) as client:
        response = client.get("/healthz")
    assert response.status_code == 200
    body = response.json()
    assert (body["status"], body["database"], body["broker"]) == ("ok", {"ok": True}, {"ok": True})
    assert body["reasons"] == []
    scheduler = body["scheduler"]
    assert (scheduler["leader"], scheduler["token"]) == ("web-1:4242", 7)
    assert scheduler["since"].endswith("Z")
    assert scheduler["expires_at"].endswith("Z")
    assert 0 <= scheduler["lag_seconds"] < 30
    assert scheduler["entries"]["probes-dispatch"]["fenced"] == 1
    assert scheduler["entries"]["reports-monthly"]["lag_seconds"] is None
    assert body["deliveries"] == {"oldest_pending_seconds": 0.0}
    assert body["feeds"]["enabled"] == 1
    assert 50 < body["feeds"]["age_seconds"] < 600
    assert body["watchdog"] == {
        "configured": False, "last_ping_at": None, "last_attempt_at": None, "error": None,
    }  # fmt: skip


def test_healthz_is_degraded_with_the_reasons_when_dispatch_lags_and_deliveries_back_up(
    engine: Engine, sessions: sessionmaker[Session], tmp_path: Path
) -> None:
    on_time(sessions)
    with sessions() as session:
        put_slot(session, "probes-dispatch", 1.0, done_ago_s=100)
        put_delivery(session, 3600)
        session.commit()
    config = tmp_path / "slamon.yaml"
    config.write_text("watchdog: {max_lag: 45s, max_backlog: 30m}\n")
    settings = settings_for(engine, tmp_path, config=str(config))
    with ApiClient(app_reading(sessions, settings)) as client:
        response = client.get("/healthz")
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "degraded"
    # (on PostgreSQL the clock is the test transaction's start, a moment before the rows)
    lag, backlog = body["reasons"]
    assert re.fullmatch(r"dispatch 1m 3\ds late \(probes-dispatch; max_lag 45s\)", lag)
    assert re.fullmatch(
        r"oldest pending delivery is (59m 5\ds|1h 00m) old \(max_backlog 30m 00s\)", backlog
    )
    assert body["scheduler"]["leader"] == "web-1:4242"
    assert body["scheduler"]["lag_seconds"] > 45
    assert body["deliveries"]["oldest_pending_seconds"] > 1800


def test_healthz_is_degraded_while_no_scheduler_leads(
    engine: Engine, sessions: sessionmaker[Session], tmp_path: Path
) -> None:
    on_time(sessions)
    with sessions() as session:
        put_lease(session, "web-1:4242", 7, expires_in_s=-20)
        session.commit()
    with ApiClient(app_reading(sessions, settings_for(engine, tmp_path))) as client:
        body = client.get("/healthz").json()
    assert body["status"] == "degraded"
    assert body["reasons"][0].startswith("no scheduler leads (lease of web-1:4242 expired ")
    assert body["scheduler"]["leader"] is None
    assert body["scheduler"]["token"] == 7  # the last lease's, still


def test_healthz_names_the_broker_that_does_not_answer(
    engine: Engine, sessions: sessionmaker[Session], tmp_path: Path
) -> None:
    on_time(sessions)
    settings = settings_for(engine, tmp_path, broker_url="redis://:pw@127.0.0.1:1/0")
    with ApiClient(app_reading(sessions, settings)) as client:
        response = client.get("/healthz")
    assert response.status_code == 503
    body = response.json()
    assert body["status"] == "unavailable"
    assert body["database"] == {"ok": True}
    assert body["broker"]["ok"] is False
    assert body["broker"]["error"].startswith("broker redis://***@127.0.0.1:1/0 unreachable")
    assert body["reasons"] == [body["broker"]["error"]]
    assert body["scheduler"]["leader"] == "web-1:4242"  # the database still answers


def test_healthz_names_the_database_that_does_not_answer(tmp_path: Path) -> None:
    settings = Settings(  # type: ignore[call-arg]
        database_url="postgresql+psycopg://x@127.0.0.1:1/none",
        config=tmp_path / "none.yaml",
        state_dir=tmp_path / "state",
    )
    with ApiClient(create_app(settings)) as client:
        response = client.get("/healthz")
    assert response.status_code == 503
    body = response.json()
    assert body["status"] == "unavailable"
    assert body["database"]["error"].startswith("database postgresql+psycopg://x@")
    assert body["reasons"][0] == body["database"]["error"]
    assert body["scheduler"]["leader"] is None
    assert body["feeds"]["enabled"] is None


def test_metrics_are_in_the_prometheus_text_format(engine: Engine, tmp_path: Path) -> None:
    with ApiClient(create_app(settings_for(engine, tmp_path))) as client:
        response = client.get("/metrics")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain")
    assert "# TYPE " in response.text
    assert "slamon_healthy" in {f.name for f in text_string_to_metric_families(response.text)}
