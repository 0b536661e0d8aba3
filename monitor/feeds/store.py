"""Storing what the feeds say: providers and feeds from the catalog, incidents as an idempotent
upsert (a changed incident is updated in place, its updates are appended once)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from monitor.db.dialect import insert_ignoring_conflicts
from monitor.db.models import Feed, Provider, Target
from monitor.db.models import Incident as IncidentRow
from monitor.db.models import IncidentUpdate as UpdateRow
from monitor.events import emitting
from monitor.feeds.catalog import ProviderSpec
from monitor.feeds.model import Incident
from monitor.feeds.relevance import Interest, is_relevant
from monitor.sla.response import CLOSED_STATUSES, lifecycle


@dataclass(frozen=True, slots=True)
class StoreCounts:
    new: int = 0
    changed: int = 0
    updates_added: int = 0
    closed_by_absence: int = 0

    @property
    def anything(self) -> bool:
        return bool(self.new or self.changed or self.updates_added or self.closed_by_absence)


def sync_providers(session: Session, specs: Sequence[ProviderSpec]) -> None:
    """Make the providers and feeds tables match the catalog + config. Feeds no longer listed are
    disabled, not deleted: their incidents keep pointing at them.

    Schedulers that start together (two workers with beat, each polling the feeds at once) may
    sync at the same moment: new rows are inserted ignoring conflicts first, so the second one
    waits for the first's and then updates them, instead of failing on the unique index."""
    rows = [{"slug": s.slug, "name": s.name, "source": s.source} for s in specs]
    insert_ignoring_conflicts(session, Provider, rows, ["slug"])
    existing = {p.slug: p for p in session.scalars(select(Provider))}
    feeds = [
        {"provider_id": existing[spec.slug].id, "url": feed.url, "kind": feed.kind}
        for spec in specs
        for feed in spec.feeds
    ]
    insert_ignoring_conflicts(session, Feed, feeds, ["provider_id", "url"])
    for spec in specs:
        row = existing.get(spec.slug) or Provider(slug=spec.slug)
        row.name, row.sla_policy, row.source = spec.name, spec.sla, spec.source
        row.regions, row.components = list(spec.regions), list(spec.components)
        session.add(row)
        session.flush()
        _sync_feeds(session, row.id, spec)


def _sync_feeds(session: Session, provider_id: int, spec: ProviderSpec) -> None:
    feeds = {f.url: f for f in session.scalars(select(Feed).where(Feed.provider_id == provider_id))}
    wanted = {f.url: f.kind for f in spec.feeds}
    for url, kind in wanted.items():
        row = feeds.get(url) or Feed(provider_id=provider_id, url=url)
        if row.kind != kind:  # a new kind means the old validators mean nothing
            row.etag = row.last_modified = row.content_hash = None
        row.kind, row.enabled = kind, True
        session.add(row)
    for url, row in feeds.items():
        if url not in wanted:
            row.enabled = False


def interest_of(session: Session, provider: Provider) -> Interest:
    """The regions/components configured for ``provider`` plus the regions of its live targets."""
    target_regions = session.scalars(
        select(Target.region).where(
            Target.provider == provider.slug,
            Target.retired_at.is_(None),
            Target.region.is_not(None),
        )
    )
    regions = [*provider.regions, *(r for r in target_regions if r)]
    return Interest.of(regions, provider.components)


def incident_hash(incident: Incident) -> str:
    """A fingerprint of everything the feed said about an incident."""
    encoded = json.dumps(incident.to_json(), sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(encoded.encode("utf-8")).hexdigest()


def store_incidents(
    session: Session,
    provider: Provider,
    feed_id: int | None,
    incidents: Sequence[Incident],
    *,
    seen_at: datetime,
    snapshot: bool = False,
) -> StoreCounts:
    """Upsert ``incidents``; with ``snapshot``, close this feed's open incidents that are gone.

    Idempotent: storing the same incidents again changes nothing but ``last_seen_at``.
    """
    interest = interest_of(session, provider)
    by_id = _dedupe(incidents)
    rows = _existing(session, provider.id, by_id)
    new = changed = added = 0
    for source_id, incident in by_id.items():
        row = rows.get(source_id)
        digest = incident_hash(incident)
        if row is None:
            row = IncidentRow(provider_id=provider.id, source_id=source_id, first_seen_at=seen_at)
            session.add(row)
            new += 1
        elif row.content_hash == digest:
            row.last_seen_at = seen_at
            continue
        else:
            changed += 1
        was_open = row.id is not None and _is_open(row)
        _apply(row, incident, digest, feed_id, seen_at, is_relevant(incident, interest))
        _tell(session, provider.slug, row, was_open)
        session.flush()
        added += _append_updates(session, row.id, incident)
    closed = _close_absent(session, provider.slug, feed_id, set(by_id), seen_at) if snapshot else 0
    return StoreCounts(new, changed, added, closed)


def _is_open(row: IncidentRow) -> bool:
    return row.resolved_at is None and row.status not in CLOSED_STATUSES


def _tell(session: Session, provider: str, row: IncidentRow, was_open: bool) -> None:
    """An incident that opened (or reopened) or resolved is a console event; one first seen
    already resolved is history, and is not."""
    if _is_open(row) and not was_open:
        emitting.incident_opened(
            session, provider, row.title, maintenance=row.is_maintenance, relevant=row.relevant
        )
    elif was_open and not _is_open(row):
        end = row.resolved_at or row.last_seen_at
        lasted = (end - row.started_at).total_seconds() if end and row.started_at else None
        emitting.incident_resolved(session, provider, row.title, lasted)


def _dedupe(incidents: Iterable[Incident]) -> dict[str, Incident]:
    """One incident per source id (a feed listing one twice: the later entry wins)."""
    return {i.source_id: i for i in incidents}


def _existing(
    session: Session, provider_id: int, by_id: dict[str, Incident]
) -> dict[str, IncidentRow]:
    rows: dict[str, IncidentRow] = {}
    ids = list(by_id)
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        query = select(IncidentRow).where(
            IncidentRow.provider_id == provider_id, IncidentRow.source_id.in_(chunk)
        )
        rows.update((r.source_id, r) for r in session.scalars(query))
    return rows


def _apply(
    row: IncidentRow,
    incident: Incident,
    digest: str,
    feed_id: int | None,
    seen_at: datetime,
    relevant: bool,
) -> None:
    life = lifecycle(incident.started_at, incident.resolved_at, incident.updates)
    row.feed_id = feed_id
    row.title, row.status, row.impact = incident.title, incident.status, incident.impact
    row.is_maintenance, row.url = incident.is_maintenance, incident.url
    row.started_at, row.resolved_at = incident.started_at, incident.resolved_at
    # Old updates fall out of RSS windows: an earlier acknowledgement we saw stays the earliest.
    row.acknowledged_at = _earliest(row.acknowledged_at, life.acknowledged_at)
    row.identified_at = _earliest(row.identified_at, life.identified_at)
    row.components, row.regions = list(incident.components), list(incident.regions)
    row.relevant, row.content_hash, row.last_seen_at = relevant, digest, seen_at


def _earliest(a: datetime | None, b: datetime | None) -> datetime | None:
    present = [t for t in (a, b) if t is not None]
    return min(present) if present else None


def _append_updates(session: Session, incident_id: int, incident: Incident) -> int:
    rows = [
        {
            "incident_id": incident_id,
            "at": u.at,
            "status": u.status,
            "body": u.body,
            "body_hash": hashlib.sha256(u.body.encode("utf-8")).hexdigest(),
        }
        for u in incident.updates
    ]
    return insert_ignoring_conflicts(
        session, UpdateRow, rows, ["incident_id", "at", "status", "body_hash"]
    )


def _close_absent(
    session: Session, provider: str, feed_id: int | None, present: set[str], at: datetime
) -> int:
    """A snapshot feed dropped these open incidents: they ended, at the latest, now."""
    if feed_id is None:
        return 0
    open_rows = session.scalars(
        select(IncidentRow).where(
            IncidentRow.feed_id == feed_id,
            IncidentRow.resolved_at.is_(None),
            IncidentRow.status.not_in(CLOSED_STATUSES),
        )
    )
    gone = [row for row in open_rows if row.source_id not in present]
    for row in gone:
        row.status = "completed" if row.is_maintenance else "resolved"
        row.resolved_at = row.last_seen_at = at
        _tell(session, provider, row, was_open=True)
    return len(gone)
