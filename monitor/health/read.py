"""What the judgement reads, and the watchdog's record of its pings: the one place their
queries live."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from monitor.db.dialect import database_now, insert_ignoring_conflicts
from monitor.db.models import Delivery, Feed, ScheduleSlot, WatchdogPing
from monitor.health.model import Ping, Slot, Snapshot
from monitor.scheduler import lease

PING = "watchdog"  # the one row of watchdog_pings


def read_snapshot(session: Session) -> Snapshot:
    """The lease, every entry's slots, the oldest pending delivery, the enabled feeds' newest
    poll and the last ping, at the database's clock; call it in one (read-only) transaction
    (``monitor.db.engine.reading``), so they are read as of one moment."""
    now = database_now(session)
    feeds, last_poll = session.execute(
        select(func.count(), func.max(func.coalesce(Feed.last_polled_at, Feed.created_at)))
        .select_from(Feed)
        .where(Feed.enabled.is_(True))
    ).one()
    return Snapshot(
        now=now,
        lease=lease.current(session),
        slots=_slots(session),
        oldest_pending=session.scalar(
            select(func.min(Delivery.created_at)).where(Delivery.status == "pending")
        ),
        feeds=int(feeds),
        last_feed_poll=last_poll,
        ping=_ping(session),
    )


def record_ping(
    session: Session, holder: str, at: datetime, *, taken: bool, error: str | None = None
) -> None:
    """Store the watchdog's attempt at ``at`` in the caller's transaction: ``taken`` when the
    receiver answered 2xx (then it is the last ping), else ``error`` says why not."""
    row = {"name": PING, "holder": holder, "attempted_at": at, "pinged_at": None, "error": None}
    insert_ignoring_conflicts(session, WatchdogPing, [row], ["name"])
    ping = session.get_one(WatchdogPing, PING, with_for_update=True)
    ping.holder, ping.attempted_at = holder, at
    ping.error = None if taken else (error or "no answer")
    if taken:
        ping.pinged_at = at


def _slots(session: Session) -> tuple[Slot, ...]:
    return tuple(
        _slot(row) for row in session.scalars(select(ScheduleSlot).order_by(ScheduleSlot.name))
    )


def _slot(r: ScheduleSlot) -> Slot:
    sent, done = (r.sent_slot, r.sent_at), (r.done_slot, r.done_at)
    return Slot(r.name, r.period_s, *sent, *done, fenced=r.fenced or 0, repeated=r.repeated or 0)


def _ping(session: Session) -> Ping | None:
    row = session.get(WatchdogPing, PING)
    if row is None:
        return None
    return Ping(row.holder, row.attempted_at, row.pinged_at, row.error)
