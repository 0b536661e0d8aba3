"""The leader lease and the fenced slots, in the database (``scheduler_leases`` and
``schedule_slots``, migration 0012).

Three writers, each one short transaction: a scheduler holding (taking or renewing) the
lease, the leader marking the slots it is about to send, and a worker admitting a message
before it runs it. The lease row is locked FOR UPDATE by the first two and FOR SHARE by the
third, so a take-over and an admission never cross: a message is run only under the token that
is current when it is admitted. Times are the database's (``database_now``) unless given.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Literal

from sqlalchemy import delete, or_, select, update
from sqlalchemy.orm import Session

from monitor.db.dialect import database_now, insert_ignoring_conflicts
from monitor.db.models import SchedulerLease, ScheduleSlot

LEASE = "beat"  # the one lease the schedulers elect their leader by
Admission = Literal["run", "fenced", "repeated"]


@dataclass(frozen=True, slots=True)
class LeaseView:
    holder: str
    token: int
    acquired_at: datetime
    renewed_at: datetime
    expires_at: datetime

    def held_at(self, now: datetime) -> bool:
        return bool(self.holder) and now < self.expires_at


@dataclass(frozen=True, slots=True)
class Hold:
    """What asking for the lease found: ours or not, and whether it changed hands now (then
    ``previous`` is who held it before, '' for nobody)."""

    lease: LeaseView
    ours: bool
    taken: bool = False
    previous: str = ""


@dataclass(frozen=True, slots=True)
class Entry:
    """A periodic task as the slots table knows it (``period_s`` None: a calendar entry)."""

    name: str
    task: str
    period_s: float | None


def hold(
    session: Session,
    holder: str,
    lease_s: float,
    now: datetime | None = None,
    name: str = LEASE,
    dead: str = "",
) -> Hold:
    """Take the lease when it is free or has expired, renew it when it is ours; else report who
    holds it. The token grows only when the lease changes hands: a holder renewing late (its
    lease lapsed, nobody took it) keeps its token, since nobody else can have sent under one.
    ``dead`` names a holder the caller knows has died (a process of this machine that is
    gone): its lease is taken at once, not when it runs out."""
    now = now or database_now(session)
    empty = {
        "name": name, "holder": "", "token": 0,
        "acquired_at": now, "renewed_at": now, "expires_at": now,
    }  # fmt: skip
    insert_ignoring_conflicts(session, SchedulerLease, [empty], ["name"])
    row = session.execute(
        select(SchedulerLease).where(SchedulerLease.name == name).with_for_update()
    ).scalar_one()
    until = now + timedelta(seconds=lease_s)
    if row.holder == holder:
        row.renewed_at, row.expires_at = now, until
        return Hold(_view(row), ours=True)
    if row.holder and row.expires_at > now and row.holder != dead:
        return Hold(_view(row), ours=False)
    previous = row.holder
    row.holder, row.token = holder, row.token + 1
    row.acquired_at = row.renewed_at = now
    row.expires_at = until
    return Hold(_view(row), ours=True, taken=True, previous=previous)


def release(
    session: Session, holder: str, token: int, now: datetime | None = None, name: str = LEASE
) -> bool:
    """Let the lease go at once (a clean shutdown), so a standby need not wait for it to
    expire; True when it was ours to let go."""
    now = now or database_now(session)
    result = session.execute(
        update(SchedulerLease)
        .where(SchedulerLease.name == name)
        .where(SchedulerLease.holder == holder, SchedulerLease.token == token)
        .where(SchedulerLease.expires_at > now)
        .values(expires_at=now, renewed_at=now)
    )
    return bool(result.rowcount)  # type: ignore[attr-defined]


def current(session: Session, name: str = LEASE) -> LeaseView | None:
    """The lease as stored (held or lapsed); None before any scheduler asked for it. A
    standby reads this first, in a read-only transaction, and asks to ``hold`` the lease (a
    write) only once it has lapsed."""
    row = session.get(SchedulerLease, name)
    return _view(row) if row is not None and row.holder else None


def ensure_entries(session: Session, entries: Iterable[Entry]) -> None:
    """A row per periodic task; a known one keeps its slots and takes the task and period, and
    one the schedule no longer has (a task an upgrade removed) goes, so that it is not judged
    late for ever."""
    given = list(entries)
    session.execute(delete(ScheduleSlot).where(ScheduleSlot.name.not_in([e.name for e in given])))
    rows = [{"name": e.name, "task": e.task, "period_s": e.period_s} for e in given]
    insert_ignoring_conflicts(session, ScheduleSlot, rows, ["name"])
    for entry in given:
        session.execute(
            update(ScheduleSlot)
            .where(ScheduleSlot.name == entry.name)
            .where(
                or_(
                    ScheduleSlot.task != entry.task,
                    ScheduleSlot.period_s.is_distinct_from(entry.period_s),
                )
            )
            .values(task=entry.task, period_s=entry.period_s)
        )


def sent_slots(session: Session) -> dict[str, datetime | None]:
    """Each periodic task's last slot sent, by whichever leader sent it."""
    rows = session.execute(select(ScheduleSlot.name, ScheduleSlot.sent_slot)).all()
    return {row.name: row.sent_slot for row in rows}


def mark_sent(
    session: Session,
    holder: str,
    token: int,
    due: Sequence[tuple[str, datetime]],
    now: datetime | None = None,
    name: str = LEASE,
) -> list[str] | None:
    """Record that the leader sends these slots, under its lease: the names it may send (a
    slot another leader already sent is left out), or None when the lease is no longer this
    holder's (it must send nothing and stand by)."""
    now = now or database_now(session)
    row = session.execute(
        select(SchedulerLease).where(SchedulerLease.name == name).with_for_update()
    ).scalar_one_or_none()
    if row is None or row.holder != holder or row.token != token or row.expires_at <= now:
        return None
    mine = []
    for entry, slot in due:
        result = session.execute(
            update(ScheduleSlot)
            .where(ScheduleSlot.name == entry)
            .where(or_(ScheduleSlot.sent_slot.is_(None), ScheduleSlot.sent_slot < slot))
            .values(sent_slot=slot, sent_at=now, sent_token=token)
        )
        if result.rowcount:  # type: ignore[attr-defined]
            mine.append(entry)
    return mine


def admit(
    session: Session,
    entry: str,
    slot: datetime,
    token: int,
    now: datetime | None = None,
    name: str = LEASE,
) -> Admission:
    """May a worker run the message the leader sent for ``entry``'s ``slot`` under ``token``?
    ``run`` once per slot while the token is the lease's; ``fenced`` for a message of a leader
    that has lost the lease since; ``repeated`` for a slot already run (a redelivery). Each
    refusal is counted on the entry's row."""
    now = now or database_now(session)
    lease = session.execute(
        select(SchedulerLease.token).where(SchedulerLease.name == name).with_for_update(read=True)
    ).scalar_one_or_none()
    if lease != token:
        _count(session, entry, "fenced")
        return "fenced"
    result = session.execute(
        update(ScheduleSlot)
        .where(ScheduleSlot.name == entry)
        .where(or_(ScheduleSlot.done_slot.is_(None), ScheduleSlot.done_slot < slot))
        .values(done_slot=slot, done_at=now)
    )
    if result.rowcount:  # type: ignore[attr-defined]
        return "run"
    _count(session, entry, "repeated")
    return "repeated"


def _count(session: Session, entry: str, refusal: Literal["fenced", "repeated"]) -> None:
    column = getattr(ScheduleSlot, refusal)
    session.execute(
        update(ScheduleSlot).where(ScheduleSlot.name == entry).values({column: column + 1})
    )


def _view(row: SchedulerLease) -> LeaseView:
    return LeaseView(row.holder, row.token, row.acquired_at, row.renewed_at, row.expires_at)
