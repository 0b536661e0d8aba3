"""Atlassian Statuspage v2 JSON: one parser for every public ``/api/v2/*.json`` document.

Accepted documents: ``summary.json`` (page, components, incidents, scheduled_maintenances,
status), ``incidents.json`` and ``incidents/unresolved.json`` (incidents),
``scheduled-maintenances.json`` with ``/upcoming`` and ``/active`` (scheduled_maintenances), and
``components.json`` / ``status.json``, which hold no incidents and give ``[]``.

Incidents and scheduled maintenances both come out; an item is a maintenance when it is listed
under ``scheduled_maintenances``, has a ``scheduled_for`` time or has impact ``maintenance``
(``incidents.json`` lists maintenances too). A maintenance starts at ``scheduled_for`` and, once
completed, ends at ``resolved_at`` or else ``scheduled_until``. Updates come from
``incident_updates``, timed by ``display_at`` (the time the provider chose to show) or else
``created_at``. Statuspage names no regions, so ``regions`` stays empty: the caller matches its
regions against component names.

Default provider: the page name as a slug without its "Status" words ("Cloudflare Status" ->
``cloudflare``, see ``parsing.text.page_slug``), else ``statuspage``.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from typing import Any

from monitor.errors import FeedParseError
from monitor.feeds.model import Incident, IncidentUpdate, Status, stable_id
from monitor.feeds.parsing.documents import expect, first_by_source_id, listed_dicts, load_json
from monitor.feeds.parsing.status import (
    as_kind,
    closed_status,
    normalize_impact,
    normalize_status,
    opening_status,
)
from monitor.feeds.parsing.text import page_slug, plain_text, unique
from monitor.feeds.parsing.times import first_time, read_time
from monitor.feeds.parsing.values import as_dict, dicts_in, id_text, nonblank
from monitor.sla.response import CLOSED_STATUSES

KIND = "statuspage"

_PAGE_KEYS = frozenset({"page", "incidents", "scheduled_maintenances", "components", "status"})
_LISTS = (("incidents", False), ("scheduled_maintenances", True))
# Older incidents lack started_at; a maintenance's started_at is when it was announced.
_INCIDENT_START_KEYS = ("started_at", "created_at")
_MAINTENANCE_START_KEYS = ("scheduled_for", "started_at", "created_at")


def parse(raw: bytes, provider: str | None = None) -> list[Incident]:
    """Normalized incidents and maintenances of one Statuspage v2 document, in document order.

    Raises ``FeedParseError`` when the bytes are not a Statuspage JSON object at all.
    """
    doc = expect(load_json(raw, KIND), dict, KIND, "the document")
    if not _PAGE_KEYS & doc.keys():
        raise FeedParseError(KIND, "no Statuspage keys (page, incidents, components...)")
    page = as_dict(doc.get("page"))
    slug = provider or page_slug(page.get("name"), KIND)
    page_url = nonblank(page.get("url"))
    return first_by_source_id(
        _incident(item, listed_as_maintenance, slug, page_url)
        for item, listed_as_maintenance in _items(doc)
    )


def _items(doc: dict[str, Any]) -> Iterator[tuple[dict[str, Any], bool]]:
    for key, is_maintenance in _LISTS:
        for item in listed_dicts(doc, key, KIND):
            yield item, is_maintenance


def _incident(
    item: dict[str, Any], listed_as_maintenance: bool, provider: str, page_url: str | None
) -> Incident | None:
    title = nonblank(item.get("name")) or ""
    item_id = id_text(item.get("id"))
    if not title and item_id is None:
        return None  # neither a name nor an id: not an incident
    maintenance = listed_as_maintenance or _looks_like_maintenance(item)
    status = _item_status(item, maintenance)
    updates = _updates(item, maintenance)
    if status is None:
        status = updates[-1].status if updates else opening_status(maintenance)
    url = nonblank(item.get("shortlink")) or _incident_url(page_url, item_id)
    return Incident(
        provider=provider,
        source_id=item_id or stable_id(url, title),
        title=title,
        status=status,
        impact="maintenance" if maintenance else normalize_impact(nonblank(item.get("impact"))),
        is_maintenance=maintenance,
        started_at=_started_at(item, maintenance, updates),
        resolved_at=_resolved_at(item, status, maintenance, updates),
        url=url,
        components=_components(item),
        updates=updates,
    )


def _looks_like_maintenance(item: dict[str, Any]) -> bool:
    return item.get("scheduled_for") is not None or item.get("impact") == "maintenance"


def _fit_status(word: object, maintenance: bool) -> Status | None:
    """The normalized status in the vocabulary of the item's kind; None for unknown words.

    Unlike ``as_kind`` (and the history feeds), an incident reads a stray "in progress" as
    still "investigating", not "identified".
    """
    status = normalize_status(nonblank(word))
    if status is None:
        return None
    if status == "in_progress" and not maintenance:
        return "investigating"
    return as_kind(status, maintenance)


def _item_status(item: dict[str, Any], maintenance: bool) -> Status | None:
    status = _fit_status(item.get("status"), maintenance)
    if status is None and read_time(item.get("resolved_at")) is not None:
        return closed_status(maintenance)
    return status


def _updates(item: dict[str, Any], maintenance: bool) -> tuple[IncidentUpdate, ...]:
    """Updates oldest first; an update without a known status word carries the previous on."""
    timed = [u for u in (_timed_update(raw) for raw in dicts_in(item.get("incident_updates"))) if u]
    timed.reverse()  # the feed lists newest first; reversing keeps ties in posting order
    timed.sort(key=lambda pair: pair[0])
    current: Status = opening_status(maintenance)
    updates: list[IncidentUpdate] = []
    for at, raw in timed:
        current = _fit_status(raw.get("status"), maintenance) or current
        updates.append(IncidentUpdate(at=at, status=current, body=plain_text(raw.get("body"))))
    return tuple(updates)


def _timed_update(raw: dict[str, Any]) -> tuple[datetime, dict[str, Any]] | None:
    at = first_time(raw, "display_at", "created_at")
    return (at, raw) if at is not None else None


def _started_at(
    item: dict[str, Any], maintenance: bool, updates: tuple[IncidentUpdate, ...]
) -> datetime | None:
    keys = _MAINTENANCE_START_KEYS if maintenance else _INCIDENT_START_KEYS
    return first_time(item, *keys) or (updates[0].at if updates else None)


def _resolved_at(
    item: dict[str, Any], status: Status, maintenance: bool, updates: tuple[IncidentUpdate, ...]
) -> datetime | None:
    """When a closed item ended; None while it is open."""
    if status not in CLOSED_STATUSES:
        return None
    resolved = read_time(item.get("resolved_at"))
    if resolved is None and maintenance:
        resolved = read_time(item.get("scheduled_until"))
    if resolved is None:
        closing = [u.at for u in updates if u.status in CLOSED_STATUSES]
        resolved = closing[0] if closing else (updates[-1].at if updates else None)
    return resolved


def _components(item: dict[str, Any]) -> tuple[str, ...]:
    """Component names; older incidents lack ``components``, so fall back to the names their
    updates list under ``affected_components`` ("Group - Component")."""
    names = [nonblank(c.get("name")) for c in dicts_in(item.get("components"))]
    if not any(names):
        names = [
            nonblank(affected.get("name"))
            for update in reversed(list(dicts_in(item.get("incident_updates"))))
            for affected in dicts_in(update.get("affected_components"))
        ]
    return unique(n for n in names if n)


def _incident_url(page_url: str | None, item_id: str | None) -> str | None:
    if not page_url or not item_id:
        return None
    return f"{page_url.rstrip('/')}/incidents/{item_id}"
