"""What training jobs and agents pushed: each target's latest heartbeat, its throughput series
and the stretches it was slow, derived from the heartbeats themselves (never from alerts)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from monitor.db.dialect import among
from monitor.db.models import Heartbeat, Target
from monitor.history.spans import clipped
from monitor.sla.intervals import Span
from monitor.sla.slowdown import Sample, SlowdownRule, slow_spans

EDGE = timedelta(hours=1)  # how far past the period a throughput series is read


@dataclass(frozen=True, slots=True)
class LastHeartbeat:
    """A target's latest push: what the API and /metrics show of a training job's progress."""

    at: datetime
    step: int | None
    throughput: float | None  # the job's own figure: samples (or tokens) per second
    unit: str | None


@dataclass(frozen=True, slots=True)
class Throughput:
    """A target's throughput samples in time order and the unit its job reports in."""

    samples: tuple[Sample, ...] = ()
    unit: str | None = None


@dataclass(slots=True)
class _Collecting:
    samples: list[Sample] = field(default_factory=list)
    unit: str | None = None


def work_unit(payload: dict[str, Any] | None) -> str:
    """The unit a heartbeat's throughput is in: what its job said (``unit``), else samples."""
    return str((payload or {}).get("unit") or "samples")


def latest(session: Session, target_ids: Iterable[int] | None = None) -> dict[int, LastHeartbeat]:
    """The latest heartbeat of each of ``target_ids`` that has one (None: of every target in
    service that has one)."""
    newest = select(Heartbeat.target_id, func.max(Heartbeat.at).label("at"))
    if target_ids is None:
        newest = newest.join(Target, Target.id == Heartbeat.target_id).where(
            Target.retired_at.is_(None)
        )
    else:
        ids = list(target_ids)
        if not ids:
            return {}
        newest = newest.where(among(session, Heartbeat.target_id, ids))
    last = newest.group_by(Heartbeat.target_id).subquery()
    rows = session.execute(
        select(
            Heartbeat.target_id,
            Heartbeat.at,
            Heartbeat.step,
            Heartbeat.throughput,
            Heartbeat.payload,
        ).where(Heartbeat.target_id == last.c.target_id, Heartbeat.at == last.c.at)
    ).all()
    return {
        target_id: LastHeartbeat(at, step, rate, work_unit(payload) if rate is not None else None)
        for target_id, at, step, rate, payload in rows
    }


def throughput(
    session: Session, target_ids: Sequence[int], since: datetime, until: datetime
) -> dict[int, Throughput]:
    """Each target's heartbeats with a throughput in ``[since, until]``, in time order, and the
    unit its job reports in. Targets without one are absent."""
    if not target_ids:
        return {}
    found: dict[int, _Collecting] = defaultdict(_Collecting)
    query = (
        select(Heartbeat.target_id, Heartbeat.at, Heartbeat.throughput, Heartbeat.payload)
        .where(among(session, Heartbeat.target_id, target_ids))
        .where(Heartbeat.throughput.is_not(None), Heartbeat.at >= since, Heartbeat.at <= until)
        .order_by(Heartbeat.target_id, Heartbeat.at)
    )
    for target_id, at, rate, payload in session.execute(query):
        kept = found[target_id]
        kept.samples.append((at, float(rate)))
        kept.unit = kept.unit or work_unit(payload)
    return {i: Throughput(tuple(c.samples), c.unit) for i, c in found.items()}


def around(
    session: Session, target_ids: Sequence[int], period: Span, lead: timedelta = EDGE
) -> dict[int, Throughput]:
    """:func:`throughput` over ``period``, an hour past it, and ``lead`` (at least an hour)
    before it: the sample before the period starts its first interval of work, and a slowdown
    rule judges the period's first minutes against the samples before them."""
    return throughput(session, target_ids, period.start - max(EDGE, lead), period.end + EDGE)


def slow_in(
    series: Throughput, period: Span, now: datetime, rule: SlowdownRule
) -> tuple[Span, ...]:
    """The stretches of ``period`` the job was slow, from its own throughput samples (which
    must reach ``rule.span`` before the period to judge its first minutes)."""
    spans = slow_spans(series.samples, min(now, period.end), rule)
    return tuple(s for s in (clipped(a.start, a.end, period) for a in spans) if s is not None)
