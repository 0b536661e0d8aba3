from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, event, func, insert, select, text
from sqlalchemy.orm import Session, sessionmaker

from monitor.config.models import TargetConfig
from monitor.db.engine import make_engine, make_sessionmaker, transaction
from monitor.db.migrate import upgrade
from monitor.db.models import ProbeEvidence, ProbeResult, ProbeRollup
from monitor.probes.model import ProbeResult as Probe
from monitor.probes.record import record_round
from monitor.probes.rollup import (
    STREAM_ROWS,
    bucket_of,
    compact_raw,
    prune_minutes,
    prune_raw,
    roll_up,
)
from monitor.targets import upsert_target

T0 = datetime(2026, 10, 31, 23, 58, tzinfo=UTC)  # rolls across a month boundary


@pytest.fixture
def session(sessions: sessionmaker[Session]) -> Iterator[Session]:
    """The test's own session beside the rollup's: the rollup opens and commits its own
    transactions (reads apart from writes), all inside the test's rolled-back one."""
    with sessions() as db:
        yield db


def test_a_minute_bucket_takes_its_percentiles_from_sorted_latencies() -> None:
    bucket = bucket_of(1, T0, count=5, failures=1, unknown=1, latencies=[30.0, 10.0, 20.0])
    assert (bucket.start, bucket.count, bucket.failures, bucket.unknown) == (T0, 5, 1, 1)
    assert (bucket.latency_p50_ms, bucket.latency_p95_ms, bucket.latency_max_ms) == (
        20.0,
        29.0,
        30.0,
    )
    empty = bucket_of(1, T0, count=2, failures=2, unknown=0, latencies=[])
    assert (empty.latency_p50_ms, empty.latency_max_ms) == (None, None)


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


def test_rollups_are_idempotent_and_hours_sum_their_minutes(
    session: Session, sessions: sessionmaker[Session]
) -> None:
    seed(session, minutes=10)  # 23:58 .. 00:07
    now = T0 + timedelta(minutes=10)
    assert roll_up(sessions, now) == 10
    hours = select(ProbeRollup.bucket_start).where(ProbeRollup.resolution == "hour")
    assert session.scalars(hours).all() == [datetime(2026, 10, 31, 23, tzinfo=UTC)]  # 00:00 open
    now = datetime(2026, 11, 1, 1, 0, 30, tzinfo=UTC)  # the 00:00 hour has closed
    roll_up(sessions, now)
    roll_up(sessions, now)  # again: recomputed, not added
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


def test_buckets_are_utc_minutes_and_hours_whatever_the_sessions_time_zone(
    session: Session, sessions: sessionmaker[Session]
) -> None:
    # PostgreSQL truncates a timestamptz in the session's zone: at +05:30 an "hour" would
    # start at half past a UTC hour, and minutes and hours would no longer line up
    if session.get_bind().dialect.name == "postgresql":
        session.execute(text("SET TIME ZONE 'Asia/Kolkata'"))
    seed(session, minutes=10)  # 23:58 .. 00:07 UTC
    roll_up(sessions, datetime(2026, 11, 1, 1, 0, 30, tzinfo=UTC))
    rolled = session.execute(
        select(ProbeRollup.resolution, ProbeRollup.bucket_start, ProbeRollup.count).order_by(
            ProbeRollup.resolution, ProbeRollup.bucket_start
        )
    ).all()
    hours = [(at, count) for resolution, at, count in rolled if resolution == "hour"]
    minutes = [at for resolution, at, _ in rolled if resolution == "minute"]
    assert hours == [
        (datetime(2026, 10, 31, 23, tzinfo=UTC), 8),
        (datetime(2026, 11, 1, tzinfo=UTC), 32),
    ]
    assert minutes == [T0 + timedelta(minutes=m) for m in range(10)]


def test_pruning_keeps_raw_rows_that_are_not_rolled_up_yet(
    session: Session, sessions: sessionmaker[Session]
) -> None:
    seed(session, minutes=10)
    now = T0 + timedelta(days=30)
    assert prune_raw(sessions, now, timedelta(days=14)) == 0  # nothing rolled up: keep it all
    roll_up(sessions, T0 + timedelta(minutes=5))
    pruned = prune_raw(sessions, now, timedelta(days=14))
    remaining = session.scalar(select(func.count()).select_from(ProbeResult))
    assert pruned > 0
    assert remaining == 40 - pruned
    oldest = session.scalar(select(func.min(ProbeResult.at)))
    assert oldest is not None
    assert oldest >= T0 + timedelta(minutes=3)  # up to the last rolled-up minute, no further


def test_minute_rollups_expire_only_once_their_hour_is_rolled_up(
    session: Session, sessions: sessionmaker[Session]
) -> None:
    seed(session, minutes=10)  # minutes 23:58 .. 00:07 across midnight (and a month end)
    roll_up(sessions, T0 + timedelta(minutes=20))
    roll_up(sessions, T0 + timedelta(hours=2))  # both hours closed and rolled up
    minutes = select(func.count()).where(ProbeRollup.resolution == "minute")
    hour_counts = select(func.sum(ProbeRollup.count)).where(ProbeRollup.resolution == "hour")
    before, counted = session.scalar(minutes), session.scalar(hour_counts)
    assert before == 10
    assert prune_minutes(sessions, T0 + timedelta(days=30), timedelta(days=90)) == 0  # too young
    # 120 days on, only the minutes of the closed 23:00 hour go; the newest rolled-up hour
    # (00:00) keeps its minutes, as it may still be recomputed from them.
    assert prune_minutes(sessions, T0 + timedelta(days=120), timedelta(days=90)) == 2
    assert session.scalar(minutes) == 8
    oldest = session.scalar(
        select(func.min(ProbeRollup.bucket_start)).where(ProbeRollup.resolution == "minute")
    )
    assert oldest == datetime(2026, 11, 1, tzinfo=UTC)
    assert session.scalar(hour_counts) == counted == 40  # the hours still count every probe


def test_a_window_of_more_buckets_than_one_chunk_is_rolled_up_whole(
    session: Session, sessions: sessionmaker[Session]
) -> None:
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
    assert roll_up(sessions, T0 + timedelta(minutes=minutes)) == 2 * minutes
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


def test_the_rollup_and_the_pruning_leave_sqlite_writable_for_other_writers(tmp_path: Path) -> None:
    # On SQLite a writing transaction holds the database's one write lock: while the rollup
    # reads and summarizes the raw rows (the long part), a probe round or the dispatcher in
    # another process must still be able to write; and the pruning deletes in chunks.
    path = tmp_path / "slamon.db"
    seeded = 3 * STREAM_ROWS // 4 // 2
    engine = make_engine(f"sqlite:///{path}")
    upgrade(engine)
    sessions = make_sessionmaker(engine)
    with sessions() as session, session.begin():
        target = seed(session, minutes=seeded)  # 4 rows a minute: 1.5 chunks of raw rows
    other_writer = sqlite3.connect(path, timeout=0, isolation_level=None)
    writes: list[str] = []
    deletes: list[str] = []

    def meanwhile(_conn: object, _cursor: object, statement: str, *_args: object) -> None:
        if statement.startswith("SELECT") and "FROM probe_results" in statement:
            try:  # no wait: it fails at once if the rollup holds the write lock
                other_writer.execute("BEGIN IMMEDIATE")
                other_writer.execute("UPDATE targets SET name = name WHERE id = ?", (target,))
                other_writer.execute("COMMIT")
                writes.append("written")
            except sqlite3.OperationalError as exc:
                writes.append(str(exc))

    def count_deletes(_conn: object, _cursor: object, statement: str, *_args: object) -> None:
        if statement.startswith("DELETE FROM probe_results"):
            deletes.append(statement)

    event.listen(engine, "before_cursor_execute", meanwhile)
    event.listen(engine, "after_cursor_execute", count_deletes)
    try:
        minutes = roll_up(sessions, T0 + timedelta(minutes=seeded + 1))
        pruned = prune_raw(sessions, T0 + timedelta(days=30), timedelta(days=14))
    finally:
        other_writer.close()
        engine.dispose()
    assert minutes == seeded
    assert writes
    assert set(writes) == {"written"}
    rows = 4 * minutes
    assert pruned == rows - 4  # all but the last rolled-up minute's four
    assert len(deletes) == 2  # STREAM_ROWS, then the rest, each in a transaction of its own


def _buckets(session: Session) -> list[tuple[object, ...]]:
    session.expire_all()
    return [
        tuple(row)
        for row in session.execute(
            select(
                ProbeRollup.resolution,
                ProbeRollup.bucket_start,
                ProbeRollup.count,
                ProbeRollup.failures,
                ProbeRollup.unknown,
                ProbeRollup.latency_p50_ms,
                ProbeRollup.latency_p95_ms,
                ProbeRollup.latency_max_ms,
            ).order_by(ProbeRollup.resolution, ProbeRollup.bucket_start)
        )
    ]


def test_compaction_keeps_what_changed_and_leaves_every_bucket_as_it_was(
    session: Session, sessions: sessionmaker[Session]
) -> None:
    """The compact record: once a minute is final, its rows kept whole (failures, the unknown,
    the first success and the recovery) move to the evidence and the rest go (their bucket
    holds their count and latencies); no bucket, minute or hour, changes when rolled up again,
    and the evidence ages out at the raw retention."""
    row = upsert_target(
        session, TargetConfig(name="c", kind="http", url="http://h/", interval=10), "config"
    )
    session.flush()
    start = datetime(2026, 10, 31, 23, 55, tzinfo=UTC)
    outcome = {12: False, 13: False, 30: None}  # probe number: not a success
    for i in range(60):  # ten minutes, one probe every ten seconds
        at = start + timedelta(seconds=10 * i)
        ok = outcome.get(i, True)
        probe = Probe(
            row.id,
            "c",
            at,
            ok,
            latency_ms=float(i % 7) if ok else None,
            error_kind=None if ok else "connect",
        )
        with transaction(sessions) as db:
            record_round(db, "eu", [probe], now=at)
    now = start + timedelta(minutes=10, seconds=5)
    roll_up(sessions, now)
    before = _buckets(session)
    moved = compact_raw(sessions, now)
    evidence = session.execute(
        select(ProbeEvidence.at, ProbeEvidence.ok, ProbeEvidence.error_kind).order_by(
            ProbeEvidence.at
        )
    ).all()
    assert [(at.astimezone(UTC), ok, kind) for at, ok, kind in evidence] == [
        (start, True, None),  # the first success
        (start + timedelta(seconds=120), False, "connect"),
        (start + timedelta(seconds=130), False, "connect"),
        (start + timedelta(seconds=140), True, None),  # recovering
        (start + timedelta(seconds=150), True, None),  # the second success confirms it
        (start + timedelta(seconds=300), None, "connect"),
    ]
    raw = session.scalars(select(ProbeResult.at).order_by(ProbeResult.at)).all()
    assert [at.astimezone(UTC) for at in raw] == [
        start + timedelta(seconds=10 * i) for i in range(48, 60)
    ]  # only what the rollup may still recompute: from 00:03 (00:05 less two late minutes)
    assert moved == 48
    assert compact_raw(sessions, now) == 0  # done once
    assert _buckets(session) == before
    roll_up(sessions, now)  # the next run recomputes only what is not final
    roll_up(sessions, now + timedelta(hours=1))  # and the hours from the minutes
    after = _buckets(session)
    assert [b for b in after if b[0] == "minute"] == [b for b in before if b[0] == "minute"]
    assert sum(b[2] for b in after if b[0] == "minute") == 60
    assert [b[2] for b in after if b[0] == "hour"] == [30, 30]  # 23:00 and 00:00, every probe
    pruned = prune_raw(sessions, start + timedelta(days=14, minutes=3), timedelta(days=14))
    assert pruned == 5  # the evidence of the first three minutes (before 23:58)
    assert len(session.scalars(select(ProbeEvidence.id)).all()) == 1  # the unknown at 00:00


def seeded_day_of_minutes(path: Path, targets: int) -> tuple[Engine, datetime]:
    """A SQLite database holding a day of minute and hour rollups for ``targets`` targets, and
    the next day's first hour rolled up, so the whole day may be pruned."""
    engine = make_engine(f"sqlite:///{path}")
    upgrade(engine)
    sessions = make_sessionmaker(engine)
    day = datetime(2026, 11, 1, tzinfo=UTC)
    with sessions() as session, session.begin():
        ids = [
            upsert_target(session, TargetConfig(name=f"p{i}", kind="http", url="http://h/"), "x")
            for i in range(targets)
        ]
        session.flush()
        minute_rows = [
            {
                "target_id": t.id,
                "resolution": "minute",
                "bucket_start": day + timedelta(minutes=m),
                "count": 12,
                "failures": 0,
                "unknown": 0,
            }
            for t in ids
            for m in range(1440)
        ]
        hour_rows = [
            {**r, "resolution": "hour", "count": 720}
            for r in minute_rows
            if r["bucket_start"].minute == 0
        ]
        session.execute(insert(ProbeRollup), minute_rows + hour_rows)
        session.execute(  # the next day's first hour is rolled up: the whole day may go
            insert(ProbeRollup),
            [
                {
                    "target_id": t.id,
                    "resolution": "hour",
                    "bucket_start": day + timedelta(days=1),
                    "count": 720,
                    "failures": 0,
                    "unknown": 0,
                }
                for t in ids
            ],
        )
    return engine, day


def test_a_day_of_minute_rollups_is_pruned_a_chunk_per_transaction(tmp_path: Path) -> None:
    """Pruning the oldest day at full retention deletes 1,440 minute rows per target: in
    transactions of STREAM_ROWS rows, so a probe round waits for one chunk, never the day."""
    engine, day = seeded_day_of_minutes(tmp_path / "slamon.db", targets=4)
    sessions = make_sessionmaker(engine)
    deletes: list[str] = []

    def count(_conn: object, _cursor: object, statement: str, *_args: object) -> None:
        if statement.startswith("DELETE FROM probe_rollups"):
            deletes.append(statement)

    event.listen(engine, "after_cursor_execute", count)
    try:
        pruned = prune_minutes(sessions, day + timedelta(days=15), timedelta(days=14))
        with sessions() as session:
            left = session.scalar(select(func.count()).where(ProbeRollup.resolution == "minute"))
            hours = session.scalar(select(func.count()).where(ProbeRollup.resolution == "hour"))
    finally:
        engine.dispose()
    assert pruned == 4 * 1440
    assert left == 0
    assert hours == 4 * 25  # hours are kept for ever
    assert len(deletes) == 4 * 1440 // STREAM_ROWS + 1


def test_an_expired_minute_is_found_by_its_whole_primary_key(tmp_path: Path) -> None:
    """At full retention every rollup prunes the oldest minute of each target. SQLite searched
    the former ``(target_id, resolution, bucket_start) IN (subquery)`` delete by ``target_id``
    alone: each deleted row read all of its target's rows (20,000 at 14 days), 9.6 s of CPU a
    minute at 1,000 targets. The delete that runs must seek each row by its whole key."""
    engine, day = seeded_day_of_minutes(tmp_path / "slamon.db", targets=2)
    sessions = make_sessionmaker(engine)
    deletes: list[tuple[str, Any]] = []

    def record(
        _conn: object, _cursor: object, statement: str, parameters: Any, *_args: object
    ) -> None:
        if statement.startswith("DELETE FROM probe_rollups"):
            deletes.append((statement, parameters))

    event.listen(engine, "after_cursor_execute", record)
    try:  # the first minute of the day expires, as it does every minute at full retention
        pruned = prune_minutes(sessions, day + timedelta(days=14, minutes=1), timedelta(days=14))
        statement, parameters = deletes[0]
        first = parameters[0] if isinstance(parameters, list) else parameters
        with engine.connect() as connection:
            plan = [
                row[3]
                for row in connection.exec_driver_sql(f"EXPLAIN QUERY PLAN {statement}", first)
            ]
    finally:
        engine.dispose()
    assert pruned == 2
    assert plan == [
        "SEARCH probe_rollups USING PRIMARY KEY (target_id=? AND resolution=? AND bucket_start=?)"
    ]


def test_a_bucket_recomputed_to_the_same_values_is_not_written_again(
    session: Session, sessions: sessionmaker[Session]
) -> None:
    """Each run recomputes the last minutes (late rows); a bucket that comes out the same is
    left as stored: on PostgreSQL a rewrite is a dead row version and new index entries."""
    seed(session, minutes=10)
    now = T0 + timedelta(minutes=10)
    roll_up(sessions, now)
    postgres = session.get_bind().dialect.name == "postgresql"
    stamp = "SELECT xmin::text FROM probe_rollups" if postgres else "SELECT total_changes()"
    before = session.scalars(text(stamp)).all()
    roll_up(sessions, now)  # the same minutes again, the same rows
    assert session.scalars(text(stamp)).all() == before
    session.execute(
        insert(ProbeResult),
        [{"target_id": session.scalar(select(func.min(ProbeResult.target_id))),
          "vantage": "v", "at": T0 + timedelta(minutes=9, seconds=50), "ok": False}],
    )  # fmt: skip
    roll_up(sessions, now + timedelta(seconds=1))  # a late row: its minute is written
    assert session.scalars(text(stamp)).all() != before
