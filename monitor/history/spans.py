"""Observed, reachable and usable intervals of a set of targets over a period, clipped once.

An outage row counts from its start to its end (an open one to ``now``); one that starts at or
after ``now`` has not happened yet and is left out. Everything is clipped to the period, whose
end is never later than ``now``: a surface asking for a month gets the month so far."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import Select, or_, select
from sqlalchemy.orm import Session

from monitor.db.dialect import among
from monitor.db.models import ObservedWindow, Outage, Target
from monitor.sla.intervals import Span

REACHABLE, USABLE = "reachable", "usable"


@dataclass(frozen=True, slots=True)
class OutageSpan:
    """One outage row inside the period: its series, its clipped span, whether it is still
    open at the period's end, and what caused it (a usable outage's reason, an import's)."""

    series: str
    span: Span
    still_open: bool
    cause: str | None = None


@dataclass(frozen=True, slots=True)
class TargetSpans:
    """A target's observed windows and outages in the period, each sorted by start."""

    observed: tuple[Span, ...] = ()
    outages: tuple[OutageSpan, ...] = ()

    def of(self, series: str) -> list[Span]:
        """The outage spans of one series (``reachable`` or ``usable``)."""
        return [o.span for o in self.outages if o.series == series]


def bounded(period: Span, now: datetime) -> Span | None:
    """``period`` up to ``now``; None when nothing of it has happened."""
    end = min(period.end, now)
    return Span(period.start, end) if end > period.start else None


def clipped(start: datetime, end: datetime, period: Span) -> Span | None:
    """``[start, end)`` inside ``period``; None when they do not overlap."""
    start, end = max(start, period.start), min(end, period.end)
    return Span(start, end) if end > start else None


def spans(
    session: Session, target_ids: Sequence[int], period: Span, now: datetime
) -> dict[int, TargetSpans]:
    """Each target's observed windows and outage spans in ``period`` up to ``now``: two reads
    whatever the count. Targets with neither are absent."""
    window = bounded(period, now)
    if window is None or not target_ids:
        return {}
    observed = _observed(session, target_ids, window)
    outages = _outages(session, target_ids, window)
    return {
        i: TargetSpans(tuple(observed.get(i, ())), tuple(outages.get(i, ())))
        for i in observed.keys() | outages.keys()
    }


def _observed(session: Session, ids: Sequence[int], period: Span) -> dict[int, list[Span]]:
    found: dict[int, list[Span]] = defaultdict(list)
    query = (
        select(ObservedWindow.target_id, ObservedWindow.start, ObservedWindow.end)
        .where(among(session, ObservedWindow.target_id, ids))
        .where(ObservedWindow.start < period.end, ObservedWindow.end > period.start)
        .order_by(ObservedWindow.target_id, ObservedWindow.start)
    )
    for target_id, start, end in session.execute(query):
        span = clipped(start, end, period)
        if span is not None:
            found[target_id].append(span)
    return found


def _outages(session: Session, ids: Sequence[int], period: Span) -> dict[int, list[OutageSpan]]:
    found: dict[int, list[OutageSpan]] = defaultdict(list)
    query = (
        select(Outage.target_id, Outage.series, Outage.start, Outage.end, Outage.cause)
        .where(among(session, Outage.target_id, ids))
        .where(Outage.start < period.end, or_(Outage.end.is_(None), Outage.end > period.start))
        .order_by(Outage.target_id, Outage.start)
    )
    for target_id, series, start, end, cause in session.execute(query):
        span = clipped(start, period.end if end is None else end, period)
        if span is not None:
            still_open = end is None or end > period.end
            found[target_id].append(OutageSpan(series, span, still_open, cause))
    return found


@dataclass(frozen=True, slots=True)
class OutageRecord:
    """One outage row as it was stored (not clipped): what a target's page lists."""

    series: str
    start: datetime
    end: datetime | None  # None: still open
    cause: str | None
    detail: dict[str, Any] = field(default_factory=dict)


def outage_rows(
    session: Session,
    target_id: int,
    series: Sequence[str],
    since: datetime,
    now: datetime,
    limit: int,
) -> list[OutageRecord]:
    """The target's outages of ``series`` that began before ``now`` and were open at some
    point after ``since`` (every open one, however old), newest first, at most ``limit``."""
    query = (
        select(Outage.series, Outage.start, Outage.end, Outage.cause, Outage.detail)
        .where(Outage.target_id == target_id, Outage.series.in_(series), Outage.start < now)
        .where(or_(Outage.end.is_(None), Outage.end > since))
        .order_by(Outage.start.desc(), Outage.series)
        .limit(limit)
    )
    return [
        OutageRecord(s, start, end, cause, dict(detail or {}))
        for s, start, end, cause, detail in session.execute(query)
    ]


def outage_listing(
    *,
    target: str | None = None,
    provider: str | None = None,
    series: str | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
    still_open: bool | None = None,
) -> tuple[Select[*tuple[Any, ...]], tuple[Any, ...]]:
    """Confirmed outages with their target's name, filtered, and the order to page them in
    (newest first): ``since``/``until`` keep those overlapping the span (an open outage lasts
    until now), ``still_open`` those still going on (True) or ended (False)."""
    query = select(Outage, Target.name).join(Target, Target.id == Outage.target_id)
    if target is not None:
        query = query.where(Target.name == target)
    if provider is not None:
        query = query.where(Target.provider == provider)
    if series is not None:
        query = query.where(Outage.series == series)
    if since is not None:
        query = query.where(or_(Outage.end.is_(None), Outage.end > since))
    if until is not None:
        query = query.where(Outage.start < until)
    if still_open is not None:
        query = query.where(Outage.end.is_(None) if still_open else Outage.end.is_not(None))
    return query, (Outage.start.desc(), Outage.id.desc())


def recent_outages(
    session: Session, since: datetime, now: datetime, limit: int
) -> list[tuple[str, OutageRecord]]:
    """Outages open now or ended after ``since`` (begun before ``now``), each with its
    target's name, newest start first, at most ``limit``: what the feed tells."""
    query = (
        select(Target.name, Outage.series, Outage.start, Outage.end, Outage.cause)
        .join(Target, Target.id == Outage.target_id)
        .where(Outage.start < now, or_(Outage.end.is_(None), Outage.end > since))
        .order_by(Outage.start.desc(), Outage.id.desc())
        .limit(limit)
    )
    return [
        (name, OutageRecord(series, start, end, cause))
        for name, series, start, end, cause in session.execute(query)
    ]
