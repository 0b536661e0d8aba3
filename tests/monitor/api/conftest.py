"""Fixtures for API tests: the real app with request sessions inside the test's transaction,
and admin / read token headers."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import Engine
from sqlalchemy.orm import Session, sessionmaker

from monitor import tokens
from monitor.api.app import create_app
from monitor.api.deps import db_session
from monitor.settings import Settings
from tests.support import ApiClient


@pytest.fixture
def sessions_api(
    engine: Engine, sessions: sessionmaker[Session], tmp_path: Path
) -> Iterator[tuple[ApiClient, dict[str, str], dict[str, str]]]:
    """The real app (request sessions inside the test's transaction), an admin and a read
    token's headers."""
    settings = Settings(  # type: ignore[call-arg]
        database_url=engine.url.render_as_string(hide_password=False),
        config=tmp_path / "none.yaml",
        state_dir=tmp_path / "state",
    )
    app = create_app(settings)

    def session_in_test_transaction() -> Iterator[Session]:
        with sessions() as session:
            yield session

    app.dependency_overrides[db_session] = session_in_test_transaction
    with sessions() as session:
        admin = tokens.create(session, "admin", "admin")
        read = tokens.create(session, "read", "read")
        session.commit()
    with ApiClient(app) as client:
        yield client, {"Authorization": f"Bearer {admin}"}, {"Authorization": f"Bearer {read}"}


@pytest.fixture
def api(sessions_api: tuple[ApiClient, dict[str, str], dict[str, str]]) -> ApiClient:
    return sessions_api[0]


@pytest.fixture
def admin(sessions_api: tuple[ApiClient, dict[str, str], dict[str, str]]) -> dict[str, str]:
    return sessions_api[1]


@pytest.fixture
def reader(sessions_api: tuple[ApiClient, dict[str, str], dict[str, str]]) -> dict[str, str]:
    return sessions_api[2]
