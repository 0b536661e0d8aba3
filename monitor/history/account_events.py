"""Account events as every surface reads them: each with the targets it is about.

An event is scoped to the targets whose ``external_id`` (a discovered instance's id, or a
configured target's ``instance_id``) is among the ids it names, compared without case (Azure's
resource ids are case-insensitive), and to the target it was reported for (an agent's box); an
event naming neither is scoped to its provider's targets in its regions (a comma-separated list,
compared without case or spaces), and one naming none of these (a billing notice to the whole
account, a ``Global`` Service Health event) to no target.
Its window is ``starts_at`` to ``ends_at`` (open while it has no end); an event with no start
spans from when slamon first saw it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from sqlalchemy import or_, select
from sqlalchemy.orm import Session

from monitor.db.models import AccountEventRecord, Target
from monitor.sla.intervals import Span

Scope = Literal["targets", "region", "account"]
GLOBAL_REGIONS = frozenset({"", "global"})


@dataclass(frozen=True, slots=True)
class AccountEventView:
    """One stored account event, with ``targets``: the names of the targets it is about."""

    id: int
    provider: str
    source: str
    key: str
    kind: str
    status: str
    starts_at: datetime | None
    ends_at: datetime | None
    updated_at: datetime | None
    region: str | None
    service: str | None
    title: str
    detail: str
    entities: tuple[str, ...]
    raw_type: str
    reported_for: str | None
    via: str
    readings: int
    accepted: bool
    first_seen_at: datetime
    last_seen_at: datetime
    scope: Scope
    targets: tuple[str, ...]

    @property
    def start(self) -> datetime:
        """Where its window begins: its start, else when slamon first saw it."""
        return self.starts_at or self.first_seen_at

    def window(self, until: datetime) -> Span | None:
        """Its window, an open one ending at ``until``; None when empty."""
        end = self.ends_at or until
        return Span(self.start, end) if end > self.start else None

    def overlaps(self, span: Span) -> bool:
        return self.start < span.end and (self.ends_at is None or self.ends_at > span.start)


@dataclass(frozen=True, slots=True)
class _TargetRow:
    name: str
    external_id: str | None
    provider: str | None
    region: str | None


def events(
    session: Session,
    *,
    target: str | None = None,
    period: Span | None = None,
    kinds: Iterable[str] = (),
    statuses: Iterable[str] = (),
    limit: int | None = None,
    ids: Iterable[int] | None = None,
) -> list[AccountEventView]:
    """Stored account events, newest start first: those whose window overlaps ``period``,
    of ``kinds`` and ``statuses`` (any when empty), about ``target`` when given, among the
    stored ``ids`` when given."""
    query = select(AccountEventRecord)
    if ids is not None:
        query = query.where(AccountEventRecord.id.in_(list(ids)))
    if period is not None:
        start = AccountEventRecord.starts_at
        query = query.where(
            or_(
                start < period.end,
                start.is_(None) & (AccountEventRecord.first_seen_at < period.end),
            ),
            or_(AccountEventRecord.ends_at.is_(None), AccountEventRecord.ends_at > period.start),
        )
    if kinds := list(kinds):
        query = query.where(AccountEventRecord.kind.in_(kinds))
    if statuses := list(statuses):
        query = query.where(AccountEventRecord.status.in_(statuses))
    rows = list(session.scalars(query))
    targets = _targets(session)
    views = [_view(row, targets) for row in rows]
    if target is not None:
        views = [view for view in views if target in view.targets]
    views.sort(key=lambda v: (v.start, v.id), reverse=True)
    return views[:limit] if limit is not None else views


def by_target(views: Sequence[AccountEventView]) -> dict[str, list[AccountEventView]]:
    """``views`` grouped by each target they are about."""
    grouped: dict[str, list[AccountEventView]] = {}
    for view in views:
        for name in view.targets:
            grouped.setdefault(name, []).append(view)
    return grouped


def scope(
    provider: str,
    entities: Sequence[str],
    region: str | None,
    targets: Sequence[_TargetRow],
    reported_for: str | None = None,
) -> tuple[Scope, tuple[str, ...]]:
    """Which targets an event is about (see the module's docstring), and how it was scoped."""
    if entities or reported_for:
        wanted = {entity.lower() for entity in entities}
        named = {t.name for t in targets if t.external_id and t.external_id.lower() in wanted}
        if reported_for:
            named.add(reported_for)
        return "targets", tuple(sorted(named))
    regions = {_region_name(part) for part in (region or "").split(",")} - GLOBAL_REGIONS
    if regions:
        regional = [
            t.name
            for t in targets
            if t.provider == provider and t.region and _region_name(t.region) in regions
        ]
        return "region", tuple(sorted(regional))
    return "account", ()


def _region_name(name: str) -> str:
    """A region's name as compared: without case or spaces, so Azure's ``East US`` (as Service
    Health writes it) is the ``eastus`` a target is configured with."""
    return "".join(name.split()).lower()


def _targets(session: Session) -> list[_TargetRow]:
    query = select(Target.name, Target.external_id, Target.provider, Target.region)
    return [_TargetRow(*row) for row in session.execute(query)]


def _view(row: AccountEventRecord, targets: Sequence[_TargetRow]) -> AccountEventView:
    entities = tuple(row.entities or ())
    how, names = scope(row.provider, entities, row.region, targets, row.target)
    return AccountEventView(
        id=row.id,
        provider=row.provider,
        source=row.source,
        key=row.key,
        kind=row.kind,
        status=row.status,
        starts_at=row.starts_at,
        ends_at=row.ends_at,
        updated_at=row.updated_at,
        region=row.region,
        service=row.service,
        title=row.title,
        detail=row.detail,
        entities=entities,
        raw_type=row.raw_type,
        reported_for=row.target,
        via=row.via,
        readings=row.readings,
        accepted=row.accepted,
        first_seen_at=row.first_seen_at,
        last_seen_at=row.last_seen_at,
        scope=how,
        targets=names,
    )
