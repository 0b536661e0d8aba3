from __future__ import annotations

from datetime import UTC, datetime

import pytest
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from monitor.db.models import MonitorTick
from monitor.liveness import bucket_start, record_tick


@pytest.mark.parametrize(
    ("at", "seconds", "start"),
    [
        (datetime(2026, 1, 1, 0, 0, 29, tzinfo=UTC), 30, datetime(2026, 1, 1, tzinfo=UTC)),
        (
            datetime(2026, 1, 1, 0, 0, 30, tzinfo=UTC),
            30,
            datetime(2026, 1, 1, 0, 0, 30, tzinfo=UTC),
        ),
        (
            datetime(2026, 1, 31, 23, 59, 59, tzinfo=UTC),
            3600,
            datetime(2026, 1, 31, 23, tzinfo=UTC),
        ),
    ],
)
def test_buckets_align_to_the_epoch(at: datetime, seconds: int, start: datetime) -> None:
    assert bucket_start(at, seconds) == start


def test_a_redelivered_tick_records_nothing_twice(session: Session) -> None:
    first = record_tick(session, "eu-1", 3600)
    second = record_tick(session, "eu-1", 3600)
    record_tick(session, "us-1", 3600)
    assert first == second
    count = session.scalar(select(func.count()).select_from(MonitorTick))
    assert count == 2
