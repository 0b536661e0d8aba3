from __future__ import annotations

from pathlib import Path

from sqlalchemy import Engine

from monitor.api.app import create_app
from monitor.settings import Settings
from tests.support import ApiClient


def settings_for(engine: Engine, tmp_path: Path, **overrides: str) -> Settings:
    values = {
        "database_url": engine.url.render_as_string(hide_password=False),
        "config": str(tmp_path / "none.yaml"),
        "state_dir": str(tmp_path / "state"),
        **overrides,
    }
    return Settings(**values)  # type: ignore[arg-type]


def test_healthz_is_ok_when_database_and_broker_answer(engine: Engine, tmp_path: Path) -> None:
    with ApiClient(create_app(settings_for(engine, tmp_path))) as client:
        response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok", "database": {"ok": True}, "broker": {"ok": True}}


def test_healthz_names_the_broker_that_does_not_answer(engine: Engine, tmp_path: Path) -> None:
    settings = settings_for(engine, tmp_path, broker_url="redis://:pw@127.0.0.1:1/0")
    with ApiClient(create_app(settings)) as client:
        response = client.get("/healthz")
    assert response.status_code == 503
    body = response.json()
    assert body["database"] == {"ok": True}
    assert body["broker"]["ok"] is False
    assert body["broker"]["error"].startswith("broker redis://***@127.0.0.1:1/0 unreachable")


def test_healthz_names_the_database_that_does_not_answer(tmp_path: Path) -> None:
    settings = Settings(  # type: ignore[call-arg]
        database_url="postgresql+psycopg://x@127.0.0.1:1/none",
        config=tmp_path / "none.yaml",
        state_dir=tmp_path / "state",
    )
    with ApiClient(create_app(settings)) as client:
        response = client.get("/healthz")
    assert response.status_code == 503
    assert response.json()["database"]["error"].startswith("database postgresql+psycopg://x@")


def test_metrics_are_in_the_prometheus_text_format(engine: Engine, tmp_path: Path) -> None:
    with ApiClient(create_app(settings_for(engine, tmp_path))) as client:
        response = client.get("/metrics")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain")
    assert "# TYPE " in response.text
