"""The beat scheduler every ``slamon beat`` and ``slamon worker --beat`` runs: it sends the
periodic tasks only while it leads (``monitor.scheduler``), each message fenced.

Celery's beat loop calls :meth:`LeaderScheduler.tick` and sleeps what it returns. A tick
holds the lease when due (a standby every dispatch period, the leader every third of the
lease), then, while leading, sends each periodic task whose grid slot has come: the slots are
first marked sent under the lease in the database, then sent with the fencing token, the
entry and the slot in their headers (``workers.fencing`` admits them on the worker). Calendar
entries (the monthly report) are due by their crontab since the slot last sent.

Nothing here keeps state a restart would miss: the slots sent are in the database, so a new
leader, or this one restarted, carries on the schedule where it stopped, without a burst.
"""

from __future__ import annotations

import logging
import os
import socket
import time
from datetime import datetime
from typing import Any

from celery.beat import ScheduleEntry, Scheduler
from celery.schedules import schedule as interval_schedule

from monitor.db.base import utcnow
from monitor.db.dialect import database_now
from monitor.db.engine import READ_ONLY
from monitor.events.emitting import emit
from monitor.events.words import (
    LEADER_ELECTED,
    LEASE_LOST,
    STANDING_BY,
    leader_elected_text,
    lease_lost_text,
    standing_by_text,
)
from monitor.scheduler import lease
from monitor.scheduler.slots import Term, interval_slot, seconds_to_next_slot
from workers.runtime import runtime
from workers.watchdog import Watchdog

log = logging.getLogger("celery.beat")  # the console tells its database and broker episodes
FENCE, ENTRY, SLOT = "slamon_fence", "slamon_entry", "slamon_slot"  # message headers
MAX_SLEEP_S = 1.0


def holder_name() -> str:
    """``host:pid``: which scheduler holds the lease, as /healthz and the console say it."""
    return f"{socket.gethostname()}:{os.getpid()}"


class LeaderScheduler(Scheduler):  # type: ignore[misc]
    """Celery's ``Scheduler`` with the lease and fenced slots (``beat_scheduler``)."""

    def __init__(self, app: Any, *args: Any, **kwargs: Any) -> None:
        self.holder = holder_name()
        self.term: Term | None = None
        self.token = 0
        self.next_hold_at = 0.0
        self.sent: dict[str, datetime | None] = {}
        self.standing_by_for = ""
        self.watchdog: Watchdog | None = None
        kwargs.pop("schedule_filename", None)  # nothing is kept in a file
        super().__init__(app, *args, **kwargs)
        if not kwargs.get("lazy"):  # a lazy one only shows Celery's banner: it never ticks
            rt = runtime()
            self.watchdog = Watchdog(rt.config, rt.settings, rt.sessions, holder=self.holder)

    # ---------------------------------------------------------------- Celery's Scheduler API

    def setup_schedule(self) -> None:
        self.merge_inplace(self.app.conf.beat_schedule)

    def tick(self, *_: Any, **__: Any) -> float:
        """One pass: hold the lease when due, send what is due while leading; how long to
        sleep before the next pass."""
        monotonic_now = time.monotonic()
        if monotonic_now >= self.next_hold_at:
            self._hold(monotonic_now)
        leading = self.term is not None and self.term.leads_at(time.monotonic())
        if self.term is not None and not leading:
            self._lose("the lease ran out before it could be renewed")
        self._watchdog_beat(leading)
        if not leading:
            return max(0.05, min(MAX_SLEEP_S, self.next_hold_at - time.monotonic()))
        now = utcnow()
        due = self._due(now)
        if due:
            self._send(due)
        return max(0.05, min(self._sleep(now), self.next_hold_at - time.monotonic()))

    def sync(self) -> None:
        pass  # the database is the schedule's store: nothing to write back

    def close(self) -> None:
        """A clean stop lets the lease go, so a standby takes over at once."""
        if self.term is not None:
            try:
                with runtime().transaction() as session:
                    lease.release(session, self.holder, self.token)
            except Exception as exc:  # stopping anyway: the lease then simply expires
                log.warning("could not let the scheduler lease go (%s)", type(exc).__name__)
            self.term = None
        if self.watchdog is not None:
            self.watchdog.close(timeout=5)
        super().close()

    @property
    def info(self) -> str:
        return f"    . leader lease -> {self.holder} ({self._lease_s():g} s)"

    # ---------------------------------------------------------------- the lease

    def _lease_s(self) -> float:
        return runtime().config.schedule.lease

    def _standby_s(self) -> float:
        return runtime().config.schedule.dispatch

    def _hold(self, monotonic_now: float) -> None:
        rt = runtime()
        try:
            with rt.sessions() as session:
                session.connection(execution_options=READ_ONLY)
                seen = lease.current(session)
                now = database_now(session)
            dead = ""
            if seen and seen.holder != self.holder and seen.held_at(now):
                if not self._died_here(seen, now):
                    self._stand_by(seen.holder, monotonic_now)
                    return
                dead = seen.holder
            with rt.transaction() as session:
                held = lease.hold(session, self.holder, self._lease_s(), dead=dead)
                if held.ours and (held.taken or self.term is None):  # a new term: catch up
                    lease.ensure_entries(session, self._entries())
                    self.sent = lease.sent_slots(session)
        except Exception as exc:  # the database is away: keep the term we have, try again soon
            log.error("beat: could not hold the scheduler lease: %s", exc, exc_info=exc)
            self.next_hold_at = monotonic_now + min(self._standby_s(), self._lease_s() / 3)
            return
        if not held.ours:
            self._stand_by(held.lease.holder, monotonic_now)
            return
        if self.term is None or held.lease.token != self.token:
            emit(
                LEADER_ELECTED,
                leader_elected_text(self.holder, held.lease.token, held.previous or None),
            )
        self.token = held.lease.token
        self.term = Term(monotonic_now, self._lease_s())
        self.standing_by_for = ""
        self.next_hold_at = self.term.renew_at()

    def _died_here(self, seen: lease.LeaseView, now: datetime) -> bool:
        """Has the holder died on this machine and missed a renewal? Then its lease need not
        run out: a restarted `slamon run` child takes over from the one it replaces at once.
        A holder that renews (every third of the lease) is never taken this way, whatever this
        machine can see of its pid (a container's own pid namespace)."""
        host, _, pid = seen.holder.rpartition(":")
        if host != socket.gethostname() or not pid.isdigit():
            return False
        missed = (now - seen.renewed_at).total_seconds() > self._lease_s() / 3 + 1.0
        return missed and not _alive(int(pid))

    def _stand_by(self, leader: str, monotonic_now: float) -> None:
        if self.term is not None:
            self._lose(f"{leader} holds the lease now")
        if leader != self.standing_by_for:
            emit(STANDING_BY, standing_by_text(self.holder, leader))
            self.standing_by_for = leader
        self.next_hold_at = monotonic_now + self._standby_s()

    def _lose(self, why: str) -> None:
        emit(LEASE_LOST, lease_lost_text(self.holder, self.token, why))
        self.term = None
        self.next_hold_at = 0.0  # ask again on the next pass

    # ---------------------------------------------------------------- the slots

    def _entries(self) -> list[lease.Entry]:
        return [
            lease.Entry(name, entry.task, _period(entry)) for name, entry in self.schedule.items()
        ]

    def _due(self, now: datetime) -> list[tuple[ScheduleEntry, datetime]]:
        due = []
        for name, entry in self.schedule.items():
            sent = self.sent.get(name)
            period = _period(entry)
            if period is not None:
                slot = interval_slot(now, period)
                if sent is None or slot > sent:
                    due.append((entry, slot))
            elif sent is None:
                self.sent[name] = now  # a calendar entry counts from the first time it is seen
            elif entry.schedule.is_due(sent).is_due:
                due.append((entry, now.replace(second=0, microsecond=0)))
        return due

    def _send(self, due: list[tuple[ScheduleEntry, datetime]]) -> None:
        try:
            with runtime().transaction() as session:
                mine = lease.mark_sent(
                    session, self.holder, self.token, [(e.name, slot) for e, slot in due]
                )
        except Exception as exc:
            log.error("beat: could not mark the slots sent: %s", exc, exc_info=exc)
            return
        if mine is None:
            self._lose("another scheduler took the lease")
            return
        for entry, slot in due:
            self.sent[entry.name] = slot
            if entry.name not in mine:
                continue  # another leader sent this slot
            headers = {FENCE: self.token, ENTRY: entry.name, SLOT: slot.timestamp()}
            options = {**entry.options, "headers": {**entry.options.get("headers", {}), **headers}}
            try:
                self.app.send_task(entry.task, entry.args, entry.kwargs, **options)
            except Exception as exc:  # the broker is away: this slot is lost, the next is sent
                log.error("beat: Connection error: %s", exc, exc_info=exc)

    def _sleep(self, now: datetime) -> float:
        waits = [
            seconds_to_next_slot(now, period)
            for entry in self.schedule.values()
            if (period := _period(entry)) is not None
        ]
        return min([MAX_SLEEP_S, *waits])

    def _watchdog_beat(self, leading: bool) -> None:
        if self.watchdog is None:
            return
        try:
            self.watchdog.beat(leading)
        except Exception:  # the watchdog must never stop the schedule
            log.exception("the watchdog failed")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: alive
        return True
    return True


def _period(entry: ScheduleEntry) -> float | None:
    schedule = entry.schedule
    if isinstance(schedule, interval_schedule):  # a crontab is not one
        return float(schedule.run_every.total_seconds())
    return None
