"""The leader lease and fenced slots, on SQLite and PostgreSQL: one holder at a time, the
token growing only when the lease changes hands, each slot sent once and run once, and a
deposed leader's messages refused."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sqlalchemy import select
from sqlalchemy.orm import Session

from monitor.db.models import ScheduleSlot
from monitor.scheduler.lease import (
    Entry,
    admit,
    current,
    ensure_entries,
    hold,
    mark_sent,
    release,
    sent_slots,
)

T0 = datetime(2026, 12, 6, 7, 0, tzinfo=UTC)
LEASE_S = 15.0
ENTRIES = [Entry("probes-dispatch", "slamon.probes.dispatch", 1.0), Entry("monthly", "m", None)]


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def test_the_first_scheduler_takes_the_lease_and_the_second_stands_by(session: Session) -> None:
    first = hold(session, "a:1", LEASE_S, now=at(0))
    second = hold(session, "b:2", LEASE_S, now=at(1))
    assert (first.ours, first.taken, first.previous, first.lease.token) == (True, True, "", 1)
    assert (second.ours, second.lease.holder, second.lease.token) == (False, "a:1", 1)
    lease = current(session)
    assert lease is not None
    assert lease.expires_at == at(LEASE_S)


def test_renewing_keeps_the_token_and_moves_the_expiry(session: Session) -> None:
    hold(session, "a:1", LEASE_S, now=at(0))
    renewed = hold(session, "a:1", LEASE_S, now=at(5))
    assert (renewed.ours, renewed.taken, renewed.lease.token) == (True, False, 1)
    assert renewed.lease.expires_at == at(5 + LEASE_S)
    assert not hold(session, "b:2", LEASE_S, now=at(5 + LEASE_S - 0.001)).ours


def test_a_standby_takes_an_expired_lease_with_the_next_token(session: Session) -> None:
    hold(session, "a:1", LEASE_S, now=at(0))
    taken = hold(session, "b:2", LEASE_S, now=at(LEASE_S))  # expires_at is not held
    assert (taken.ours, taken.taken, taken.previous, taken.lease.token) == (True, True, "a:1", 2)
    back = hold(session, "a:1", LEASE_S, now=at(LEASE_S + 1))
    assert (back.ours, back.lease.holder) == (False, "b:2")


def test_a_holder_renewing_late_keeps_its_token_when_nobody_took_the_lease(
    session: Session,
) -> None:
    hold(session, "a:1", LEASE_S, now=at(0))
    late = hold(session, "a:1", LEASE_S, now=at(LEASE_S * 3))
    assert (late.ours, late.taken, late.lease.token) == (True, False, 1)


def test_the_lease_of_a_holder_known_dead_is_taken_before_it_runs_out(session: Session) -> None:
    hold(session, "a:1", LEASE_S, now=at(0))
    assert not hold(session, "b:2", LEASE_S, now=at(6), dead="c:3").ours  # not that one
    taken = hold(session, "b:2", LEASE_S, now=at(6), dead="a:1")
    assert (taken.ours, taken.taken, taken.previous, taken.lease.token) == (True, True, "a:1", 2)


def test_a_released_lease_is_taken_at_once(session: Session) -> None:
    hold(session, "a:1", LEASE_S, now=at(0))
    assert not release(session, "a:1", 99, now=at(1))  # not with another token
    assert release(session, "a:1", 1, now=at(1))
    taken = hold(session, "b:2", LEASE_S, now=at(1.5))
    assert (taken.ours, taken.lease.token) == (True, 2)
    assert not release(session, "a:1", 1, now=at(2))  # no longer ours to let go


def test_each_slot_is_sent_once_and_only_under_the_lease(session: Session) -> None:
    hold(session, "a:1", LEASE_S, now=at(0))
    ensure_entries(session, ENTRIES)
    slot = at(0)
    assert mark_sent(session, "a:1", 1, [("probes-dispatch", slot)], now=at(0.1)) == [
        "probes-dispatch"
    ]
    assert mark_sent(session, "a:1", 1, [("probes-dispatch", slot)], now=at(0.2)) == []
    assert mark_sent(session, "b:2", 1, [("probes-dispatch", at(1))], now=at(1)) is None
    assert mark_sent(session, "a:1", 1, [("probes-dispatch", at(1))], now=at(LEASE_S)) is None
    assert sent_slots(session) == {"probes-dispatch": slot, "monthly": None}


def test_a_new_leader_carries_on_from_the_slots_the_old_one_sent(session: Session) -> None:
    hold(session, "a:1", LEASE_S, now=at(0))
    ensure_entries(session, ENTRIES)
    mark_sent(session, "a:1", 1, [("probes-dispatch", at(3))], now=at(3))
    hold(session, "b:2", LEASE_S, now=at(LEASE_S + 1))
    assert sent_slots(session)["probes-dispatch"] == at(3)
    # the old leader's slot is not sent again; the next one is
    assert mark_sent(session, "b:2", 2, [("probes-dispatch", at(3))], now=at(16)) == []
    assert mark_sent(session, "b:2", 2, [("probes-dispatch", at(16))], now=at(16)) == [
        "probes-dispatch"
    ]


def test_a_worker_runs_a_slot_once_and_refuses_a_deposed_leaders_message(
    session: Session,
) -> None:
    hold(session, "a:1", LEASE_S, now=at(0))
    ensure_entries(session, ENTRIES)
    assert admit(session, "probes-dispatch", at(1), 1, now=at(1)) == "run"
    assert admit(session, "probes-dispatch", at(1), 1, now=at(1.5)) == "repeated"  # redelivered
    assert admit(session, "probes-dispatch", at(0), 1, now=at(1.5)) == "repeated"  # older slot
    hold(session, "b:2", LEASE_S, now=at(LEASE_S))
    # a:1 was paused past its lease and sent slot 16 on waking: refused, whatever the slot
    assert admit(session, "probes-dispatch", at(16), 1, now=at(16)) == "fenced"
    assert admit(session, "probes-dispatch", at(16), 2, now=at(16)) == "run"
    row = session.scalars(select(ScheduleSlot).where(ScheduleSlot.name == "probes-dispatch")).one()
    assert (row.fenced, row.repeated, row.done_slot) == (1, 2, at(16))


def test_ensure_entries_keeps_the_slots_and_takes_a_new_period(session: Session) -> None:
    hold(session, "a:1", LEASE_S, now=at(0))
    ensure_entries(session, ENTRIES)
    mark_sent(session, "a:1", 1, [("probes-dispatch", at(0))], now=at(0))
    ensure_entries(session, [Entry("probes-dispatch", "slamon.probes.dispatch", 2.0)])
    row = session.scalars(select(ScheduleSlot).where(ScheduleSlot.name == "probes-dispatch")).one()
    assert (row.period_s, row.sent_slot) == (2.0, at(0))
    assert sent_slots(session) == {"probes-dispatch": at(0)}  # "monthly" is gone
