"""Task durations: tallied per process, added (never overwritten) to task_stats, kept on failure."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import Engine, select
from sqlalchemy.orm import Session, sessionmaker

from monitor.db.models import TaskStat
from monitor.task_stats import TaskStatsBuffer, add_tallies

T0 = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def test_a_buffer_tallies_runs_failures_and_the_latest_duration() -> None:
    buffer = TaskStatsBuffer()
    buffer.record("slamon.tick", 0.25, False, T0)
    buffer.record("slamon.tick", 0.75, True, T0 + timedelta(seconds=1))
    tally = buffer.tallies["slamon.tick"]
    assert (tally.runs, tally.failures, tally.seconds_total) == (2, 1, 1.0)
    assert (tally.last_seconds, tally.last_finished_at) == (0.75, T0 + timedelta(seconds=1))


@pytest.mark.parametrize(
    ("last_flush", "now", "pending", "due"),
    [
        pytest.param(None, T0, True, True, id="never-flushed"),
        pytest.param(None, T0, False, False, id="nothing-to-flush"),
        pytest.param(T0, T0 + timedelta(seconds=9), True, False, id="too-soon"),
        pytest.param(T0, T0 + timedelta(seconds=10), True, True, id="interval-passed"),
    ],
)
def test_a_buffer_is_due_once_per_interval_and_only_with_tallies(
    last_flush: datetime | None, now: datetime, pending: bool, due: bool
) -> None:
    buffer = TaskStatsBuffer(flush_every_s=10, last_flush_at=last_flush)
    if pending:
        buffer.record("slamon.tick", 0.1, False, T0)
    assert buffer.due(now) is due


def test_tallies_given_back_after_a_failed_flush_merge_with_newer_ones() -> None:
    buffer = TaskStatsBuffer()
    buffer.record("slamon.tick", 1.0, False, T0)
    taken = buffer.take(T0)
    assert buffer.tallies == {}
    buffer.record("slamon.tick", 2.0, True, T0 + timedelta(seconds=5))
    buffer.give_back(taken)
    tally = buffer.tallies["slamon.tick"]
    assert (tally.runs, tally.failures, tally.seconds_total) == (2, 1, 3.0)
    assert tally.last_seconds == 2.0  # the newer run stays the latest


def test_flushes_add_to_the_stored_totals(sessions: sessionmaker[Session]) -> None:
    first, second = TaskStatsBuffer(), TaskStatsBuffer()  # two worker processes
    first.record("slamon.probes.run_shard", 0.5, False, T0)
    first.record("slamon.tick", 0.01, False, T0)
    second.record("slamon.probes.run_shard", 1.5, True, T0 + timedelta(seconds=3))
    for buffer in (second, first):  # the later run is flushed first
        with sessions() as session, session.begin():
            add_tallies(session, buffer.take(T0))
    with sessions() as session:
        shard = session.get(TaskStat, "slamon.probes.run_shard")
        assert shard is not None
        assert (shard.runs, shard.failures, shard.seconds_total) == (2, 1, 2.0)
        assert (shard.last_seconds, shard.last_finished_at) == (1.5, T0 + timedelta(seconds=3))
        names = session.scalars(select(TaskStat.task).order_by(TaskStat.task)).all()
        assert names == ["slamon.probes.run_shard", "slamon.tick"]


def test_the_schema_has_the_table(engine: Engine) -> None:
    with engine.connect() as connection:
        assert connection.execute(select(TaskStat)).all() == []
