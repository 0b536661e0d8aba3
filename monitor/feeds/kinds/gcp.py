"""Google Cloud status dashboard: ``https://status.cloud.google.com/incidents.json``.

The document is one unpaged array of every incident (over 1 MB), decoded once; the work per
incident is linear in its size. ``products.json`` (an object holding ``products``) names no
incidents and gives ``[]``.

Mapping: ``source_id`` is the incident ``id``; the title is the first line of ``external_desc``;
the incident runs from ``begin`` to ``end`` and is resolved once ``end`` is set (or, should
``end`` be missing, once the most recent update says ``AVAILABLE``). Update states are
``SERVICE_INFORMATION``, ``SERVICE_DISRUPTION`` and ``SERVICE_OUTAGE`` (all read as
"investigating": GCP states no finer progress) and ``AVAILABLE`` ("resolved"; an ``AVAILABLE``
update carrying an incident report reads "postmortem"). Impact comes from ``severity``
(low/medium/high) or else ``status_impact``. Regions are the location ids of
``currently_affected_locations``, ``previously_affected_locations`` and every update's
``affected_locations`` (resolved incidents move theirs to the "previously" list). Components are
the ``affected_products`` titles ("Multiple Products" incidents list several). Update texts are
markdown; bold and heading marks are dropped and links become "text (url)".

Default provider: ``gcp``.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from monitor.errors import FeedParseError
from monitor.feeds.model import Impact, Incident, IncidentUpdate, Status, stable_id
from monitor.feeds.parsing.documents import first_by_source_id, load_json
from monitor.feeds.parsing.regions import gcp_location_in_title, normalize_gcp_location
from monitor.feeds.parsing.status import normalize_impact
from monitor.feeds.parsing.text import plain_text, unique
from monitor.feeds.parsing.times import first_time, read_time
from monitor.feeds.parsing.values import as_dict, dicts_in, nonblank

KIND = "gcp"
DEFAULT_PROVIDER = "gcp"
BASE_URL = "https://status.cloud.google.com/"

_STATUS_IMPACT: dict[str, Impact] = {
    "SERVICE_INFORMATION": "minor",
    "SERVICE_DISRUPTION": "major",
    "SERVICE_OUTAGE": "critical",
}
_LOCATION_LISTS = ("currently_affected_locations", "previously_affected_locations")
_REPORT = re.compile(r"(?:mini\s+)?incident\s+report\b", re.IGNORECASE)


def parse(raw: bytes, provider: str | None = None) -> list[Incident]:
    """Normalized incidents of one ``incidents.json`` document, in document order.

    Raises ``FeedParseError`` when the bytes are not a JSON array of incidents (a
    ``products.json`` object is accepted and holds none).
    """
    doc = load_json(raw, KIND)
    if isinstance(doc, dict) and "products" in doc:
        return []
    if not isinstance(doc, list):
        raise FeedParseError(KIND, f"the document is {type(doc).__name__}, not an incident list")
    slug = provider or DEFAULT_PROVIDER
    return first_by_source_id(_incident(item, slug) for item in dicts_in(doc))


def _incident(item: dict[str, Any], provider: str) -> Incident | None:
    title = _title(item)
    item_id = nonblank(item.get("id")) or nonblank(item.get("number"))
    if not title and item_id is None:
        return None  # neither a description nor an id: not an incident
    updates = _updates(item)
    resolved_at = _resolved_at(item, updates)
    url = _url(item, item_id)
    return Incident(
        provider=provider,
        source_id=item_id or stable_id(url, title),
        title=title,
        status="resolved" if resolved_at is not None else "investigating",
        impact=_impact(item),
        is_maintenance=False,
        started_at=first_time(item, "begin", "created") or (updates[0].at if updates else None),
        resolved_at=resolved_at,
        url=url,
        components=_components(item),
        regions=_regions(item),
        updates=updates,
    )


def _title(item: dict[str, Any]) -> str:
    """The first non-blank line of ``external_desc``, else the service name."""
    for line in (nonblank(item.get("external_desc")) or "").splitlines():
        if line.strip():
            return " ".join(line.split())
    return nonblank(item.get("service_name")) or ""


def _url(item: dict[str, Any], item_id: str | None) -> str | None:
    uri = nonblank(item.get("uri")) or (f"incidents/{item_id}" if item_id else None)
    if uri is None or uri.startswith(("http://", "https://")):
        return uri
    return BASE_URL + uri.lstrip("/")


def _updates(item: dict[str, Any]) -> tuple[IncidentUpdate, ...]:
    """Updates oldest first (the feed lists them newest first)."""
    updates = [u for u in map(_update, dicts_in(item.get("updates"))) if u is not None]
    updates.reverse()  # reversing before the stable sort keeps same-second updates in order
    updates.sort(key=lambda update: update.at)
    return tuple(updates)


def _update(raw: dict[str, Any]) -> IncidentUpdate | None:
    at = first_time(raw, "when", "created")
    if at is None:
        return None
    body = markdown_to_text(raw.get("text"))
    return IncidentUpdate(at=at, status=_update_status(raw.get("status"), body), body=body)


def _update_status(word: object, body: str) -> Status:
    if word != "AVAILABLE":
        return "investigating"
    return "postmortem" if _REPORT.match(body) else "resolved"


def _resolved_at(item: dict[str, Any], updates: tuple[IncidentUpdate, ...]) -> datetime | None:
    """``end``; an incident whose latest word is AVAILABLE but lacks ``end`` closed then."""
    end = read_time(item.get("end"))
    if end is not None:
        return end
    latest = as_dict(item.get("most_recent_update"))
    if latest.get("status") == "AVAILABLE":
        return first_time(latest, "when", "created") or (updates[-1].at if updates else None)
    return None


def _impact(item: dict[str, Any]) -> Impact:
    by_status = _STATUS_IMPACT.get(nonblank(item.get("status_impact")) or "", "minor")
    return normalize_impact(nonblank(item.get("severity")), default=by_status)


def _components(item: dict[str, Any]) -> tuple[str, ...]:
    titles = [nonblank(p.get("title")) for p in dicts_in(item.get("affected_products"))]
    if not any(titles) and item.get("service_key") != "zall":  # "zall": Multiple Products
        titles = [nonblank(item.get("service_name"))]
    return unique(t for t in titles if t)


def _regions(item: dict[str, Any]) -> tuple[str, ...]:
    """Location ids of the incident's location lists, then of its updates, oldest first."""
    lists = [item.get(key) for key in _LOCATION_LISTS]
    updates = reversed(dicts_in(item.get("updates")))
    lists += [update.get("affected_locations") for update in updates]
    codes = (_location_code(location) for value in lists for location in dicts_in(value))
    return unique(code for code in codes if code)


def _location_code(location: dict[str, Any]) -> str:
    location_id = nonblank(location.get("id"))
    if location_id:
        return normalize_gcp_location(location_id)
    return gcp_location_in_title(nonblank(location.get("title")) or "")


_BOLD = re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1")
_HEADING = re.compile(r"^[ \t]{0,3}#{1,6}[ \t]+", re.MULTILINE)
_LINK = re.compile(r"\[([^\]\n]+)\]\((https?://[^)\s]+)\)")


def markdown_to_text(value: object) -> str:
    """The plain text of GCP's markdown-ish update text (bold, headings and links undone)."""
    if not isinstance(value, str):
        return ""
    text = _HEADING.sub("", value)
    text = _BOLD.sub(r"\2", text)
    text = _LINK.sub(lambda m: m.group(1) if m.group(1) == m.group(2) else f"{m[1]} ({m[2]})", text)
    return plain_text(text)
