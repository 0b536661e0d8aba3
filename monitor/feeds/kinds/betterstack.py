"""Better Stack (Better Uptime) status page ``index.json``, a JSON:API document.

``data`` is the status page (company_name, custom_domain, subdomain, aggregate_state,
updated_at); ``included`` holds ``status_page_section``, ``status_page_resource`` (public_name,
per-day status_history), ``status_report`` and ``status_update`` objects. Each status report
becomes one incident: ``report_type`` ``maintenance`` makes a maintenance (``manual`` and
``automatic`` reports are incidents); its status updates (found through
``relationships.status_updates`` or their ``status_report_id``) become the updates, oldest
first; the public names of its affected resources become the components (ids the document does
not include are skipped). Daily resource history is not turned into incidents.

Better Stack has no investigating/identified words. A report is closed when its
``aggregate_state`` is ``resolved`` or ``operational``, or when every affected resource is
``resolved``; it then ends at ``ends_at`` or its last update. An open maintenance is
``scheduled`` until ``starts_at`` and ``in_progress`` after, judged against the page's own
``updated_at`` so that parsing stays pure. Impact is the worst resource state the report or
its updates name: ``downtime`` -> major, ``degraded`` -> minor.

Default provider: the company name as a slug ("Together AI" -> ``together-ai``), else the
subdomain, else ``betterstack``.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from typing import Any

from monitor.errors import FeedParseError
from monitor.feeds.model import Impact, Incident, IncidentUpdate, Status
from monitor.feeds.parsing.documents import expect, listed_dicts, load_json
from monitor.feeds.parsing.text import page_slug, plain_text, unique
from monitor.feeds.parsing.times import read_time
from monitor.feeds.parsing.values import as_dict, dicts_in, id_text, nonblank

KIND = "betterstack"

_CLOSED_STATES = frozenset({"resolved", "operational"})
_IMPACT_RANK: dict[str, tuple[int, Impact]] = {
    "degraded": (1, "minor"),
    "downtime": (2, "major"),
}


class _Document:
    """The parts of one index.json a report needs: the page and included objects by type."""

    def __init__(self, data: dict[str, Any], included: list[dict[str, Any]]) -> None:
        self.page = as_dict(data.get("attributes"))
        self.page_updated_at = read_time(self.page.get("updated_at"))
        self.base_url = _base_url(self.page)
        self.included: dict[tuple[str, str], dict[str, Any]] = {}
        for item in included:
            key = (nonblank(item.get("type")) or "", id_text(item.get("id")) or "")
            self.included.setdefault(key, item)

    def of_type(self, kind: str) -> Iterator[tuple[str, dict[str, Any]]]:
        """(id, attributes) of every included object of one type, in document order."""
        for (item_type, item_id), item in self.included.items():
            if item_type == kind and item_id:
                yield item_id, as_dict(item.get("attributes"))

    def resource_name(self, resource_id: object) -> str | None:
        resource = self.included.get(("status_page_resource", id_text(resource_id) or ""), {})
        return nonblank(as_dict(resource.get("attributes")).get("public_name"))


def parse(raw: bytes, provider: str | None = None) -> list[Incident]:
    """Normalized incidents and maintenances from the status reports of one index.json.

    Raises ``FeedParseError`` when the bytes are not a Better Stack JSON:API document at all.
    """
    doc = expect(load_json(raw, KIND), dict, KIND, "the document")
    if not isinstance(doc.get("data"), dict):
        raise FeedParseError(KIND, "no JSON:API 'data' object")
    document = _Document(doc["data"], listed_dicts(doc, "included", KIND))
    slug = provider or _default_provider(document.page)
    return [_report(document, rid, attrs, slug) for rid, attrs in document.of_type("status_report")]


def _default_provider(page: dict[str, Any]) -> str:
    return page_slug(page.get("company_name") or page.get("subdomain"), KIND)


def _base_url(page: dict[str, Any]) -> str | None:
    domain = nonblank(page.get("custom_domain"))
    if domain:
        return f"https://{domain}"
    subdomain = nonblank(page.get("subdomain"))
    return f"https://{subdomain}.betteruptime.com" if subdomain else None


def _report(document: _Document, report_id: str, attrs: dict[str, Any], slug: str) -> Incident:
    maintenance = nonblank(attrs.get("report_type")) == "maintenance"
    raw_updates = _report_updates(document, report_id)
    closed = _is_closed(attrs)
    starts_at = read_time(attrs.get("starts_at"))
    updates = _updates(raw_updates, maintenance, closed, starts_at)

    return Incident(
        provider=slug,
        source_id=report_id,
        title=nonblank(attrs.get("title")) or "",
        status=_status(document, maintenance, closed, starts_at),
        impact="maintenance" if maintenance else _impact(attrs, raw_updates),
        is_maintenance=maintenance,
        started_at=starts_at or (updates[0].at if updates else None),
        resolved_at=_resolved_at(attrs, updates) if closed else None,
        url=_report_url(document.base_url, report_id, maintenance),
        components=_components(document, attrs, raw_updates),
        updates=updates,
    )


def _report_updates(document: _Document, report_id: str) -> list[dict[str, Any]]:
    """The report's status_update attributes, linked either way JSON:API allows."""
    report = document.included.get(("status_report", report_id), {})
    linked = as_dict(as_dict(report.get("relationships")).get("status_updates")).get("data")
    ids = [id_text(link.get("id")) for link in dicts_in(linked)]
    found = {uid: attrs for uid, attrs in document.of_type("status_update") if uid in ids}
    for uid, attrs in document.of_type("status_update"):
        if id_text(attrs.get("status_report_id")) == report_id:
            found.setdefault(uid, attrs)
    return list(found.values())


def _is_closed(attrs: dict[str, Any]) -> bool:
    state = (nonblank(attrs.get("aggregate_state")) or "").lower()
    states = _resource_states(attrs)
    return state in _CLOSED_STATES or (bool(states) and all(s == "resolved" for s in states))


def _resource_states(attrs: dict[str, Any]) -> list[str]:
    """The lower-cased status of each affected resource ("" when it has none)."""
    return [
        (nonblank(r.get("status")) or "").lower() for r in dicts_in(attrs.get("affected_resources"))
    ]


def _status(
    document: _Document, maintenance: bool, closed: bool, starts_at: datetime | None
) -> Status:
    if not maintenance:
        return "resolved" if closed else "investigating"
    if closed:
        return "completed"
    now = document.page_updated_at
    return "scheduled" if starts_at and now and now < starts_at else "in_progress"


def _updates(
    raw_updates: list[dict[str, Any]], maintenance: bool, closed: bool, starts_at: datetime | None
) -> tuple[IncidentUpdate, ...]:
    """Updates oldest first, each with the state the report was in when it was posted."""
    timed = [(at, raw) for raw in raw_updates if (at := read_time(raw.get("published_at")))]
    timed.sort(key=lambda pair: pair[0])
    updates: list[IncidentUpdate] = []
    for index, (at, raw) in enumerate(timed):
        last = index == len(timed) - 1
        status = _update_status(raw, maintenance, closed and last, at, starts_at)
        updates.append(IncidentUpdate(at=at, status=status, body=plain_text(raw.get("message"))))
    return tuple(updates)


def _update_status(
    raw: dict[str, Any],
    maintenance: bool,
    closing: bool,
    at: datetime,
    starts_at: datetime | None,
) -> Status:
    if maintenance:
        if closing:
            return "completed"
        return "scheduled" if starts_at and at < starts_at else "in_progress"
    if closing or _is_closed({"affected_resources": raw.get("affected_resources")}):
        return "resolved"
    return "investigating"


def _resolved_at(attrs: dict[str, Any], updates: tuple[IncidentUpdate, ...]) -> datetime | None:
    return read_time(attrs.get("ends_at")) or (updates[-1].at if updates else None)


def _impact(attrs: dict[str, Any], raw_updates: list[dict[str, Any]]) -> Impact:
    """The worst resource state the report or any of its updates names."""
    ranked = [
        _IMPACT_RANK.get(state, (0, "none"))
        for source in [attrs, *raw_updates]
        for state in _resource_states(source)
    ]
    return max(ranked, default=(0, "none"))[1]


def _components(
    document: _Document, attrs: dict[str, Any], raw_updates: list[dict[str, Any]]
) -> tuple[str, ...]:
    names = [
        document.resource_name(r.get("status_page_resource_id"))
        for source in [attrs, *raw_updates]
        for r in dicts_in(source.get("affected_resources"))
    ]
    return unique(n for n in names if n)


def _report_url(base_url: str | None, report_id: str, maintenance: bool) -> str | None:
    if base_url is None:
        return None
    return f"{base_url}/{'maintenance' if maintenance else 'incident'}/{report_id}"
