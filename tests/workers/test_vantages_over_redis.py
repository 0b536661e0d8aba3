"""Two workers with different vantages over the real Redis broker: one dispatch reaches both,
each probes from its own vantage, and the quorum of both decides the target's state."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

import pytest
from sqlalchemy import select

from monitor.db.engine import make_engine, make_sessionmaker
from monitor.db.migrate import upgrade
from monitor.db.models import Outage, TargetState
from monitor.settings import Settings
from tests.support import PG_TEST_DB, FeedServer, recreate_pg_database, slamon_command, wait_for

pytestmark = [pytest.mark.postgres, pytest.mark.redis, pytest.mark.slow]


def test_each_vantage_probes_and_an_outage_needs_both(
    tmp_path: Path, redis_url: str, postgresql_engine: object, server: FeedServer
) -> None:
    database_url = recreate_pg_database(f"{PG_TEST_DB}_vantages")
    engine = make_engine(database_url)
    upgrade(engine)
    config = tmp_path / "slamon.yaml"
    config.write_text(
        "probes: {vantages: [eu, us], retry_interval: 0.2}\n"
        f"targets:\n  - {{name: gpu-0, kind: http, url: '{server.url}/healthz', interval: 60}}\n"
    )
    env = {
        **os.environ,
        "SLAMON_DATABASE_URL": database_url,
        "SLAMON_BROKER_URL": redis_url,
        "SLAMON_CONFIG": str(config),
        "SLAMON_STATE_DIR": str(tmp_path / "state"),
    }
    workers = [
        subprocess.Popen(
            [*slamon_command(), "worker", "--pool=solo", f"--vantage={v}", "--loglevel=WARNING"],
            env=env,
            cwd=tmp_path,
        )
        for v in ("eu", "us")
    ]
    sessions = make_sessionmaker(engine)
    from workers.app import create_app

    app = create_app(
        Settings(
            database_url=database_url,
            broker_url=redis_url,
            config=config,  # type: ignore[call-arg]
            state_dir=tmp_path / "state",
        )
    )

    def vantages(state: str) -> list[str]:
        with sessions() as session:
            query = select(TargetState.vantage).where(
                TargetState.series == "reachable",
                TargetState.state == state,
                TargetState.vantage != "*",
            )
            return sorted(session.scalars(query))

    def target_count() -> int:
        from monitor.db.models import Target

        with sessions() as session:
            return len(session.scalars(select(Target.id)).all())

    try:
        app.send_task("slamon.targets.sync")
        assert wait_for(lambda: target_count() == 1, timeout=60)  # the two tasks race otherwise
        app.send_task("slamon.probes.dispatch")
        assert wait_for(lambda: vantages("up") == ["eu", "us"], timeout=60)

        server.routes["/healthz"] = (503, b"")
        with sessions() as session, session.begin():  # due again now
            from monitor.db.models import Target

            session.execute(Target.__table__.update().values(next_probe_at=None))
        app.send_task("slamon.probes.dispatch")
        assert wait_for(lambda: vantages("down") == ["eu", "us"], timeout=60)
        with sessions() as session:
            [outage] = session.scalars(select(Outage).where(Outage.series == "reachable"))
        assert outage.detail["vantages"] == ["eu", "us"]
    finally:
        for worker in workers:
            worker.send_signal(signal.SIGTERM)
        for worker in workers:
            assert worker.wait(timeout=30) == 0
        engine.dispose()
