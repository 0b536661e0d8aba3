"""When each target is probed: its slots on its own grid, claiming the due ones (one
dispatcher per target and slot), and cutting them into shards for the probe tasks.

Pure slot arithmetic plus one claiming query; the round itself is ``round.py``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TypeVar

from sqlalchemy import Table, or_, select
from sqlalchemy.orm import Session

from monitor.db.dialect import update_many
from monitor.db.models import Target
from monitor.errors import SlamonError
from monitor.probes.kinds import probed

T = TypeVar("T")
SLOT_SPAN = timedelta(seconds=1)  # the slots one shard may span (see shards_by_slot)
TARGETS: Table = Target.__table__  # type: ignore[assignment]


def next_due(previous: datetime | None, interval_s: float, now: datetime) -> datetime:
    """The next slot on the target's own grid after ``now``: no drift, no burst after a pause."""
    step = timedelta(seconds=interval_s)
    if previous is None or previous > now + step:
        return now + step
    missed = math.floor((now - previous) / step) + 1
    return previous + missed * step


GOLDEN = 0.6180339887498949  # consecutive ids land far apart in the interval


def first_slot(target_id: int, interval_s: float, now: datetime) -> datetime:
    """A new target's second slot: on its own phase in the interval, at least half an interval
    after its first probe (which runs at once). Targets added together (a config of thousands)
    so spread over the interval instead of being probed at the same instant every round, as
    Prometheus spreads its scrapes."""
    phase = (target_id * GOLDEN) % 1.0 * interval_s
    earliest = now.timestamp() + interval_s / 2
    k = math.ceil((earliest - phase) / interval_s)
    return datetime.fromtimestamp(k * interval_s + phase, UTC)


@dataclass(frozen=True, slots=True)
class Claim:
    """A target claimed for one slot: probe it at ``at`` (now, for a late one). Its interval
    travels with it, so that a shard that reaches its worker long after its slot (a worker
    paused, or a redelivery) is not probed once the next slot is near (``without_stale``)."""

    target_id: int
    at: datetime
    interval_s: float = field(default=0.0, compare=False)


def claim_due_targets(
    session: Session, now: datetime, ahead: timedelta = timedelta(0)
) -> list[Claim]:
    """Live, probed targets whose slot falls before ``now + ahead``, moved to their next slot
    in the same transaction. On PostgreSQL the rows are locked FOR NO KEY UPDATE SKIP LOCKED:
    two dispatchers never claim one, and nothing else holds that lock for long (a shard
    recording its results takes advisory locks and the foreign keys' KEY SHARE, which this
    lock does not wait for, so a busy target is never skipped).

    Claiming ahead (the dispatcher asks for a period plus a second) lets a shard reach its
    worker before the slot and wait for it on the probe loop, instead of every probe landing one
    queue trip (and up to a dispatch period) after its slot. Core rows and one bulk update, not
    ORM objects: this runs for every target every interval.
    """
    due = (
        select(Target.id, Target.next_probe_at, Target.interval_s)
        .where(Target.retired_at.is_(None), Target.kind.in_(probed()))
        .where(or_(Target.next_probe_at.is_(None), Target.next_probe_at <= now + ahead))
        .order_by(Target.id)
        .with_for_update(skip_locked=True, key_share=True)
    )
    rows = session.execute(due).all()
    claims = [Claim(r.id, max(r.next_probe_at or now, now), r.interval_s) for r in rows]
    if rows:
        slots = [
            {
                "k_id": r.id,
                "next_probe_at": first_slot(r.id, r.interval_s, now)
                if r.next_probe_at is None
                else next_due(r.next_probe_at, r.interval_s, c.at),
            }
            for r, c in zip(rows, claims, strict=True)
        ]
        update_many(session, TARGETS, slots)
    return claims


def shards(items: Sequence[T], size: int) -> list[list[T]]:
    return [list(items[i : i + size]) for i in range(0, len(items), size)]


def shards_by_slot(
    claims: Sequence[Claim], size: int, span: timedelta = SLOT_SPAN
) -> list[list[Claim]]:
    """Claims in slot order, cut into shards of at most ``size`` whose slots lie within
    ``span`` of the first: the probes of one shard run close together, and a round's targets
    are read and written in batches that match when they were probed."""
    found: list[list[Claim]] = []
    for claim in sorted(claims, key=lambda c: (c.at, c.target_id)):
        current = found[-1] if found else None
        if current is not None and len(current) < size and claim.at - current[0].at <= span:
            current.append(claim)
        else:
            found.append([claim])
    return found


def shard_message(claims: Sequence[Claim]) -> list[list[float]]:
    """A shard as the task takes it (JSON): ``[target id, slot as epoch seconds, interval]``."""
    return [[c.target_id, c.at.timestamp(), c.interval_s] for c in claims]


@dataclass(frozen=True, slots=True)
class Shard:
    """Targets one probe task probes together, and the slot each is due at (a target without
    one is probed at once)."""

    target_ids: list[int]
    slots: dict[int, datetime] = field(default_factory=dict)
    intervals: dict[int, float] = field(default_factory=dict)


def read_shard(items: Sequence[int | Sequence[float]]) -> Shard:
    """The shard a task message holds; a bare id (an older message, or a shard from the CLI) is
    probed at once."""
    shard = Shard([])
    for item in items:
        if isinstance(item, int):
            shard.target_ids.append(item)
            continue
        target_id, at = int(item[0]), datetime.fromtimestamp(float(item[1]), UTC)
        shard.target_ids.append(target_id)
        shard.slots[target_id] = at
        if len(item) > 2 and item[2]:
            shard.intervals[target_id] = float(item[2])
    return shard


def without_stale(shard: Shard, now: datetime) -> tuple[Shard, list[int]]:
    """``shard`` less the targets whose slot is more than half their interval ago (and those
    ids): by then the next slot is the nearer one, and probing now would probe one target twice
    within an interval (a worker that was paused with shards in hand, then woke). A redelivery
    soon after its slot is still probed; a shard without intervals is kept whole."""
    stale = [
        i
        for i in shard.target_ids
        if i in shard.slots
        and i in shard.intervals
        and (now - shard.slots[i]).total_seconds() > shard.intervals[i] / 2
    ]
    if not stale:
        return shard, []
    keep = [i for i in shard.target_ids if i not in stale]
    slots = {i: at for i, at in shard.slots.items() if i not in stale}
    intervals = {i: s for i, s in shard.intervals.items() if i not in stale}
    return Shard(keep, slots, intervals), stale


def live_probe_target_ids(session: Session, name: str | None = None) -> list[int]:
    """Ids of live, actively probed targets (all, or the one named); a clear error otherwise."""
    query = select(Target.id).where(Target.retired_at.is_(None), Target.kind.in_(probed()))
    if name is not None:
        query = query.where(Target.name == name)
    ids = list(session.scalars(query.order_by(Target.id)))
    if name is not None and not ids:
        raise SlamonError(f"no live probed target named {name!r} (see slamon.yaml or the API)")
    return ids
