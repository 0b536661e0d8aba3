"""Minute and hour rollups of raw probe results and their pruning: raw rows are kept
``raw_retention``, minute rollups ``minute_retention`` (by default as long: they serve
dashboards over the raw window, at ~12 bytes per probe), hour rollups for ever (what a month's
report and a year's trend need: under one byte per probe, bench/compare.py --only storage).
Rolling up is idempotent: a bucket is recomputed, never added to."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from itertools import groupby, islice

from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session

from monitor.db.dialect import upsert_many
from monitor.db.models import ProbeResult, ProbeRollup
from monitor.sla.response import percentile

MINUTE = timedelta(minutes=1)
HOUR = timedelta(hours=1)
LATE_ROWS = timedelta(minutes=2)  # results can land this long after their probe time
# raw rows fetched and minute buckets written at a time: a rollup's memory stays this size
# however many targets there are (a whole window at once was ~7 MB of rows at 2,000 targets,
# and those peaks, every minute in a long-lived worker, held on to the allocator's memory)
STREAM_ROWS = 5000


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


def summarize_minutes(
    rows: Iterable[tuple[int, datetime, bool | None, float | None]],
) -> Iterator[Bucket]:
    """Raw (target, at, ok, latency) rows, ordered by target and time -> one bucket per target
    and minute, as the rows come (pure: holds one target's minute at a time)."""
    keyed = ((target_id, floor_to(at, MINUTE), ok, latency) for target_id, at, ok, latency in rows)
    for key, group in groupby(keyed, key=lambda row: (row[0], row[1])):
        yield _bucket(key, [(ok, latency) for _, _, ok, latency in group])


def _bucket(key: tuple[int, datetime], values: list[tuple[bool | None, float | None]]) -> Bucket:
    latencies = sorted(lat for ok, lat in values if ok and lat is not None)
    return Bucket(
        key[0],
        key[1],
        count=len(values),
        failures=sum(ok is False for ok, _ in values),
        unknown=sum(ok is None for ok, _ in values),
        latency_p50_ms=percentile(latencies, 50),
        latency_p95_ms=percentile(latencies, 95),
        latency_max_ms=latencies[-1] if latencies else None,
    )


def roll_up(session: Session, now: datetime) -> int:
    """Recompute minute buckets from the last rolled minute (less late arrivals) to the last
    whole minute, and the closed hour buckets they touch (an hour's bucket appears once the
    hour is over). Returns the number of minute buckets."""
    end = floor_to(now, MINUTE)
    start = _resume_from(session, end)
    if start is None or start >= end:
        return 0
    raw = session.execute(
        select(ProbeResult.target_id, ProbeResult.at, ProbeResult.ok, ProbeResult.latency_ms)
        .where(ProbeResult.at >= start, ProbeResult.at < end)
        .order_by(ProbeResult.target_id, ProbeResult.at)
        .execution_options(yield_per=STREAM_ROWS)
    )
    stored = _store_in_chunks(session, summarize_minutes(raw), "minute")
    # Only closed hours: recomputing the open hour every run re-read up to 60 minute rows per
    # target each minute (seconds of CPU at 1,000 targets, and late probe rounds behind it).
    _roll_hours(session, floor_to(start, HOUR), floor_to(end, HOUR))
    return stored


def _resume_from(session: Session, end: datetime) -> datetime | None:
    last = session.scalar(
        select(func.max(ProbeRollup.bucket_start)).where(ProbeRollup.resolution == "minute")
    )
    if last is not None:
        return min(last, end - LATE_ROWS)
    first = session.scalar(select(func.min(ProbeResult.at)))
    return floor_to(first, MINUTE) if first is not None else None


def _roll_hours(session: Session, start: datetime, end: datetime) -> None:
    # Plain rows, not ORM objects, streamed in target order: near the end of an hour this
    # reads ~60 minutes per target.
    if start >= end:
        return
    minutes = session.connection().execute(
        select(
            ProbeRollup.target_id,
            ProbeRollup.bucket_start,
            ProbeRollup.count,
            ProbeRollup.failures,
            ProbeRollup.unknown,
            ProbeRollup.latency_p50_ms,
            ProbeRollup.latency_p95_ms,
            ProbeRollup.latency_max_ms,
        )
        .where(
            ProbeRollup.resolution == "minute",
            ProbeRollup.bucket_start >= start,
            ProbeRollup.bucket_start < end,
        )
        .order_by(ProbeRollup.target_id, ProbeRollup.bucket_start)
        .execution_options(yield_per=STREAM_ROWS)
    )
    by_hour = groupby(
        (Bucket(*row) for row in minutes), key=lambda m: (m.target_id, floor_to(m.start, HOUR))
    )
    hours = (_hour(target_id, hour, list(rows)) for (target_id, hour), rows in by_hour)
    _store_in_chunks(session, hours, "hour")


def _hour(target_id: int, hour: datetime, rows: list[Bucket]) -> Bucket:
    """An hour from its minutes. Percentiles do not add up: p50 is the median of the minute
    medians and p95 the worst minute p95, a conservative reading."""
    p50s = sorted(r.latency_p50_ms for r in rows if r.latency_p50_ms is not None)
    p95s = [r.latency_p95_ms for r in rows if r.latency_p95_ms is not None]
    maxes = [r.latency_max_ms for r in rows if r.latency_max_ms is not None]
    return Bucket(
        target_id,
        hour,
        sum(r.count for r in rows),
        sum(r.failures for r in rows),
        sum(r.unknown for r in rows),
        percentile(p50s, 50),
        max(p95s, default=None),
        max(maxes, default=None),
    )


ROLLUP_KEY = ["target_id", "resolution", "bucket_start"]
ROLLUP_VALUES = [
    "count",
    "failures",
    "unknown",
    "latency_p50_ms",
    "latency_p95_ms",
    "latency_max_ms",
]


def _store_in_chunks(session: Session, buckets: Iterator[Bucket], resolution: str) -> int:
    """Write ``buckets`` as they are produced, ``STREAM_ROWS`` per statement; how many."""
    stored = 0
    while chunk := list(islice(buckets, STREAM_ROWS)):
        _store(session, chunk, resolution)
        stored += len(chunk)
    return stored


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
    upsert_many(session, ProbeRollup, rows, ROLLUP_KEY, ROLLUP_VALUES)


def prune_raw(session: Session, now: datetime, keep: timedelta) -> int:
    """Delete raw results older than ``keep`` whose minutes are already rolled up."""
    cutoff = _prune_cutoff(session, "minute", now, keep)
    if cutoff is None:
        return 0
    result = session.execute(delete(ProbeResult).where(ProbeResult.at < cutoff))
    return int(result.rowcount or 0)  # type: ignore[attr-defined]


def prune_minutes(session: Session, now: datetime, keep: timedelta) -> int:
    """Delete minute rollups older than ``keep`` whose hours are already rolled up."""
    cutoff = _prune_cutoff(session, "hour", now, keep)
    if cutoff is None:
        return 0
    result = session.execute(
        delete(ProbeRollup).where(
            ProbeRollup.resolution == "minute", ProbeRollup.bucket_start < cutoff
        )
    )
    return int(result.rowcount or 0)  # type: ignore[attr-defined]


def _prune_cutoff(
    session: Session, summarised_by: str, now: datetime, keep: timedelta
) -> datetime | None:
    """``now - keep``, but never past the newest ``summarised_by`` bucket: nothing is deleted
    before a coarser bucket holds it. None while there is no such bucket."""
    rolled_until = session.scalar(
        select(func.max(ProbeRollup.bucket_start)).where(ProbeRollup.resolution == summarised_by)
    )
    return None if rolled_until is None else min(now - keep, rolled_until)
