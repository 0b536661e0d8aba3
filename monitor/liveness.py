"""slamon's record of its own uptime: without it, time we did not watch would look like up."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy.orm import Session

from monitor.db.base import utcnow
from monitor.db.dialect import insert_ignoring_conflicts
from monitor.db.models import MonitorTick


def bucket_start(at: datetime, seconds: float) -> datetime:
    """The start of the ``seconds``-long bucket holding ``at`` (buckets align to the epoch)."""
    step = max(1, int(seconds))
    epoch = int(at.timestamp())
    return datetime.fromtimestamp(epoch - epoch % step, tz=UTC)


def record_tick(session: Session, vantage: str, tick_seconds: float) -> datetime:
    """Mark ``vantage`` alive for the current bucket; idempotent (a redelivered tick is a no-op)."""
    start = bucket_start(utcnow(), tick_seconds)
    row = {
        "vantage": vantage,
        "bucket_start": start,
        "bucket_seconds": max(1, int(tick_seconds)),
        "recorded_at": utcnow(),
    }
    insert_ignoring_conflicts(session, MonitorTick, [row], ["vantage", "bucket_start"])
    return start
