"""The dialect helpers on both databases: bulk update by key and id lists, with the column types
the probe path writes (integers, strings, UTC timestamps, nulls)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import event, select, update
from sqlalchemy.exc import OperationalError
from sqlalchemy.orm import Session

from monitor.config.models import TargetConfig
from monitor.db.dialect import among, update_many
from monitor.db.engine import READ_ONLY, make_engine, make_sessionmaker
from monitor.db.migrate import upgrade
from monitor.db.models import Target, TargetState
from monitor.targets import upsert_target

T0 = datetime(2026, 3, 29, 0, 59, 59, 999999, tzinfo=UTC)


def targets(session: Session, count: int) -> list[int]:
    ids = []
    for i in range(count):
        cfg = TargetConfig(name=f"d{i}", kind="http", url=f"http://d{i}/")
        row = upsert_target(session, cfg, "config")
        session.flush()
        ids.append(row.id)
    return ids


def test_update_many_sets_each_row_by_its_key(session: Session) -> None:
    ids = targets(session, 3)
    rows = [{"k_id": tid, "next_probe_at": T0 + timedelta(seconds=i)} for i, tid in enumerate(ids)]
    update_many(session, Target.__table__, rows[:2])  # the third keeps its value
    session.expire_all()
    found = dict(session.execute(select(Target.id, Target.next_probe_at)).all())
    assert found[ids[0]] == T0
    assert found[ids[1]] == T0 + timedelta(seconds=1)
    assert found[ids[2]] is None


def test_update_many_with_a_composite_key_strings_and_nulls(session: Session) -> None:
    [tid] = targets(session, 1)
    for vantage in ("eu", "us"):
        session.add(
            TargetState(
                target_id=tid,
                vantage=vantage,
                series="reachable",
                state="up",
                since=T0,
                consecutive_failures=0,
                consecutive_successes=1,
                first_failure_at=T0,
                detail={},
            )
        )
    session.flush()
    change = {"consecutive_successes": 7, "first_failure_at": None, "last_probe_at": T0}
    update_many(
        session,
        TargetState.__table__,
        [{"k_target_id": tid, "k_vantage": "eu", "k_series": "reachable", **change}],
    )
    session.expire_all()
    rows = {
        s.vantage: s
        for s in session.scalars(select(TargetState).where(TargetState.target_id == tid))
    }
    assert rows["eu"].consecutive_successes == 7
    assert rows["eu"].first_failure_at is None
    assert rows["eu"].last_probe_at == T0
    assert rows["us"].consecutive_successes == 1  # the other vantage's row is untouched
    assert rows["us"].first_failure_at == T0


def test_update_many_of_nothing_sends_nothing(session: Session) -> None:
    sent: list[str] = []
    connection = session.connection()
    event.listen(connection, "before_cursor_execute", lambda *a: sent.append(a[2]))
    update_many(session, Target.__table__, [])
    assert sent == []


@pytest.mark.parametrize("count", [0, 1, 700])
def test_among_matches_in_on_any_count(session: Session, count: int) -> None:
    ids = targets(session, 3)
    wanted = ids[:2] + list(range(10**6, 10**6 + count))
    found = session.scalars(select(Target.id).where(among(session, Target.id, wanted)))
    assert sorted(found) == ids[:2]
    assert list(session.scalars(select(Target.id).where(among(session, Target.id, [])))) == []


def test_a_read_only_transaction_on_sqlite_does_not_wait_for_a_writer(tmp_path: Path) -> None:
    """WAL: a reader marked READ_ONLY reads the last committed state while another connection
    holds the write lock; an ordinary transaction would wait for it (BEGIN IMMEDIATE)."""
    engine = make_engine(f"sqlite:///{tmp_path / 'wal.db'}", connect_args={"timeout": 0.2})
    upgrade(engine)
    sessions = make_sessionmaker(engine)
    with sessions() as writer, writer.begin():
        targets(writer, 1)
    with sessions() as writer, writer.begin():
        writer.execute(update(Target).values(gpus=8))  # holds the write lock, uncommitted
        with sessions() as reader:
            reader.connection(execution_options=READ_ONLY)
            assert list(reader.scalars(select(Target.gpus))) == [0]
        with sessions() as other, pytest.raises(OperationalError, match="locked"):
            other.execute(select(Target.gpus))
    engine.dispose()
