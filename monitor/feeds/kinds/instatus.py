"""instatus.com public JSON: ``/summary.json`` (and ``/v3/summary.json``) and
``/v2/components.json``.

A summary holds ``page`` {name, url, status}, ``activeIncidents`` [{id, name, started, status,
impact, url, updatedAt}] and ``activeMaintenances`` [{id, name, start, status, duration, url,
updatedAt}]; empty arrays may be left out. Older pages call the maintenances
``scheduledMaintenances`` and write times as JavaScript dates ("Sat Jun 11 2022 18:55:50
GMT+0000 (Coordinated Universal Time)"). A components document holds no incidents and gives
``[]``. ``page.status`` is ignored: instatus leaves it ``UP`` even during incidents.

The summary carries no update history and names no components or regions, so ``updates``,
``components`` and ``regions`` are empty unless an item happens to list components. A resolved
incident is taken to have ended at its ``updatedAt``; a completed maintenance at ``start`` plus
``duration`` minutes (else ``updatedAt``).

Default provider: the page name as a slug ("Perplexity" -> ``perplexity``), else ``instatus``.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from typing import Any

from monitor.errors import FeedParseError
from monitor.feeds.model import Impact, Incident, Status, stable_id
from monitor.feeds.parsing.documents import expect, first_by_source_id, listed_dicts, load_json
from monitor.feeds.parsing.status import normalize_impact, normalize_status
from monitor.feeds.parsing.text import page_slug, unique
from monitor.feeds.parsing.times import read_time, to_utc
from monitor.feeds.parsing.values import as_dict, id_text, nonblank

KIND = "instatus"

_SUMMARY_KEYS = frozenset(
    {"page", "activeIncidents", "activeMaintenances", "scheduledMaintenances", "components"}
)
_MAINTENANCE_KEYS = ("activeMaintenances", "scheduledMaintenances")

_IMPACTS: dict[str, Impact] = {
    "OPERATIONAL": "none",
    "DEGRADEDPERFORMANCE": "minor",
    "MINOROUTAGE": "minor",
    "PARTIALOUTAGE": "major",
    "MAJOROUTAGE": "critical",
}
_MAINTENANCE_STATUSES: dict[str, Status] = {
    "NOTSTARTEDYET": "scheduled",
    "INPROGRESS": "in_progress",
    "COMPLETED": "completed",
}
_JS_DATE = re.compile(r"^\w{3} (\w{3} \d{1,2} \d{4} \d{2}:\d{2}:\d{2}) GMT([+-]\d{4})")


def parse(raw: bytes, provider: str | None = None) -> list[Incident]:
    """Normalized active incidents, then maintenances, of one instatus document.

    Raises ``FeedParseError`` when the bytes are not an instatus JSON document at all.
    """
    doc = load_json(raw, KIND)
    if isinstance(doc, list) and all(isinstance(c, dict) for c in doc):
        return []  # the older components.json: a bare array of components
    doc = expect(doc, dict, KIND, "the document")
    if not _SUMMARY_KEYS & doc.keys():
        raise FeedParseError(KIND, "no instatus keys (page, activeIncidents, components...)")
    slug = provider or page_slug(as_dict(doc.get("page")).get("name"), KIND)
    found = [_incident(item, slug) for item in listed_dicts(doc, "activeIncidents", KIND)]
    for key in _MAINTENANCE_KEYS:
        found += [_maintenance(item, slug) for item in listed_dicts(doc, key, KIND)]
    return first_by_source_id(found)


def _incident(item: dict[str, Any], provider: str) -> Incident:
    status = _incident_status(item.get("status"))
    return Incident(
        provider=provider,
        source_id=_source_id(item),
        title=nonblank(item.get("name")) or "",
        status=status,
        impact=_impact(item.get("impact")),
        is_maintenance=False,
        started_at=read_instatus_time(item.get("started")) or _updated_at(item),
        resolved_at=_updated_at(item) if status == "resolved" else None,
        url=nonblank(item.get("url")),
        components=_components(item),
    )


def _maintenance(item: dict[str, Any], provider: str) -> Incident:
    status = _maintenance_status(item.get("status"))
    start = read_instatus_time(item.get("start")) or read_instatus_time(item.get("started"))
    return Incident(
        provider=provider,
        source_id=_source_id(item),
        title=nonblank(item.get("name")) or "",
        status=status,
        impact="maintenance",
        is_maintenance=True,
        started_at=start,
        resolved_at=_maintenance_end(item, start) if status == "completed" else None,
        url=nonblank(item.get("url")),
        components=_components(item),
    )


def _incident_status(word: object) -> Status:
    status = normalize_status(nonblank(word))
    if status in {"resolved", "postmortem", "completed"}:
        return "resolved"
    return status if status in {"identified", "monitoring"} else "investigating"


def _maintenance_status(word: object) -> Status:
    text = (nonblank(word) or "").upper().replace("_", "").replace(" ", "")
    if text in _MAINTENANCE_STATUSES:
        return _MAINTENANCE_STATUSES[text]
    status = normalize_status(nonblank(word))
    if status in {"resolved", "postmortem", "completed"}:
        return "completed"
    return status if status in {"in_progress", "verifying"} else "scheduled"


def _impact(word: object) -> Impact:
    text = nonblank(word) or ""
    return _IMPACTS.get(text.upper()) or normalize_impact(text)


def _maintenance_end(item: dict[str, Any], start: datetime | None) -> datetime | None:
    """``start`` plus ``duration`` minutes (a string or a number), else ``updatedAt``."""
    duration = item.get("duration")
    if isinstance(duration, str) and re.fullmatch(r"[0-9]{1,9}", duration.strip()):
        duration = int(duration)
    if start is not None and isinstance(duration, int) and not isinstance(duration, bool):
        try:
            return start + timedelta(minutes=duration)
        except OverflowError:
            pass
    return _updated_at(item)


def _updated_at(item: dict[str, Any]) -> datetime | None:
    return read_instatus_time(item.get("updatedAt"))


def _source_id(item: dict[str, Any]) -> str:
    return id_text(item.get("id")) or stable_id(
        nonblank(item.get("url")), nonblank(item.get("name"))
    )


def _components(item: dict[str, Any]) -> tuple[str, ...]:
    """Component names when an item lists them (as names or {name} objects); usually none."""
    value = item.get("components")
    entries = value if isinstance(value, list) else []
    names = (nonblank(e.get("name") if isinstance(e, dict) else e) for e in entries)
    return unique(n for n in names if n)


def read_instatus_time(value: object) -> datetime | None:
    """ISO 8601 or a JavaScript ``Date.toString()`` text, in UTC; None when unreadable."""
    if isinstance(value, str) and (match := _JS_DATE.match(value.strip())):
        try:
            return to_utc(datetime.strptime(" ".join(match.groups()), "%b %d %Y %H:%M:%S %z"))
        except (ValueError, OverflowError):  # year 1 with a positive offset overflows in UTC
            return None
    return read_time(value)
