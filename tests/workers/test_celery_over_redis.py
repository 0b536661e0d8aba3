"""A real Celery task over the real Redis broker, run by a worker this test starts."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

import pytest
from sqlalchemy import select

from monitor.db.engine import make_engine, make_sessionmaker
from monitor.db.migrate import upgrade
from monitor.db.models import MonitorTick, TaskStat
from monitor.settings import Settings
from tests.support import PG_TEST_DB, recreate_pg_database, slamon_command, wait_for

pytestmark = [pytest.mark.postgres, pytest.mark.redis, pytest.mark.slow]


@pytest.fixture
def worker_env(tmp_path: Path, redis_url: str, postgresql_engine: object) -> dict[str, str]:
    database_url = recreate_pg_database(f"{PG_TEST_DB}_worker")
    engine = make_engine(database_url)
    upgrade(engine)
    engine.dispose()
    (tmp_path / "slamon.yaml").write_text("schedule: {tick: 3600s}\n")
    return {
        **os.environ,
        "SLAMON_DATABASE_URL": database_url,
        "SLAMON_BROKER_URL": redis_url,
        "SLAMON_CONFIG": str(tmp_path / "slamon.yaml"),
        "SLAMON_STATE_DIR": str(tmp_path / "state"),
    }


def test_a_task_sent_over_redis_is_run_by_a_worker_and_lands_in_postgres(
    worker_env: dict[str, str], tmp_path: Path
) -> None:
    worker = subprocess.Popen(
        [*slamon_command(), "worker", "--pool=solo", "--vantage=redis-test", "--loglevel=WARNING"],
        env=worker_env,
        cwd=tmp_path,
    )
    try:
        settings = Settings(
            _env_file=None,
            **{  # type: ignore[call-arg]
                "database_url": worker_env["SLAMON_DATABASE_URL"],
                "broker_url": worker_env["SLAMON_BROKER_URL"],
                "config": worker_env["SLAMON_CONFIG"],
                "state_dir": worker_env["SLAMON_STATE_DIR"],
            },
        )
        from workers.app import create_app

        create_app(settings).send_task("slamon.tick")
        engine = make_engine(settings.database_url)
        sessions = make_sessionmaker(engine)

        def tick_rows() -> list[str]:
            with sessions() as db:
                return list(db.scalars(select(MonitorTick.vantage)))

        assert wait_for(tick_rows, timeout=60) == ["redis-test"]
    finally:
        worker.send_signal(signal.SIGTERM)
        assert worker.wait(timeout=30) == 0
    with sessions() as db:  # the worker's first run of a task is timed and saved for /metrics
        stat = db.get(TaskStat, "slamon.tick")
        assert stat is not None
        assert (stat.runs, stat.failures) == (1, 0)
        assert 0 < stat.seconds_total < 30
    engine.dispose()
