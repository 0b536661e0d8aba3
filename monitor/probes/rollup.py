"""Minute and hour rollups of raw probe results, compaction and pruning.

A minute's rollup row is the compact record of its routine probes (successes that repeat the
one before: ``ProbeResult.routine``): their count and latency digest (p50, p95, max). Once a
minute is final (the rollup will not recompute it) :func:`compact_raw` moves its rows kept
whole (failures, unknowns, first successes, recoveries) into ``probe_evidence``, where they stay
for ``raw_retention``, and deletes the rest: ``probe_results`` holds minutes of probes.
Minute rollups are kept ``minute_retention`` (by default as long: they serve dashboards over
the raw window, ~15 bytes per probe at a 5 s interval), hour rollups for ever (what a month's
report and a year's trend need: under one byte per probe, bench/compare.py --only storage).
Rolling up is idempotent: a bucket not yet final is recomputed, never added to."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from sqlalchemy import Delete, Select, bindparam, delete, func, insert, select, text
from sqlalchemy.orm import Session, sessionmaker

from monitor.db.dialect import among, collected, floats_of, truncated, upsert_many
from monitor.db.engine import reading, transaction
from monitor.db.models import ProbeEvidence, ProbeResult, ProbeRollup
from monitor.sla.response import percentile

MINUTE = timedelta(minutes=1)
HOUR = timedelta(hours=1)
LATE_ROWS = timedelta(minutes=2)  # results can land this long after their probe time
# buckets written, and raw rows deleted, per statement and transaction: each holds SQLite's
# write lock for tens of milliseconds, not seconds
STREAM_ROWS = 5000
# buckets held at a time: the window of a run is three minutes, a first run's may be weeks
MINUTES_AT_A_TIME = timedelta(minutes=10)
HOURS_AT_A_TIME = timedelta(hours=6)


@dataclass(frozen=True, slots=True)
class Bucket:
    target_id: int
    start: datetime
    count: int
    failures: int
    unknown: int
    latency_p50_ms: float | None
    latency_p95_ms: float | None
    latency_max_ms: float | None


def floor_to(at: datetime, step: timedelta) -> datetime:
    seconds = int(at.timestamp())
    size = int(step.total_seconds())
    return datetime.fromtimestamp(seconds - seconds % size, tz=UTC)


def bucket_of(
    target_id: int, start: datetime, count: int, failures: int, unknown: int, latencies: list[float]
) -> Bucket:
    """A minute's bucket from what the database counted and the latencies of its good probes
    (pure)."""
    latencies = sorted(latencies)
    return Bucket(
        target_id,
        start,
        count=count,
        failures=failures,
        unknown=unknown,
        latency_p50_ms=percentile(latencies, 50),
        latency_p95_ms=percentile(latencies, 95),
        latency_max_ms=latencies[-1] if latencies else None,
    )


def roll_up(sessions: sessionmaker[Session], now: datetime) -> int:
    """Recompute minute buckets from the last rolled minute (less late arrivals) to the last
    whole minute, and the closed hour buckets they touch (an hour's bucket appears once the
    hour is over). Returns the number of minute buckets.

    The database groups the rows (Python sees one row per target and minute, not one per
    probe), in a read-only transaction, and each chunk of buckets is written in a short
    transaction of its own. At 3,000 targets a second, summarizing the last three minutes'
    540,000 rows in Python took 2.7 s of the main process's CPU every minute, inside one
    transaction that held SQLite's one write lock: a round of late probes every minute (the
    dispatcher and every round waited for the lock, or for the CPU)."""
    end = floor_to(now, MINUTE)
    with reading(sessions) as session:
        start = _resume_from(session, end)
    if start is None or start >= end:
        return 0
    rolled = 0
    for since, until in _slices(start, end, MINUTES_AT_A_TIME):
        with reading(sessions) as session:
            minutes = _minutes(session, since, until)
        _store_in_chunks(sessions, minutes, "minute")
        rolled += len(minutes)
    # Only closed hours: recomputing the open hour every run re-read up to 60 minute rows per
    # target each minute (seconds of CPU at 1,000 targets, and late probe rounds behind it).
    for since, until in _slices(floor_to(start, HOUR), floor_to(end, HOUR), HOURS_AT_A_TIME):
        with reading(sessions) as session:
            hours = _hours(session, since, until)
        _store_in_chunks(sessions, hours, "hour")
    return rolled


def _slices(start: datetime, end: datetime, step: timedelta) -> Iterator[tuple[datetime, datetime]]:
    """[start, end) cut into ``step``-long pieces: a first rollup over weeks of backfilled raw
    rows holds one piece's buckets at a time, not the weeks'."""
    while start < end:
        yield start, min(start + step, end)
        start += step


def _resume_from(session: Session, end: datetime) -> datetime | None:
    last = session.scalar(
        select(func.max(ProbeRollup.bucket_start)).where(ProbeRollup.resolution == "minute")
    )
    if last is not None:
        return min(last, end - LATE_ROWS)
    first = session.scalar(select(func.min(ProbeResult.at)))
    return floor_to(first, MINUTE) if first is not None else None


def _minutes(session: Session, start: datetime, end: datetime) -> list[Bucket]:
    """The minute buckets of [start, end), in time and target order (~200 B each)."""
    r = ProbeResult
    minute = truncated(session, r.at, "minute")
    rows = session.execute(
        select(
            r.target_id,
            minute,
            func.count(),
            func.count().filter(r.ok.is_(False)),
            func.count().filter(r.ok.is_(None)),
            collected(session, r.latency_ms, r.ok.is_(True)),
        )
        .where(r.at >= start, r.at < end)
        .group_by(r.target_id, minute)
        # minute first: written in this order, the newest stored minute never passes one that
        # a failed write left out, so the next run recomputes it before compaction can see it
        .order_by(minute, r.target_id)
    )
    return [
        bucket_of(target_id, at, count, failures, unknown, floats_of(latencies))
        for target_id, at, count, failures, unknown, latencies in rows
    ]


def _hours(session: Session, start: datetime, end: datetime) -> list[Bucket]:
    """The hour buckets of [start, end) from their stored minutes. Percentiles do not add up:
    p50 is the median of the minute medians and p95 the worst minute p95, a conservative
    reading."""
    m = ProbeRollup
    hour = truncated(session, m.bucket_start, "hour")
    rows = session.execute(
        select(
            m.target_id,
            hour,
            func.sum(m.count),
            func.sum(m.failures),
            func.sum(m.unknown),
            collected(session, m.latency_p50_ms, m.latency_p50_ms.is_not(None)),
            func.max(m.latency_p95_ms),
            func.max(m.latency_max_ms),
        )
        .where(m.resolution == "minute", m.bucket_start >= start, m.bucket_start < end)
        .group_by(m.target_id, hour)
        .order_by(m.target_id, hour)
    )
    return [
        Bucket(
            target_id,
            at,
            count,
            failures,
            unknown,
            percentile(sorted(floats_of(p50s)), 50),
            p95,
            highest,
        )
        for target_id, at, count, failures, unknown, p50s, p95, highest in rows
    ]


ROLLUP_KEY = ["target_id", "resolution", "bucket_start"]
ROLLUP_VALUES = [
    "count",
    "failures",
    "unknown",
    "latency_p50_ms",
    "latency_p95_ms",
    "latency_max_ms",
]


def _store_in_chunks(
    sessions: sessionmaker[Session], buckets: list[Bucket], resolution: str
) -> None:
    """Write ``buckets``, ``STREAM_ROWS`` per statement, each statement its own transaction."""
    for first in range(0, len(buckets), STREAM_ROWS):
        with transaction(sessions) as session:
            _store(session, buckets[first : first + STREAM_ROWS], resolution)


def _store(session: Session, buckets: list[Bucket], resolution: str) -> None:
    rows = [
        {
            "target_id": b.target_id,
            "resolution": resolution,
            "bucket_start": b.start,
            "count": b.count,
            "failures": b.failures,
            "unknown": b.unknown,
            "latency_p50_ms": b.latency_p50_ms,
            "latency_p95_ms": b.latency_p95_ms,
            "latency_max_ms": b.latency_max_ms,
        }
        for b in buckets
    ]
    # a recomputed bucket mostly comes out the same: rewriting it anyway left PostgreSQL a dead
    # row and new index entries per bucket and run (its rollups took 260 bytes a row)
    upsert_many(session, ProbeRollup, rows, ROLLUP_KEY, ROLLUP_VALUES, changed_only=True)


def prune_raw(sessions: sessionmaker[Session], now: datetime, keep: timedelta) -> int:
    """Delete the probes kept whole older than ``keep`` whose minutes are already rolled up,
    and raw rows as old (recorded before compaction, or not compacted yet). How many."""
    with reading(sessions) as session:
        cutoff = _prune_cutoff(session, "minute", now, keep)
    if cutoff is None:
        return 0
    return _delete_before(sessions, ProbeEvidence, cutoff) + _delete_before(
        sessions, ProbeResult, cutoff
    )


def compact_raw(sessions: sessionmaker[Session], now: datetime) -> int:
    """Compact the final minutes: those before the first minute the next :func:`roll_up` would
    recompute (their rollup rows hold them for good). Their rows kept whole are copied into
    ``probe_evidence``, and every marked row of them leaves ``probe_results``, oldest first,
    ``STREAM_ROWS`` per transaction. How many rows left ``probe_results``."""
    with reading(sessions) as session:
        final = _resume_from(session, floor_to(now, MINUTE))
    if final is None:
        return 0
    moved = 0
    while True:
        with transaction(sessions) as session:
            rows = session.execute(marked_before(final)).all()
            if rows:
                _move(session, [(row_id, bool(routine)) for row_id, routine in rows])
        moved += len(rows)
        if len(rows) < STREAM_ROWS:
            return moved


def marked_before(final: datetime) -> Select[int, bool | None]:
    """Up to ``STREAM_ROWS`` marked raw rows before ``final``, oldest first: (id, routine),
    through ``ix_probe_results_marked_at`` (its predicate, word for word). Rows recorded before
    migration 0015 are not marked: pruning ages them out."""
    return (
        select(ProbeResult.id, ProbeResult.routine)
        .where(text("routine IS NOT NULL"), ProbeResult.at < final)
        .order_by(ProbeResult.at)
        .limit(STREAM_ROWS)
    )


KEPT_COLUMNS = (
    "target_id",
    "vantage",
    "at",
    "ok",
    "usable",
    "latency_ms",
    "status_code",
    "error_kind",
    "error",
    "detail",
)


def _move(session: Session, rows: list[tuple[int, bool]]) -> None:
    """Copy the rows of ``rows`` kept whole (not routine) into the evidence, in time order, then
    delete them all from the raw rows."""
    r = ProbeResult
    kept = [row_id for row_id, routine in rows if not routine]
    if kept:
        copied = select(*(r.__table__.c[name] for name in KEPT_COLUMNS))
        session.execute(
            insert(ProbeEvidence).from_select(
                list(KEPT_COLUMNS), copied.where(among(session, r.id, kept)).order_by(r.at)
            )
        )
    session.execute(delete(r).where(among(session, r.id, [row_id for row_id, _ in rows])))


def prune_minutes(sessions: sessionmaker[Session], now: datetime, keep: timedelta) -> int:
    """Delete minute rollups older than ``keep`` whose hours are already rolled up, oldest
    first, ``STREAM_ROWS`` per transaction (a day of them is 1,440 rows per target). How many.

    Each row goes by its whole primary key, one parameter set per row: SQLite searches a
    ``(target_id, resolution, bucket_start) IN (subquery)`` delete by ``target_id`` alone,
    reading every row a target holds for each row it deletes. At 1,000 targets and 14 days of
    minutes (20,000 rows a target) that was 9.6 s of CPU in every minute's rollup, once the
    oldest minutes began to expire (bench/ages.py, BENCHMARKS.md)."""
    with reading(sessions) as session:
        cutoff = _prune_cutoff(session, "hour", now, keep)
    if cutoff is None:
        return 0
    m = ProbeRollup
    expired = (
        select(m.target_id, m.bucket_start)
        .where(m.resolution == "minute", m.bucket_start < cutoff)
        .order_by(m.bucket_start)
        .limit(STREAM_ROWS)
    )
    by_key = delete(m).where(
        m.target_id == bindparam("target"),
        m.resolution == "minute",
        m.bucket_start == bindparam("start"),
    )
    deleted = 0
    while True:
        with transaction(sessions) as session:
            keys = [{"target": t, "start": at} for t, at in session.execute(expired)]
            if keys:
                session.connection().execute(by_key, keys)  # one statement, many rows
        deleted += len(keys)
        if len(keys) < STREAM_ROWS:
            return deleted


def _delete_before(
    sessions: sessionmaker[Session],
    model: type[ProbeResult] | type[ProbeEvidence],
    cutoff: datetime,
) -> int:
    """Delete ``model``'s rows before ``cutoff``, oldest first. How many."""
    chunk = select(model.id).where(model.at < cutoff).order_by(model.at).limit(STREAM_ROWS)
    return _delete_in_chunks(sessions, delete(model).where(model.id.in_(chunk)))


def _delete_in_chunks(sessions: sessionmaker[Session], statement: Delete) -> int:
    """Run ``statement`` (which deletes at most ``STREAM_ROWS`` rows) in transactions of its own
    until it deletes fewer: a minute of raw rows at 3,000 targets a second is 180,000 rows, and
    one transaction deleting them would hold SQLite's write lock for seconds, stalling every
    probe round behind it. How many in all."""
    deleted = 0
    while True:
        with transaction(sessions) as session:
            result = session.execute(statement)
        removed = int(result.rowcount or 0)  # type: ignore[attr-defined]
        deleted += removed
        if removed < STREAM_ROWS:
            return deleted


def _prune_cutoff(
    session: Session, summarised_by: str, now: datetime, keep: timedelta
) -> datetime | None:
    """``now - keep``, but never past the newest ``summarised_by`` bucket: nothing is deleted
    before a coarser bucket holds it. None while there is no such bucket."""
    rolled_until = session.scalar(
        select(func.max(ProbeRollup.bucket_start)).where(ProbeRollup.resolution == summarised_by)
    )
    return None if rolled_until is None else min(now - keep, rolled_until)
