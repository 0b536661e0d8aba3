"""Shared fixtures: real SQLite and PostgreSQL databases built by Alembic, a real Redis.

PostgreSQL and Redis tests skip when the servers do not answer, unless
``SLAMON_TEST_REQUIRE_SERVICES=1`` (set by .ci/run), where they fail instead.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import redis
import sqlalchemy as sa
from sqlalchemy import Engine
from sqlalchemy.orm import Session, sessionmaker

from monitor.db.engine import make_engine
from monitor.db.migrate import upgrade
from tests.support import PG_TEST_DB, REDIS_URL, FeedServer, recreate_pg_database, unavailable


@pytest.fixture(scope="session")
def sqlite_engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    path = tmp_path_factory.mktemp("db") / "slamon.db"
    engine = make_engine(f"sqlite:///{path}")
    upgrade(engine)
    yield engine
    engine.dispose()


@pytest.fixture(scope="session")
def postgresql_engine() -> Iterator[Engine]:
    try:
        url = recreate_pg_database(PG_TEST_DB)
    except sa.exc.OperationalError as exc:
        unavailable("PostgreSQL", exc.orig)
    engine = make_engine(url)
    upgrade(engine)
    yield engine
    engine.dispose()


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def engine(request: pytest.FixtureRequest) -> Engine:
    """A migrated engine, once per database kind."""
    return request.getfixturevalue(f"{request.param}_engine")  # type: ignore[no-any-return]


@pytest.fixture
def session(engine: Engine) -> Iterator[Session]:
    """A session inside a transaction that is rolled back after the test; the code under test
    may commit (it commits a SAVEPOINT)."""
    connection = engine.connect()
    outer = connection.begin()
    db = Session(bind=connection, join_transaction_mode="create_savepoint", expire_on_commit=False)
    try:
        yield db
    finally:
        db.close()
        outer.rollback()
        connection.close()


@pytest.fixture
def redis_url() -> str:
    """A real, emptied Redis database (number 15) for the test."""
    client = redis.Redis.from_url(REDIS_URL, socket_connect_timeout=2)
    try:
        client.flushdb()
    except redis.exceptions.ConnectionError as exc:
        unavailable("Redis", exc)
    finally:
        client.close()
    return REDIS_URL


@pytest.fixture
def sessions(engine: Engine) -> Iterator[sessionmaker[Session]]:
    """A sessionmaker for code that opens and commits its own sessions; everything it commits
    is a SAVEPOINT inside one outer transaction that is rolled back after the test."""
    connection = engine.connect()
    outer = connection.begin()
    try:
        yield sessionmaker(
            bind=connection, join_transaction_mode="create_savepoint", expire_on_commit=False
        )
    finally:
        outer.rollback()
        connection.close()


@pytest.fixture
def server() -> Iterator[FeedServer]:
    """A local HTTP target whose /healthz answers 200 (tests change its routes and delays)."""
    target_server = FeedServer()
    target_server.routes["/healthz"] = (200, b"ok")
    yield target_server
    target_server.close()


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """The figures tests measured (``tests.support.report_figure``), one line each."""
    from tests.support import FIGURES

    if FIGURES:
        terminalreporter.section("measured figures")
        for line in FIGURES:
            terminalreporter.write_line(line)
