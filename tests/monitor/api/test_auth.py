"""Bearer tokens on the REST API, and the one JSON shape every error answers in."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, select
from sqlalchemy.orm import Session, sessionmaker

from monitor import tokens
from monitor.api.app import create_app
from monitor.api.deps import db_session
from monitor.db.engine import make_engine
from monitor.db.migrate import upgrade
from monitor.db.models import ApiToken
from monitor.settings import Settings
from tests.support import ApiClient


def settings_for(database_url: str, tmp_path: Path) -> Settings:
    return Settings(  # type: ignore[call-arg]
        database_url=database_url,
        config=tmp_path / "none.yaml",
        state_dir=tmp_path / "state",
    )


@pytest.fixture
def api(engine: Engine, sessions: sessionmaker[Session], tmp_path: Path) -> Iterator[ApiClient]:
    """The real app; its request sessions live in the test's transaction, rolled back after."""
    app = create_app(settings_for(engine.url.render_as_string(hide_password=False), tmp_path))

    def session_in_test_transaction() -> Iterator[Session]:
        with sessions() as session:
            yield session

    app.dependency_overrides[db_session] = session_in_test_transaction
    with ApiClient(app) as client:
        yield client


def issue(sessions: sessionmaker[Session], scope: str, name: str | None = None) -> str:
    with sessions() as session:
        plaintext = tokens.create(session, name or f"{scope}-token", scope)
        session.commit()
    return plaintext


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def assert_error(response: Any, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"error"}
    assert set(body["error"]) == {"code", "message", "details"}
    assert body["error"]["code"] == code
    assert body["error"]["message"]
    error: dict[str, Any] = body["error"]
    return error


@pytest.mark.parametrize(
    ("method", "path"),
    [
        pytest.param("GET", "/api/v1/targets", id="list-targets"),
        pytest.param("GET", "/api/v1/targets/anything", id="get-target"),
        pytest.param("POST", "/api/v1/targets", id="register-target"),
        pytest.param("DELETE", "/api/v1/targets/anything", id="retire-target"),
        pytest.param("POST", "/api/v1/heartbeats/anything", id="push-heartbeat"),
    ],
)
def test_a_request_without_a_token_is_401_with_a_bearer_challenge(
    api: ApiClient, method: str, path: str
) -> None:
    response: Any = api.request(method, path, json={})
    assert_error(response, 401, "unauthorized")
    assert response.headers["www-authenticate"] == "Bearer"


def test_an_anonymous_post_is_refused_before_its_body_is_validated(api: ApiClient) -> None:
    for body in ({"content": b"{}"}, {"content": b"{not json"}, {"json": {"interval": -5}}):
        response: Any = api.post(
            "/api/v1/targets", headers={"Content-Type": "application/json"}, **body
        )
        assert_error(response, 401, "unauthorized")


@pytest.mark.parametrize(
    "authorization",
    [
        pytest.param("Bearer slm_" + "A" * 43, id="unknown-token"),
        pytest.param("Bearer ", id="empty-token"),
        pytest.param("Basic dXNlcjpwYXNz", id="basic-auth"),
        pytest.param("slm_nothing", id="no-scheme"),
    ],
)
def test_a_token_we_never_issued_is_401(api: ApiClient, authorization: str) -> None:
    response: Any = api.get("/api/v1/targets", headers={"Authorization": authorization})
    assert_error(response, 401, "unauthorized")
    assert response.headers["www-authenticate"].startswith("Bearer")


def test_a_revoked_token_is_401(api: ApiClient, sessions: sessionmaker[Session]) -> None:
    plaintext = issue(sessions, "admin")
    before: Any = api.get("/api/v1/targets", headers=bearer(plaintext))
    assert before.status_code == 200
    with sessions() as session:
        tokens.revoke(session, "admin-token")
        session.commit()
    response: Any = api.get("/api/v1/targets", headers=bearer(plaintext))
    error = assert_error(response, 401, "unauthorized")
    assert error["message"] == "the token is unknown or revoked"
    assert response.headers["www-authenticate"] == 'Bearer error="invalid_token"'


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        pytest.param("POST", "/api/v1/targets", {"name": "x", "kind": "heartbeat"}, id="register"),
        pytest.param("DELETE", "/api/v1/targets/x", None, id="retire"),
        pytest.param("POST", "/api/v1/heartbeats/x", None, id="heartbeat"),
    ],
)
def test_a_read_token_on_an_admin_route_is_403(
    api: ApiClient, sessions: sessionmaker[Session], method: str, path: str, body: object
) -> None:
    plaintext = issue(sessions, "read")
    response: Any = api.request(method, path, headers=bearer(plaintext), json=body)
    error = assert_error(response, 403, "forbidden")
    assert "admin" in error["message"]


@pytest.mark.parametrize("scope", ["read", "admin"])
def test_read_and_admin_tokens_may_read(
    api: ApiClient, sessions: sessionmaker[Session], scope: str
) -> None:
    response: Any = api.get("/api/v1/targets", headers=bearer(issue(sessions, scope)))
    assert response.status_code == 200
    assert response.json()["items"] == []


def test_using_a_token_records_when_it_was_last_used(
    api: ApiClient, sessions: sessionmaker[Session]
) -> None:
    plaintext = issue(sessions, "read")
    api.get("/api/v1/targets", headers=bearer(plaintext))
    with sessions() as session:
        row = session.scalars(select(ApiToken).where(ApiToken.name == "read-token")).one()
    assert row.last_used_at is not None


def test_error_bodies_never_echo_the_token(api: ApiClient) -> None:
    secret = "slm_" + "S" * 43
    response: Any = api.get("/api/v1/targets", headers=bearer(secret))
    assert secret not in response.text
    assert "SSSS" not in response.text


def test_unknown_paths_and_methods_answer_in_the_same_json_shape(
    api: ApiClient, sessions: sessionmaker[Session]
) -> None:
    assert_error(api.get("/api/v1/nothing-here"), 404, "not_found")
    response: Any = api.request("PUT", "/api/v1/targets", headers=bearer(issue(sessions, "admin")))
    assert_error(response, 405, "method_not_allowed")


def test_tokens_work_through_the_real_request_sessions(tmp_path: Path) -> None:
    """No test transaction here: a fresh SQLite file, committed rows, the app's own sessions."""
    url = f"sqlite:///{tmp_path / 'fresh.db'}"
    engine = make_engine(url)
    upgrade(engine)
    with Session(engine) as session:
        admin = tokens.create(session, "ops", "admin")
        session.commit()
    engine.dispose()
    target = {"name": "job-0", "kind": "heartbeat"}
    with ApiClient(create_app(settings_for(url, tmp_path))) as client:
        created: Any = client.post("/api/v1/targets", headers=bearer(admin), json=target)
        listed: Any = client.get("/api/v1/targets", headers=bearer(admin))
    assert created.status_code == 201, created.text
    assert [t["name"] for t in listed.json()["items"]] == ["job-0"]
