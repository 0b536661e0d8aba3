"""When targets existed: from their registration (or their earliest observed window, when
history was imported for months before slamon knew them) until they were retired."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import func, or_, select
from sqlalchemy.orm import Session
from sqlalchemy.sql.selectable import ScalarSelect

from monitor.db.dialect import among
from monitor.db.models import ObservedWindow, Target
from monitor.sla.intervals import Span


@dataclass(frozen=True, slots=True)
class Alive:
    """A target row that existed in the period, and the part of the period it existed."""

    target: Target
    lifetime: Span | None  # None: registered, but no part of the period is inside its life


def born(created_at: datetime, first_observed_at: datetime | None) -> datetime:
    """When a target starts to exist for the SLA figures: its registration, or its earliest
    observed window when that is earlier (history imported for months before slamon knew the
    target counts as observed, and as existing, over the imported window)."""
    if first_observed_at is None:
        return created_at
    return min(created_at, first_observed_at)


def lifetime_in(
    period: Span,
    created_at: datetime,
    first_observed_at: datetime | None,
    retired_at: datetime | None,
) -> Span | None:
    """The part of ``period`` the target existed, or None."""
    start = max(period.start, born(created_at, first_observed_at))
    end = min(period.end, retired_at) if retired_at else period.end
    return Span(start, end) if end > start else None


def _first_observed() -> ScalarSelect[datetime]:
    """Per target row (correlated): the start of its earliest observed window, any source."""
    return (
        select(func.min(ObservedWindow.start))
        .where(ObservedWindow.target_id == Target.id)
        .correlate(Target)
        .scalar_subquery()
    )


def alive_in(session: Session, period: Span) -> list[Alive]:
    """Every target that existed in ``period`` (retired ones included), by name."""
    first = _first_observed()
    query = (
        select(Target, first)
        .where(or_(Target.created_at < period.end, first < period.end))
        .where(or_(Target.retired_at.is_(None), Target.retired_at > period.start))
        .order_by(Target.name)
    )
    return [
        Alive(t, lifetime_in(period, t.created_at, first_at, t.retired_at))
        for t, first_at in session.execute(query)
    ]


def starts(session: Session, target_ids: Sequence[int]) -> dict[int, datetime]:
    """:func:`born` of each of ``target_ids``, in one query."""
    if not target_ids:
        return {}
    query = select(Target.id, Target.created_at, _first_observed()).where(
        among(session, Target.id, target_ids)
    )
    return {i: born(created, first) for i, created, first in session.execute(query)}
