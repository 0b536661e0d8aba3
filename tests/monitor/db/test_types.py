from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from sqlalchemy import select
from sqlalchemy.exc import StatementError
from sqlalchemy.orm import Session

from monitor.db.models import MonitorTick

CET = timezone(timedelta(hours=1))


def test_times_come_back_aware_utc_and_the_same_instant(session: Session) -> None:
    written = datetime(2026, 3, 29, 2, 30, tzinfo=CET)  # a DST-day wall time, offset explicit
    session.add(MonitorTick(vantage="v", bucket_start=written, bucket_seconds=30))
    session.flush()
    session.expire_all()
    read = session.scalars(select(MonitorTick.bucket_start)).one()
    assert read.tzinfo is not None
    assert read.utcoffset() == timedelta(0)
    assert read == written
    assert read == datetime(2026, 3, 29, 1, 30, tzinfo=UTC)


def test_naive_times_are_refused(session: Session) -> None:
    session.add(MonitorTick(vantage="v", bucket_start=datetime(2026, 1, 1), bucket_seconds=30))
    with pytest.raises(StatementError, match="naive datetime"):
        session.flush()


def test_times_compare_in_sql_as_instants(session: Session) -> None:
    for hour in (1, 2, 3):
        session.add(
            MonitorTick(
                vantage="v", bucket_start=datetime(2026, 1, 1, hour, tzinfo=UTC), bucket_seconds=30
            )
        )
    session.flush()
    after = datetime(2026, 1, 1, 2, 30, tzinfo=CET)  # 01:30 UTC
    found = session.scalars(
        select(MonitorTick.bucket_start).where(MonitorTick.bucket_start > after)
    )
    assert [t.hour for t in found] == [2, 3]
