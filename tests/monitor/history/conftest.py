"""Rows for the history read model's tests: targets, observed windows, outages, heartbeats,
incidents and maintenance windows, written as the writers write them."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy.orm import Session

from monitor.db.models import (
    Heartbeat,
    Incident,
    MaintenanceWindow,
    ObservedWindow,
    Outage,
    Provider,
    Target,
)

NOV = datetime(2026, 11, 1, tzinfo=UTC)
DEC = datetime(2026, 12, 1, tzinfo=UTC)


def target(
    session: Session,
    name: str,
    *,
    created: datetime = NOV - timedelta(days=30),
    retired: datetime | None = None,
    **fields: Any,
) -> Target:
    row = Target(
        name=name,
        kind=fields.pop("kind", "tcp"),
        url=fields.pop("url", "tcp://h:22"),
        interval_s=30.0,
        timeout_s=5.0,
        confirmations=2,
        settings={},
        labels={},
        source="config",
        created_at=created,
        retired_at=retired,
        **fields,
    )
    session.add(row)
    session.flush()
    return row


def observed(session: Session, row: Target, start: datetime, end: datetime) -> None:
    session.add(ObservedWindow(target_id=row.id, start=start, end=end, source="probe"))
    session.flush()


def outage(
    session: Session,
    row: Target,
    start: datetime,
    end: datetime | None,
    series: str = "reachable",
    cause: str | None = None,
) -> None:
    session.add(
        Outage(
            target_id=row.id,
            series=series,
            start=start,
            end=end,
            cause=cause,
            source="probe",
            detail={},
        )
    )
    session.flush()


def heartbeat(
    session: Session, row: Target, at: datetime, throughput: float | None, **payload: Any
) -> None:
    session.add(Heartbeat(target_id=row.id, at=at, throughput=throughput, payload=payload))
    session.flush()


def provider(session: Session, slug: str) -> Provider:
    row = Provider(slug=slug, name=slug.upper(), regions=[], components=[], source="config")
    session.add(row)
    session.flush()
    return row


def incident(
    session: Session,
    owner: Provider,
    source_id: str,
    started: datetime | None,
    resolved: datetime | None = None,
    **fields: Any,
) -> None:
    session.add(
        Incident(
            provider_id=owner.id,
            source_id=source_id,
            title=fields.pop("title", f"incident {source_id}"),
            status="resolved" if resolved else "investigating",
            impact=fields.pop("impact", "major"),
            is_maintenance=fields.pop("is_maintenance", False),
            started_at=started,
            resolved_at=resolved,
            first_seen_at=started or NOV,
            last_seen_at=resolved or DEC,
            components=[],
            regions=fields.pop("regions", []),
            relevant=fields.pop("relevant", True),
            content_hash=source_id,
            **fields,
        )
    )
    session.flush()


def window(session: Session, start: datetime, end: datetime, **scope: Any) -> None:
    session.add(
        MaintenanceWindow(
            name=scope.pop("name", f"window at {start:%Y-%m-%d %H:%M}"),
            starts_at=start,
            ends_at=end,
            targets=scope.pop("targets", []),
            source="api",
            **scope,
        )
    )
    session.flush()
