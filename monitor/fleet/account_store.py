"""Storing account events: one row per provider key, however often and in whatever order the
same event arrives (polled again, pushed twice by EventBridge, an agent's notice retried).

A reading of an event already stored replaces it only when it is newer by the provider's own
``updated_at`` (or carries none, or the stored one carries none): a delivery that arrives out of
order never rolls an event back. Every reading counts (``readings``) and refreshes
``last_seen_at``. The caller's transaction commits: a push is stored whole or not at all.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from monitor.account.model import AccountEvent
from monitor.db.dialect import among, insert_ignoring_conflicts
from monitor.db.models import AccountEventRecord

Via = Literal["poll", "push", "agent"]
Outcome = Literal["new", "updated", "unchanged", "stale"]

# the columns a newer reading replaces (the key, provider and first sight never change)
READ_FIELDS = (
    "source", "kind", "status", "starts_at", "ends_at", "updated_at", "region", "service",
    "title", "detail", "entities", "raw_type",
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class Recorded:
    """What storing one reading did: ``new`` (first sight), ``updated`` (a newer reading
    changed it), ``unchanged`` (the same reading again) or ``stale`` (older than the stored
    one: kept as it was)."""

    provider: str
    key: str
    outcome: Outcome
    id: int


def values(event: AccountEvent) -> dict[str, object]:
    """The stored columns of ``event``'s reading."""
    return {
        "source": event.source,
        "kind": event.kind,
        "status": event.status,
        "starts_at": event.starts_at,
        "ends_at": event.ends_at,
        "updated_at": event.updated_at,
        "region": event.region,
        "service": event.service,
        "title": event.title[:500],
        "detail": event.detail,
        "entities": sorted(set(event.entities)),
        "raw_type": event.raw_type[:200],
    }


def record(
    session: Session,
    events: Sequence[AccountEvent],
    now: datetime,
    via: Via = "poll",
    *,
    accepted: bool = False,
    target: str | None = None,
) -> list[Recorded]:
    """Store ``events`` (a poll's, a push's, an agent's), one outcome per distinct key, in the
    caller's transaction. ``accepted`` marks the events as maintenance the user accepted;
    ``target`` names the target they were reported for (an agent's box)."""
    latest: dict[tuple[str, str], AccountEvent] = {}
    for event in events:  # one delivery may carry one event twice: its newest reading counts
        known = latest.get((event.provider, event.key))
        if known is None or _newer(event.updated_at, known.updated_at):
            latest[(event.provider, event.key)] = event
    if not latest:
        return []
    rows = [
        {
            "provider": e.provider,
            "key": e.key,
            **values(e),
            "via": via,
            "readings": 0,  # counted with the rest below
            "accepted": accepted,
            "target": target,
            "first_seen_at": now,
            "last_seen_at": now,
        }
        for e in latest.values()
    ]
    before = _stored(session, latest)
    insert_ignoring_conflicts(session, AccountEventRecord, rows, ("provider", "key"))
    stored = _stored(session, latest, lock=True)
    outcomes = []
    for (provider, key), event in latest.items():
        row = stored[(provider, key)]
        changes: dict[str, object] = {"readings": row.readings + 1, "last_seen_at": now}
        if (provider, key) not in before:
            outcome: Outcome = "new"
        elif not _newer(event.updated_at, row.updated_at, ties=True):
            outcome = "stale"
        else:
            fresh = values(event)
            differs = {f: v for f, v in fresh.items() if getattr(row, f) != v}
            outcome = "updated" if differs else "unchanged"
            changes |= differs | {"via": via}
        if accepted and not row.accepted:
            changes["accepted"] = True
        if target is not None and row.target != target:
            changes["target"] = target
        session.execute(
            update(AccountEventRecord).where(AccountEventRecord.id == row.id).values(**changes)
        )
        outcomes.append(Recorded(provider, key, outcome, row.id))
    return outcomes


def accept(session: Session, provider: str, key: str) -> bool:
    """Mark one stored event as maintenance the user accepted; False when none is stored."""
    done = session.execute(
        update(AccountEventRecord)
        .where(AccountEventRecord.provider == provider, AccountEventRecord.key == key)
        .values(accepted=True)
    )
    return bool(getattr(done, "rowcount", 0))


def _stored(
    session: Session, wanted: dict[tuple[str, str], AccountEvent], *, lock: bool = False
) -> dict[tuple[str, str], AccountEventRecord]:
    keys = {key for _, key in wanted}
    query = select(AccountEventRecord).where(among(session, AccountEventRecord.key, keys))
    if lock and session.get_bind().dialect.name == "postgresql":
        query = query.with_for_update()
    found = {}
    for row in session.scalars(query.execution_options(populate_existing=True)):
        if (row.provider, row.key) in wanted:
            found[(row.provider, row.key)] = row
    return found


def _newer(candidate: datetime | None, stored: datetime | None, *, ties: bool = False) -> bool:
    """Whether a reading updated at ``candidate`` may replace one updated at ``stored``; a
    reading without a time replaces and is replaced (its provider gives no order)."""
    if candidate is None or stored is None:
        return True
    return candidate >= stored if ties else candidate > stored
