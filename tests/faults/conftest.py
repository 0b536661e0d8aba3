"""Fixtures for the fault tests: throwaway PostgreSQL and Redis servers (started once, stopped
and restarted by the tests, always torn down), a migrated database per test, local HTTP
servers, and slamon processes that are stopped however the test ends."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from monitor.db.engine import make_engine
from monitor.db.migrate import upgrade
from tests.faults.servers import (
    PostgresServer,
    Processes,
    RedisServer,
    start_postgres,
    start_redis,
)
from tests.support import FeedServer


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    server = start_postgres()
    try:
        yield server
    finally:
        server.destroy()


@pytest.fixture(scope="session")
def redis_server() -> Iterator[RedisServer]:
    server = start_redis()
    try:
        yield server
    finally:
        server.destroy()


@pytest.fixture
def database_url(postgres_server: PostgresServer, request: pytest.FixtureRequest) -> str:
    """A fresh, migrated database on the throwaway server (running again if a test stopped it)."""
    if not postgres_server.running():
        postgres_server.start()
    url = postgres_server.create_database(f"fault_{request.node.name[:40].lower()}")
    engine = make_engine(url)
    upgrade(engine)
    engine.dispose()
    return url


@pytest.fixture
def broker_url(redis_server: RedisServer) -> str:
    """The throwaway Redis, running and empty."""
    if redis_server.process is None:
        redis_server.start()
    client = redis.Redis.from_url(redis_server.url)
    client.flushall()
    client.close()
    return redis_server.url


@pytest.fixture
def http_server() -> Iterator[FeedServer]:
    """A local HTTP server for probe targets and feeds (answers set per path by the test)."""
    server = FeedServer()
    yield server
    server.close()


@pytest.fixture
def processes(tmp_path: Path, database_url: str, broker_url: str) -> Iterator[Processes]:
    """Starts slamon subcommands against the throwaway servers; stops all of them afterwards."""
    env = {
        **os.environ,
        "SLAMON_DATABASE_URL": database_url,
        "SLAMON_BROKER_URL": broker_url,
        "SLAMON_CONFIG": str(tmp_path / "slamon.yaml"),
        "SLAMON_STATE_DIR": str(tmp_path / "state"),
        "SLAMON_VANTAGE": "fault",
    }
    # made here: `slamon beat` does not create it (see test_concurrent_start.py)
    (tmp_path / "state").mkdir()
    running = Processes(env, tmp_path)
    try:
        yield running
    finally:
        running.stop_all()
