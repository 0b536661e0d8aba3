"""Starting the parts the way docker-compose does: beat with a fresh state folder, and worker
and beat at the same moment (both sync the config targets before they run)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from sqlalchemy import func, select

from monitor.config import parse_config
from monitor.db.base import utcnow
from monitor.db.engine import make_engine, make_sessionmaker
from monitor.db.models import Provider
from monitor.feeds.catalog import CATALOG
from monitor.feeds.service import sync_catalog
from monitor.targets import sync_config_targets
from tests.faults.servers import Processes, write_config
from tests.support import wait_for

pytestmark = [pytest.mark.fault]


@pytest.mark.slow
def test_beat_starts_with_a_state_folder_that_does_not_exist_yet(
    tmp_path: Path, processes: Processes
) -> None:
    write_config(tmp_path / "slamon.yaml", "schedule: {tick: 1}\n")
    fresh = tmp_path / "fresh-state"
    beat = processes.start("beat", "beat", env={"SLAMON_STATE_DIR": str(fresh)})
    wait_for(lambda: "beat: Starting" in beat.text() or not beat.alive(), timeout=60)
    time.sleep(2)
    assert beat.alive(), beat.text()[-2000:]
    assert fresh.is_dir()


def test_two_processes_syncing_the_config_targets_at_once_both_succeed(
    database_url: str,
) -> None:
    config = parse_config("targets: [{name: gpu-0, kind: http, url: 'http://127.0.0.1:9/'}]")
    engine = make_engine(database_url)
    sessions = make_sessionmaker(engine)
    failures: list[BaseException] = []

    def second_process() -> None:
        try:
            with sessions() as session, session.begin():
                sync_config_targets(session, config, utcnow())
        except BaseException as exc:
            failures.append(exc)

    try:
        with sessions() as first, first.begin():
            sync_config_targets(first, config, utcnow())
            first.flush()  # the first process's insert is in, not yet committed
            other = threading.Thread(target=second_process)
            other.start()
            time.sleep(0.5)  # the second one's insert now waits on the unique index
        other.join(timeout=30)
    finally:
        engine.dispose()
    if failures:
        raise failures[0]


def test_two_schedulers_syncing_the_provider_catalog_at_once_both_succeed(
    database_url: str,
) -> None:
    """Two workers with beat started together each poll the feeds at once: both sync the
    catalog's providers and feeds into an empty database."""
    config = parse_config("")
    engine = make_engine(database_url)
    sessions = make_sessionmaker(engine)
    failures: list[BaseException] = []

    def second_process() -> None:
        try:
            with sessions() as session, session.begin():
                sync_catalog(session, config)
        except BaseException as exc:
            failures.append(exc)

    try:
        with sessions() as first, first.begin():
            sync_catalog(first, config)
            first.flush()  # the first one's rows are in, not yet committed
            other = threading.Thread(target=second_process)
            other.start()
            time.sleep(0.5)  # the second one's inserts now wait on the unique indexes
        other.join(timeout=30)
        with sessions() as session:
            providers = session.scalar(select(func.count()).select_from(Provider))
            slugs = session.scalar(select(func.count(func.distinct(Provider.slug))))
    finally:
        engine.dispose()
    assert failures == []
    assert providers == slugs == len(CATALOG)
