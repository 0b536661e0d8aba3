"""Maintenance windows that apply to a target: the stored ones (from provider feeds, and the
ones maintenance notices hold: ``monitor.notices``) and the configured ones, as spans inside a
period; the stored ones the feed tells apart from the notices; and those notices hold now, which
mute alerts."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from monitor.db.models import MaintenanceWindow, Notice
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


def stored_apart_from_notices(session: Session, since: datetime) -> list[MaintenanceWindow]:
    """The stored windows ending after ``since`` that no notice holds (a notice and the
    window it holds are one announcement: the notice tells it), by start."""
    held = select(Notice.maintenance_window_id).where(Notice.maintenance_window_id.is_not(None))
    query = (
        select(MaintenanceWindow)
        .where(MaintenanceWindow.ends_at > since, MaintenanceWindow.id.not_in(held))
        .order_by(MaintenanceWindow.starts_at)
    )
    return list(session.scalars(query))


def announced_at(session: Session, now: datetime) -> list[MaintenanceWindow]:
    """The windows maintenance notices hold that are under way at ``now``: an operator's
    announcement mutes alerts as a configured window does (a provider feed's window does not:
    the provider's word is not the operator's)."""
    held = select(Notice.maintenance_window_id).where(Notice.maintenance_window_id.is_not(None))
    query = select(MaintenanceWindow).where(
        MaintenanceWindow.starts_at <= now,
        MaintenanceWindow.ends_at > now,
        MaintenanceWindow.id.in_(held),
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
