"""AWS Health Dashboard public events: ``https://health.aws.amazon.com/public/currentevents``.

The live body is UTF-16 big-endian with a BOM (UTF-8, with or without a BOM, and BOM-less
UTF-16 BE are read too). It is a JSON array of events; ``[]`` means no current events. Times are
epoch seconds, as strings (``date``, ``end_time``) or numbers (``event_log[].timestamp``).

Mapping: ``source_id`` is the event ``arn`` (else ``id``, else a hash of service, region and
``date``); the title is ``summary`` without its "[RESOLVED]" mark. Status codes, on the event,
its log entries and ``impacted_services`` (``current``/``max``), are 0 resolved, 1 informational,
2 degraded, 3 disrupted: the event is resolved once its ``status`` is 0 or it has an
``end_time``, and its impact is the worst code seen (1 minor, 2 major, 3 critical). Updates are
the ``event_log`` entries oldest first. Regions come from ``region_name`` ("Oregon", "UAE"),
then the region codes in ``service``, ``arn`` and the impacted service keys
(``sts-us-west-2``). Components are the impacted services' names, else ``service_name``.

Default provider: ``aws``.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from monitor.feeds.model import Impact, Incident, IncidentUpdate, Status, stable_id
from monitor.feeds.parsing.documents import expect, first_by_source_id, load_json
from monitor.feeds.parsing.regions import aws_region_for_name, aws_regions_in
from monitor.feeds.parsing.text import plain_text, unique
from monitor.feeds.parsing.times import read_time
from monitor.feeds.parsing.values import dicts_in, id_text, nonblank

KIND = "aws-health"
DEFAULT_PROVIDER = "aws"
DASHBOARD_URL = "https://health.aws.amazon.com/health/status"

_CODE_IMPACT: dict[int, Impact] = {0: "none", 1: "minor", 2: "major", 3: "critical"}
_RESOLVED_MARK = "[RESOLVED]"
_MULTIPLE_SERVICES = "multiple services"


def parse(raw: bytes, provider: str | None = None) -> list[Incident]:
    """Incidents of one ``currentevents`` document, in document order.

    Raises ``FeedParseError`` when the bytes are not a JSON array.
    """
    events = expect(load_json(_with_bom(raw), KIND), list, KIND, "the document")
    slug = provider or DEFAULT_PROVIDER
    return first_by_source_id(_incident(event, slug) for event in dicts_in(events))


def _with_bom(raw: bytes) -> bytes:
    """UTF-16 BE without its BOM starts with a NUL byte ("\\0[" for an array): add the BOM."""
    return b"\xfe\xff" + raw if raw.startswith(b"\x00") else raw


def _incident(event: dict[str, Any], provider: str) -> Incident | None:
    title = _title(event)
    event_id = nonblank(event.get("arn")) or nonblank(event.get("id"))
    if not title and event_id is None:
        return None  # neither a summary nor an id: not an event
    updates = _updates(event)
    resolved_at = _resolved_at(event, updates)
    return Incident(
        provider=provider,
        source_id=event_id or _fallback_id(event),
        title=title,
        status="resolved" if resolved_at is not None else "investigating",
        impact=_impact(event),
        is_maintenance=False,
        started_at=read_time(event.get("date")) or (updates[0].at if updates else None),
        resolved_at=resolved_at,
        url=DASHBOARD_URL,
        components=_components(event),
        regions=_regions(event),
        updates=updates,
    )


def _title(event: dict[str, Any]) -> str:
    summary = nonblank(event.get("summary")) or nonblank(event.get("service_name")) or ""
    return " ".join(summary.replace(_RESOLVED_MARK, " ").split())


def _fallback_id(event: dict[str, Any]) -> str:
    # stable_id reads a missing part and an empty one alike
    return stable_id(
        nonblank(event.get("service")),
        nonblank(event.get("region_name")),
        id_text(event.get("date")),
    )


def _updates(event: dict[str, Any]) -> tuple[IncidentUpdate, ...]:
    """The event log oldest first; entries without a readable timestamp are left out."""
    updates = [u for u in map(_update, dicts_in(event.get("event_log"))) if u is not None]
    updates.sort(key=lambda update: update.at)  # stable: same-second entries keep log order
    return tuple(updates)


def _update(entry: dict[str, Any]) -> IncidentUpdate | None:
    at = read_time(entry.get("timestamp"))
    if at is None:
        return None
    status: Status = "resolved" if _code(entry.get("status")) == 0 else "investigating"
    body = plain_text(entry.get("message")) or plain_text(entry.get("summary"))
    return IncidentUpdate(at=at, status=status, body=body)


def _resolved_at(event: dict[str, Any], updates: tuple[IncidentUpdate, ...]) -> datetime | None:
    """``end_time``; an event whose status is 0 without one closed at its last log entry."""
    end = read_time(event.get("end_time"))
    if end is not None or _code(event.get("status")) != 0:
        return end
    return updates[-1].at if updates else read_time(event.get("date"))


def _impact(event: dict[str, Any]) -> Impact:
    """The worst status code the event, its log or its services reached; minor if none."""
    codes = [_code(event.get("status"))]
    codes += [_code(entry.get("status")) for entry in dicts_in(event.get("event_log"))]
    for service in _services(event).values():
        codes += [_code(service.get("current")), _code(service.get("max"))]
    worst = max((code for code in codes if code is not None), default=None)
    return _CODE_IMPACT[min(worst, 3)] if worst else "minor"


def _regions(event: dict[str, Any]) -> tuple[str, ...]:
    by_name = aws_region_for_name(nonblank(event.get("region_name")) or "")
    texts = [
        nonblank(event.get("service")) or "",
        nonblank(event.get("arn")) or "",
        *_services(event),
    ]
    codes = [code for text in texts for code in aws_regions_in(text)]
    return unique([by_name, *codes] if by_name else codes)


def _components(event: dict[str, Any]) -> tuple[str, ...]:
    names = [nonblank(service.get("service_name")) for service in _services(event).values()]
    if not any(names):
        name = nonblank(event.get("service_name"))
        names = [name] if name and name.lower() != _MULTIPLE_SERVICES else []
    return unique(name for name in names if name)


def _services(event: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """``impacted_services`` by service key, only the well-formed entries."""
    services = event.get("impacted_services")
    if not isinstance(services, dict):
        return {}
    return {key: value for key, value in services.items() if isinstance(value, dict)}


def _code(value: object) -> int | None:
    """A status code from ``1`` or ``"1"``; None for anything else."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if value >= 0 else None
    if isinstance(value, str) and value.strip().isdecimal() and len(value.strip()) < 4:
        return int(value)
    return None
