"""Property-based checks of every route in the app's own OpenAPI schema (schemathesis), with an
admin token: whatever the generated input, no route answers a 5xx. (It found one: a report for
month 0000-01 crashed with a 500; months now start at year 1000 and slamon's own errors map to
422.)

The requests go through httpx in-process (tests/scenarios/test_openapi.py runs schemathesis
--checks all against the running service)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.core import NotSet
from sqlalchemy import Engine
from sqlalchemy.orm import Session, sessionmaker

from monitor import tokens
from monitor.api.app import create_app
from monitor.api.deps import db_session
from monitor.settings import Settings
from tests.support import ApiClient

pytestmark = pytest.mark.slow
READ_ROUTES = {f"/api/v1/{r}" for r in ("providers", "incidents", "outages", "sla", "alerts")}


@pytest.fixture
def fuzzed(
    engine: Engine, sessions: sessionmaker[Session], tmp_path: Path
) -> Iterator[tuple[object, dict[str, str]]]:
    """The real app, its request sessions inside the test's transaction (rolled back after),
    and an admin token's header."""
    app = create_app(
        Settings(  # type: ignore[call-arg]
            database_url=engine.url.render_as_string(hide_password=False),
            config=tmp_path / "none.yaml",
            state_dir=tmp_path / "state",
        )
    )

    def session_in_test_transaction() -> Iterator[Session]:
        with sessions() as session:
            yield session

    app.dependency_overrides[db_session] = session_in_test_transaction
    with sessions() as session:
        token = tokens.create(session, "fuzz-admin", "admin")
        session.commit()
    try:
        yield app, {"Authorization": f"Bearer {token}"}
    finally:
        app.state.slamon.engine.dispose()


def test_no_route_answers_5xx(fuzzed: tuple[object, dict[str, str]]) -> None:
    app, headers = fuzzed
    client = ApiClient(app)
    schema = schemathesis.openapi.from_asgi("/openapi.json", app)
    failures: list[str] = []
    fuzzed_routes: set[str] = set()
    for result in schema.get_all_operations():
        operation = result.ok()
        if operation.path == "/healthz":
            continue  # takes no input; its 503 reports the services, it is not a crash

        @settings(
            max_examples=10,
            deadline=None,
            database=None,
            suppress_health_check=list(HealthCheck),
        )
        @given(case=operation.as_strategy())
        def check(case: schemathesis.Case) -> None:
            response: Any = client.request(
                case.method,
                case.formatted_path,
                params=case.query or None,
                headers={**(case.headers or {}), **headers},
                **({} if isinstance(case.body, NotSet) else {"json": case.body}),
            )
            if response.status_code >= 500:
                failures.append(f"{case.method} {case.formatted_path}: {response.status_code}")

        check()
        fuzzed_routes.add(operation.path)
    assert fuzzed_routes >= READ_ROUTES | {"/api/v1/targets", "/api/v1/silences"}
    assert failures == []
