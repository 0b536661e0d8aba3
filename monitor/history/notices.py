"""Operator notices as every surface reads them (the status page, the pages of what they are
about, ``/api/v1/notices``, the feed, ``slamon notices list``), with one rule for when each shows.

A notice is *upcoming* before its ``starts_at`` (announced ahead), *current* from then until
it ends, and *past* once it has: at its announced ``ends_at``, or earlier when an operator
ended it (``ended_at``; an end before the start called it off). Without an announced end it is
current until ended. ``monitor.notices`` writes them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from sqlalchemy import ColumnElement, Select, and_, case, or_, select
from sqlalchemy.orm import Session

from monitor.db.models import Notice
from monitor.sla.maintenance import covers

Phase = Literal["upcoming", "current", "past"]
PHASES: tuple[Phase, ...] = ("current", "upcoming", "past")
SEVERITY_RANK = {"info": 0, "minor": 1, "major": 2, "critical": 3}  # the page: worst first


def end_of(ends_at: datetime | None, ended_at: datetime | None) -> datetime | None:
    """When a notice stops showing: the earlier of its announced end and when it was ended."""
    ends = [t for t in (ends_at, ended_at) if t is not None]
    return min(ends) if ends else None


def phase_of(
    starts_at: datetime, ends_at: datetime | None, ended_at: datetime | None, now: datetime
) -> Phase:
    """Upcoming before its start, past from its end (announced or ended early), else current."""
    end = end_of(ends_at, ended_at)
    if end is not None and end <= now:
        return "past"
    return "upcoming" if now < starts_at else "current"


@dataclass(frozen=True, slots=True)
class NoticeView:
    """One stored notice, as plain values."""

    id: int
    title: str
    body: str
    kind: str  # notice | maintenance
    severity: str  # info | minor | major | critical
    starts_at: datetime
    ends_at: datetime | None  # as announced
    ended_at: datetime | None  # when an operator ended it, if one did
    provider: str | None
    region: str | None
    pool: str | None
    targets: tuple[str, ...]
    created_at: datetime
    created_by: str | None
    ended_by: str | None
    in_sla: bool  # maintenance that holds a window the SLA arithmetic subtracts

    @property
    def end(self) -> datetime | None:
        return end_of(self.ends_at, self.ended_at)

    @property
    def called_off(self) -> bool:
        """Ended before it began."""
        return self.ended_at is not None and self.ended_at <= self.starts_at

    @property
    def scoped(self) -> bool:
        return bool(self.targets or self.provider or self.region or self.pool)

    def phase(self, now: datetime) -> Phase:
        return phase_of(self.starts_at, self.ends_at, self.ended_at, now)

    def updated(self, now: datetime) -> datetime:
        """When it last changed as of ``now``: posted, began (after it was posted), ended."""
        later = [t for t in (self.starts_at, self.end) if t and self.created_at < t <= now]
        return max([self.created_at, *later])

    def fields(self, now: datetime) -> dict[str, Any]:
        """What ``GET /api/v1/notices`` answers for it (and ``slamon notices list --json``
        prints), times as they are."""
        return {
            "id": self.id,
            "title": self.title,
            "body": self.body,
            "kind": self.kind,
            "severity": self.severity,
            "phase": self.phase(now),
            "starts_at": self.starts_at,
            "ends_at": self.ends_at,
            "ended_at": self.ended_at,
            "scope": {
                "provider": self.provider,
                "region": self.region,
                "pool": self.pool,
                "targets": list(self.targets),
            },
            "in_sla": self.in_sla,
            "created_at": self.created_at,
            "created_by": self.created_by,
            "ended_by": self.ended_by,
        }

    def about(self, labels: Mapping[str, str]) -> bool:
        """Whether it is about what ``labels`` describe (a target's, or just ``provider`` or
        ``pool`` for those pages); an unscoped notice is about everything."""
        return not self.scoped or covers(self, labels)


def view(row: Notice) -> NoticeView:
    return NoticeView(
        id=row.id,
        title=row.title,
        body=row.body,
        kind=row.kind,
        severity=row.severity,
        starts_at=row.starts_at,
        ends_at=row.ends_at,
        ended_at=row.ended_at,
        provider=row.provider,
        region=row.region,
        pool=row.pool,
        targets=tuple(row.targets or ()),
        created_at=row.created_at,
        created_by=row.created_by,
        ended_by=row.ended_by,
        in_sla=row.maintenance_window_id is not None,
    )


def _not_past(now: datetime) -> ColumnElement[bool]:
    return and_(
        or_(Notice.ended_at.is_(None), Notice.ended_at > now),
        or_(Notice.ends_at.is_(None), Notice.ends_at > now),
    )


def _in_phase(phase: Phase, now: datetime) -> ColumnElement[bool]:
    if phase == "past":
        return ~_not_past(now)
    begun = Notice.starts_at <= now
    return and_(_not_past(now), begun if phase == "current" else ~begun)


def shown(session: Session, now: datetime) -> tuple[NoticeView, ...]:
    """The current notices (most severe, then newest start first), then the upcoming ones
    (soonest first): what the status page shows."""
    rows = session.scalars(select(Notice).where(_not_past(now)))
    found = [view(r) for r in rows]
    current = [n for n in found if n.phase(now) == "current"]
    upcoming = [n for n in found if n.phase(now) == "upcoming"]
    current.sort(key=lambda n: (-SEVERITY_RANK.get(n.severity, 0), -n.starts_at.timestamp(), -n.id))
    upcoming.sort(key=lambda n: (n.starts_at, n.id))
    return (*current, *upcoming)


def about(notices: Sequence[NoticeView], labels: Mapping[str, str]) -> tuple[NoticeView, ...]:
    """The ones among ``notices`` about what ``labels`` describe, in their order."""
    return tuple(n for n in notices if n.about(labels))


def of_provider(notices: Sequence[NoticeView], slug: str) -> tuple[NoticeView, ...]:
    """The ones among ``notices`` scoped to provider ``slug`` (or to nothing): its page's."""
    return tuple(n for n in notices if not n.scoped or n.provider == slug)


def listing(
    now: datetime, phases: Sequence[Phase] = ("current", "upcoming")
) -> tuple[Select[*tuple[Any, ...]], tuple[Any, ...]]:
    """Notices in ``phases`` as of ``now`` and the order to page them in: current ones first,
    then upcoming, then past; newest start first within each (``view`` reads each row)."""
    query = select(Notice).where(or_(*(_in_phase(p, now) for p in phases)))
    rank = case((_in_phase("current", now), 0), (_in_phase("upcoming", now), 1), else_=2)
    return query, (rank, Notice.starts_at.desc(), Notice.id.desc())


def touched_since(session: Session, since: datetime, now: datetime) -> list[NoticeView]:
    """Every notice still showing or upcoming, and those posted or ended after ``since``:
    what the feed tells."""
    posted = Notice.created_at > since
    ended = or_(Notice.ended_at > since, Notice.ends_at > since)
    rows = session.scalars(select(Notice).where(or_(_not_past(now), posted, ended)))
    return [view(r) for r in rows]
