"""The judgement: is slamon doing its job? Pure, over a ``Snapshot``.

Four checks, each a ``Reason`` when it fails:

- **leader**: a scheduler holds the lease (it expires ``schedule.lease`` after the last
  renewal); nobody sends the periodic tasks otherwise.
- **lag**: each interval entry's next slot is admitted by a worker in time. An entry with
  period p whose last admitted slot is ``done_slot`` is due again at ``done_slot + p``; its lag
  is how far ``now`` is past that (0 before), and no earlier than when the leader took the
  lease. One sent but never admitted is due when it was sent; one never sent is due a period
  after its leader took the lease. Past ``max_lag``, the schedule is off. Calendar entries (the
  monthly report) are not judged.
- **backlog**: the oldest pending delivery has waited at most ``max_backlog``.
- **feeds**: some enabled feed was polled (a failed poll counts: the provider is down, not
  slamon) within ``max_feed_age``; without enabled feeds there is nothing to judge.

Figures exactly at their bound pass. A fresh start is healthy within seconds: the first
scheduler takes the lease at once, and an entry it has not sent yet is only late a period
after that; a leader with no entries at all is only told once ``max_lag`` has passed.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from monitor.events.words import duration
from monitor.health.model import Bounds, Judgement, Lease, Reason, Slot, Snapshot

NAMED_LATE = 3  # entries named in the lag reason; the rest are counted


def judge(snapshot: Snapshot, bounds: Bounds) -> Judgement:
    """The checks over ``snapshot`` (all at ``snapshot.now``), with a reason per failing one:
    leader, lag, backlog, feeds, in that order."""
    now, lease = snapshot.now, snapshot.lease
    leader = lease.holder if lease is not None and lease.held_at(now) else None
    lags = tuple(
        (slot.name, lag)
        for slot in snapshot.slots
        if (lag := entry_lag(slot, lease, now)) is not None
    )
    backlog_s = _age(snapshot.oldest_pending, now) if snapshot.oldest_pending else 0.0
    feed_age_s = None
    if snapshot.feeds and snapshot.last_feed_poll is not None:
        feed_age_s = _age(snapshot.last_feed_poll, now)
    found = [
        _leadership(lease, now),
        _late(lags, bounds.max_lag_s),
        _unscheduled(snapshot, leader, bounds.max_lag_s),
        _backlog(backlog_s, bounds.max_backlog_s),
        _feeds(feed_age_s, bounds.max_feed_age_s),
    ]
    return Judgement(
        now=now,
        leader=leader,
        lease=lease if lease is not None and lease.holder else None,
        lags=lags,
        lag_s=max((lag for _, lag in lags), default=None),
        backlog_s=backlog_s,
        feed_age_s=feed_age_s,
        reasons=tuple(reason for reason in found if reason is not None),
    )


def entry_lag(slot: Slot, lease: Lease | None, now: datetime) -> float | None:
    """Seconds ``slot``'s entry is past due at ``now`` (0 when on time); None for a calendar
    entry, or one never sent while no scheduler ever held the lease."""
    if slot.period_s is None:
        return None
    period = timedelta(seconds=slot.period_s)
    led = lease.acquired_at if lease is not None and lease.holder else None
    if slot.done_slot is not None:
        due = slot.done_slot + period
    elif slot.sent_at is not None:
        due = slot.sent_at  # sent, and a worker should have admitted it at once
    elif led is not None:
        due = led + period  # its leader sends it within a period
    else:
        return None
    if led is not None:
        # a leader answers for the schedule from when it took the lease: one that starts after
        # slamon was stopped for a night is not hours late, and the gap before it is the
        # leader check's (no scheduler led)
        due = max(due, led)
    return _age(due, now)


def _age(since: datetime, now: datetime) -> float:
    return max(0.0, (now - since).total_seconds())


def _leadership(lease: Lease | None, now: datetime) -> Reason | None:
    if lease is None or not lease.holder:
        return Reason("leader", "no scheduler has taken the lease yet")
    if lease.held_at(now):
        return None
    ago = duration(_age(lease.expires_at, now))
    return Reason("leader", f"no scheduler leads (lease of {lease.holder} expired {ago} ago)")


def _late(lags: tuple[tuple[str, float], ...], bound: float) -> Reason | None:
    late = sorted((pair for pair in lags if pair[1] > bound), key=lambda p: (-p[1], p[0]))
    if not late:
        return None
    names = ", ".join(name for name, _ in late[:NAMED_LATE])
    if len(late) > NAMED_LATE:
        names += f", +{len(late) - NAMED_LATE} more"
    worst = duration(late[0][1])
    return Reason("lag", f"dispatch {worst} late ({names}; max_lag {duration(bound)})")


def _unscheduled(snapshot: Snapshot, leader: str | None, bound: float) -> Reason | None:
    """A leader that has not a single interval entry to its name, for longer than ``bound``
    after it took the lease (a fresh install's first seconds are not a fault)."""
    lease = snapshot.lease
    if leader is None or lease is None or any(s.period_s is not None for s in snapshot.slots):
        return None
    held = _age(lease.acquired_at, snapshot.now)
    if held <= bound:
        return None
    return Reason(
        "unscheduled",
        f"no periodic task sent yet ({leader} has led for {duration(held)}; "
        f"max_lag {duration(bound)})",
    )


def _backlog(backlog_s: float, bound: float) -> Reason | None:
    if backlog_s <= bound:
        return None
    return Reason(
        "backlog",
        f"oldest pending delivery is {duration(backlog_s)} old (max_backlog {duration(bound)})",
    )


def _feeds(feed_age_s: float | None, bound: float) -> Reason | None:
    if feed_age_s is None or feed_age_s <= bound:
        return None
    return Reason(
        "feeds", f"no feed polled for {duration(feed_age_s)} (max_feed_age {duration(bound)})"
    )
