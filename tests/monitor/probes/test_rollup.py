from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sqlalchemy import func, insert, select
from sqlalchemy.orm import Session

from monitor.config.models import TargetConfig
from monitor.db.models import ProbeResult, ProbeRollup
from monitor.probes.rollup import (
    STREAM_ROWS,
    prune_minutes,
    prune_raw,
    roll_up,
    summarize_minutes,
)
from monitor.targets import upsert_target

T0 = datetime(2026, 10, 31, 23, 58, tzinfo=UTC)  # rolls across a month boundary


def test_minutes_count_failures_and_unknowns_apart() -> None:
    rows = [
        (1, T0 + timedelta(seconds=0), True, 10.0),
        (1, T0 + timedelta(seconds=15), False, None),
        (1, T0 + timedelta(seconds=30), None, None),
        (1, T0 + timedelta(seconds=45), True, 30.0),
        (1, T0 + timedelta(seconds=60), True, 20.0),
    ]
    first, second = summarize_minutes(rows)
    assert (first.start, first.count, first.failures, first.unknown) == (T0, 4, 1, 1)
    assert (first.latency_p50_ms, first.latency_max_ms) == (20.0, 30.0)
    assert (second.start, second.count, second.failures) == (T0 + timedelta(minutes=1), 1, 0)


def seed(session: Session, minutes: int) -> int:
    row = upsert_target(session, TargetConfig(name="r", kind="http", url="http://h/"), "config")
    session.flush()
    values = [
        {
            "target_id": row.id,
            "vantage": "v",
            "at": T0 + timedelta(seconds=15 * i),
            "ok": i % 8 != 0,
            "latency_ms": float(i),
        }
        for i in range(minutes * 4)
    ]
    session.execute(insert(ProbeResult), values)
    return row.id


def test_rollups_are_idempotent_and_hours_sum_their_minutes(session: Session) -> None:
    seed(session, minutes=10)  # 23:58 .. 00:07
    now = T0 + timedelta(minutes=10)
    assert roll_up(session, now) == 10
    hours = select(ProbeRollup.bucket_start).where(ProbeRollup.resolution == "hour")
    assert session.scalars(hours).all() == [datetime(2026, 10, 31, 23, tzinfo=UTC)]  # 00:00 open
    now = datetime(2026, 11, 1, 1, 0, 30, tzinfo=UTC)  # the 00:00 hour has closed
    roll_up(session, now)
    roll_up(session, now)  # again: recomputed, not added
    minutes = session.scalar(
        select(func.sum(ProbeRollup.count)).where(ProbeRollup.resolution == "minute")
    )
    failures = session.scalar(
        select(func.sum(ProbeRollup.failures)).where(ProbeRollup.resolution == "minute")
    )
    assert (minutes, failures) == (40, 5)
    hours = {
        h.bucket_start: h.count
        for h in session.scalars(select(ProbeRollup).where(ProbeRollup.resolution == "hour"))
    }
    assert hours == {
        datetime(2026, 10, 31, 23, tzinfo=UTC): 8,
        datetime(2026, 11, 1, tzinfo=UTC): 32,
    }


def test_pruning_keeps_raw_rows_that_are_not_rolled_up_yet(session: Session) -> None:
    seed(session, minutes=10)
    now = T0 + timedelta(days=30)
    assert prune_raw(session, now, timedelta(days=14)) == 0  # nothing rolled up: keep it all
    roll_up(session, T0 + timedelta(minutes=5))
    pruned = prune_raw(session, now, timedelta(days=14))
    remaining = session.scalar(select(func.count()).select_from(ProbeResult))
    assert pruned > 0
    assert remaining == 40 - pruned
    oldest = session.scalar(select(func.min(ProbeResult.at)))
    assert oldest is not None
    assert oldest >= T0 + timedelta(minutes=3)  # up to the last rolled-up minute, no further


def test_minute_rollups_expire_only_once_their_hour_is_rolled_up(session: Session) -> None:
    seed(session, minutes=10)  # minutes 23:58 .. 00:07 across midnight (and a month end)
    roll_up(session, T0 + timedelta(minutes=20))
    roll_up(session, T0 + timedelta(hours=2))  # both hours closed and rolled up
    minutes = select(func.count()).where(ProbeRollup.resolution == "minute")
    hour_counts = select(func.sum(ProbeRollup.count)).where(ProbeRollup.resolution == "hour")
    before, counted = session.scalar(minutes), session.scalar(hour_counts)
    assert before == 10
    assert prune_minutes(session, T0 + timedelta(days=30), timedelta(days=90)) == 0  # too young
    # 120 days on, only the minutes of the closed 23:00 hour go; the newest rolled-up hour
    # (00:00) keeps its minutes, as it may still be recomputed from them.
    assert prune_minutes(session, T0 + timedelta(days=120), timedelta(days=90)) == 2
    assert session.scalar(minutes) == 8
    oldest = session.scalar(
        select(func.min(ProbeRollup.bucket_start)).where(ProbeRollup.resolution == "minute")
    )
    assert oldest == datetime(2026, 11, 1, tzinfo=UTC)
    assert session.scalar(hour_counts) == counted == 40  # the hours still count every probe


def test_a_window_of_more_buckets_than_one_chunk_is_rolled_up_whole(session: Session) -> None:
    # two targets' rows stored interleaved in time, more minute buckets than STREAM_ROWS: the
    # rollup reads them in target order, a chunk at a time, and loses or merges none
    ids = [
        upsert_target(session, TargetConfig(name=f"c{i}", kind="http", url="http://h/"), "config")
        for i in range(2)
    ]
    session.flush()
    minutes = STREAM_ROWS // 2 + 100
    values = [
        {
            "target_id": t.id,
            "vantage": "v",
            "at": T0 + timedelta(minutes=m, seconds=s),
            "ok": (m + s) % 7 != 0,
            "latency_ms": float(m % 50),
        }
        for m in range(minutes)
        for s in (0, 30)
        for t in ids
    ]
    session.execute(insert(ProbeResult), values)
    assert roll_up(session, T0 + timedelta(minutes=minutes)) == 2 * minutes
    per_target = dict(
        session.execute(
            select(ProbeRollup.target_id, func.sum(ProbeRollup.count))
            .where(ProbeRollup.resolution == "minute")
            .group_by(ProbeRollup.target_id)
        ).all()
    )
    assert per_target == {t.id: 2 * minutes for t in ids}
    failures = session.scalar(
        select(func.sum(ProbeRollup.failures)).where(ProbeRollup.resolution == "minute")
    )
    assert failures == sum(not v["ok"] for v in values)
    hours = session.execute(
        select(ProbeRollup.target_id, func.sum(ProbeRollup.count))
        .where(ProbeRollup.resolution == "hour")
        .group_by(ProbeRollup.target_id)
    ).all()
    closed = (T0 + timedelta(minutes=minutes)).replace(minute=0)
    in_closed_hours = sum(1 for v in values if v["target_id"] == ids[0].id and v["at"] < closed)
    assert dict(hours) == {t.id: in_closed_hours for t in ids}
