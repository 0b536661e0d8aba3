"""Maintenance windows that apply to a target: the stored ones (from provider feeds and the
API) and the configured ones, as spans inside a period."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from sqlalchemy import select
from sqlalchemy.orm import Session

from monitor.db.models import MaintenanceWindow
from monitor.history.spans import clipped
from monitor.sla.intervals import Span
from monitor.sla.maintenance import MaintenanceWindow as Configured
from monitor.sla.maintenance import windows_for


def stored_in(session: Session, period: Span) -> list[MaintenanceWindow]:
    """The stored maintenance windows overlapping ``period``."""
    query = select(MaintenanceWindow).where(
        MaintenanceWindow.starts_at < period.end, MaintenanceWindow.ends_at > period.start
    )
    return list(session.scalars(query))


def target_windows(
    labels: Mapping[str, str],
    stored: Sequence[MaintenanceWindow],
    configured: Iterable[Configured],
    period: Span,
) -> tuple[Span, ...]:
    """The windows (stored and configured) whose scope matches ``labels``, clipped to
    ``period``; they may overlap (the SLA arithmetic merges them)."""
    spans = [(m.starts_at, m.ends_at) for m in windows_for(labels, stored)]
    spans += [(m.start, m.end) for m in windows_for(labels, list(configured))]
    return tuple(w for w in (clipped(a, b, period) for a, b in spans) if w is not None)
