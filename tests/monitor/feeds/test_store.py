"""Storing incidents (monitor/feeds/store.py): an idempotent upsert, updates appended once,
a snapshot's missing incidents closed, on SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from monitor.config import parse_config
from monitor.db.models import Feed, Provider
from monitor.db.models import Incident as IncidentRow
from monitor.db.models import IncidentUpdate as UpdateRow
from monitor.feeds.model import Incident, IncidentUpdate
from monitor.feeds.service import sync_catalog
from monitor.feeds.store import StoreCounts, store_incidents

NOON = datetime(2026, 11, 30, 23, 30, tzinfo=UTC)  # the incident runs into December


def incident(
    source_id: str = "evt-1",
    status: str = "investigating",
    resolved_at: datetime | None = None,
    updates: tuple[IncidentUpdate, ...] = (
        IncidentUpdate(NOON + timedelta(minutes=5), "investigating", "Looking into it."),
    ),
) -> Incident:
    return Incident(
        "aws", source_id, "Increased API error rates", status, "major",  # type: ignore[arg-type]
        False, NOON, resolved_at, None, regions=("us-east-1",), updates=updates,
    )  # fmt: skip


def aws(session: Session) -> Provider:
    sync_catalog(session, parse_config(""))
    return session.scalars(select(Provider).where(Provider.slug == "aws")).one()


def stored(session: Session) -> list[tuple[str, str, datetime | None]]:
    rows = session.execute(
        select(IncidentRow.source_id, IncidentRow.status, IncidentRow.resolved_at).order_by(
            IncidentRow.source_id
        )
    )
    return [(s, status, r.astimezone(UTC) if r else None) for s, status, r in rows]


def test_storing_the_same_document_twice_changes_nothing(session: Session) -> None:
    provider = aws(session)
    first = store_incidents(session, provider, None, [incident()], seen_at=NOON)
    again = store_incidents(session, provider, None, [incident()], seen_at=NOON)
    assert first == StoreCounts(1, 0, 1, 0)
    assert again == StoreCounts(0, 0, 0, 0)
    assert session.scalar(select(func.count()).select_from(UpdateRow)) == 1


def test_a_changed_incident_is_updated_in_place_and_only_new_updates_are_appended(
    session: Session,
) -> None:
    provider = aws(session)
    store_incidents(session, provider, None, [incident()], seen_at=NOON)
    ended = NOON + timedelta(hours=1)
    later = incident(
        status="resolved",
        resolved_at=ended,
        updates=(
            IncidentUpdate(NOON + timedelta(minutes=5), "investigating", "Looking into it."),
            IncidentUpdate(ended, "resolved", "Fixed."),
        ),
    )
    counts = store_incidents(session, provider, None, [later], seen_at=ended)
    assert counts == StoreCounts(0, 1, 1, 0)
    assert stored(session) == [("evt-1", "resolved", ended)]
    assert session.scalar(select(func.count()).select_from(UpdateRow)) == 2


def test_an_incident_missing_from_a_snapshot_is_closed_and_one_from_a_full_list_is_not(
    session: Session,
) -> None:
    provider = aws(session)
    feed = session.scalars(select(Feed.id).where(Feed.provider_id == provider.id)).first()
    both = [incident("a"), incident("b")]
    store_incidents(session, provider, feed, both, seen_at=NOON)
    later = NOON + timedelta(minutes=10)
    store_incidents(session, provider, feed, [incident("a")], seen_at=later)
    assert [row[2] for row in stored(session)] == [None, None]  # not a snapshot: b may be paged
    counts = store_incidents(session, provider, feed, [incident("a")], seen_at=later, snapshot=True)
    assert counts.closed_by_absence == 1
    [a, b] = stored(session)
    assert a[2] is None
    assert b[2] is not None
    assert b[2] <= later
