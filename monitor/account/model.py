"""What a provider says to the account about its own doing, in one shape for every provider.

An account event source (one module in ``monitor/account/kinds/``) turns its API's answer into
:class:`AccountEvent` records: a retirement AWS scheduled for an instance, the downtime Azure's
Resource Health says was Unplanned, an incident Google Cloud's Personalized Service Health tells
the project of. The rules that map each provider's own vocabulary onto slamon's few kinds and
statuses are the pure functions below, tested as tables. Nothing here does I/O.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any, Literal

# prometheus: the team's own alerts, delivered by its Alertmanager (monitor/account/alertmanager.py)
Provider = Literal["aws", "azure", "gcp", "lambda", "prometheus"]
PROVIDERS: tuple[Provider, ...] = ("aws", "azure", "gcp", "lambda", "prometheus")

# scheduled_maintenance: the provider will (or did) take the resource down on a plan it
# announced; retirement: the resource's life ends on the provider's say (degraded hardware);
# preemption: spot or preemptible capacity reclaimed; issue: something broke on the provider's
# side; user_initiated: the downtime is the account's own doing (a restart, a resize).
EventKind = Literal["scheduled_maintenance", "retirement", "preemption", "issue", "user_initiated"]
EVENT_KINDS: tuple[EventKind, ...] = (
    "scheduled_maintenance",
    "retirement",
    "preemption",
    "issue",
    "user_initiated",
)
# upcoming: announced, not started; open: under way; closed: over, done or canceled
EventStatus = Literal["upcoming", "open", "closed"]
EVENT_STATUSES: tuple[EventStatus, ...] = ("upcoming", "open", "closed")

DETAIL_CHARS = 500  # the provider's words, first line: enough to read, short enough to store
_TAG = re.compile(r"<[^>]+>")


@dataclass(frozen=True, slots=True)
class AccountEvent:
    """One event as its source saw it.

    ``key`` is the provider's own de-duplication key (an AWS Health event ARN, an EC2 instance
    event's instance and event id, an Azure tracking id or availability status occurrence, a GCP
    event name): the same event read twice, polled or pushed, has the same key, and a later
    reading of it has a later ``updated_at``. ``entities`` are the ids of what it names (EC2
    instance ids, Azure resource ids): targets join on them through their ``external_id``; an
    event naming none is scoped by its ``region``. ``raw_type`` is the provider's own type code
    (``AWS_EC2_INSTANCE_RETIREMENT_SCHEDULED``, ``instance-retirement``, ``Unplanned``).
    """

    provider: Provider
    source: str  # the kind's name: aws_health, ec2_events …
    key: str
    kind: EventKind
    status: EventStatus
    starts_at: datetime | None = None  # aware, UTC
    ends_at: datetime | None = None
    updated_at: datetime | None = None
    region: str | None = None
    service: str | None = None
    title: str = ""
    detail: str = ""
    entities: tuple[str, ...] = ()
    raw_type: str = ""


def aws_health_kind(event_type_code: str, category: str) -> EventKind:
    """The kind of an AWS Health event, from its ``eventTypeCode`` first, then its category.

    A retirement is any ``*_RETIREMENT_SCHEDULED`` code, and ``AWS_EC2_INSTANCE_STOP_SCHEDULED``
    (the retirement of an EBS-backed instance is announced as a stop); maintenance is any
    ``*_MAINTENANCE_SCHEDULED`` code or the ``scheduledChange`` category. ``issue`` and
    ``accountNotification`` are both ``issue``: a notification to the account is kept rather than
    dropped, and one naming no entity (a billing notice) names no target either, so it only ever
    reaches its region's scope.
    """
    code = event_type_code.upper()
    if code.endswith("_RETIREMENT_SCHEDULED") or code == "AWS_EC2_INSTANCE_STOP_SCHEDULED":
        return "retirement"
    if code.endswith("_MAINTENANCE_SCHEDULED") or category == "scheduledChange":
        return "scheduled_maintenance"
    return "issue"


def aws_health_status(status_code: str) -> EventStatus:
    """AWS Health's ``statusCode`` (open, closed, upcoming) is slamon's status word for word."""
    if status_code in EVENT_STATUSES:
        return status_code
    raise ValueError(f"statusCode: {status_code!r} is none of open, closed, upcoming")


# DescribeInstanceStatus' Events[].Code -> kind (docs: "Scheduled events for your instances")
EC2_EVENT_KINDS: dict[str, EventKind] = {
    "instance-retirement": "retirement",
    "instance-stop": "retirement",  # an EBS-backed instance's retirement is a stop
    "instance-reboot": "scheduled_maintenance",
    "system-reboot": "scheduled_maintenance",
    "system-maintenance": "scheduled_maintenance",
}


def ec2_event_kind(code: str) -> EventKind:
    """The kind of an EC2 scheduled instance event; an unknown code is maintenance (it is
    scheduled, and AWS' doing)."""
    return EC2_EVENT_KINDS.get(code, "scheduled_maintenance")


def ec2_event_status(description: str, not_before: datetime | None, now: datetime) -> EventStatus:
    """EC2 marks a finished event by prefixing its description with ``[Completed]`` or
    ``[Canceled]``; otherwise it is upcoming until its ``NotBefore`` and open from then."""
    if description.startswith(("[Completed]", "[Canceled]")):
        return "closed"
    if not_before is not None and not_before > now:
        return "upcoming"
    return "open"


# Resource Health's reasonType -> kind
AZURE_REASON_KINDS: dict[str, EventKind] = {
    "unplanned": "issue",
    "planned": "scheduled_maintenance",
    "userinitiated": "user_initiated",
}


def azure_reason_kind(reason_type: str) -> EventKind:
    """The kind of a Resource Health availability status from its ``reasonType`` (Unplanned,
    Planned, UserInitiated; compared without case or spaces); an unknown one is an issue."""
    return AZURE_REASON_KINDS.get(reason_type.replace(" ", "").lower(), "issue")


# Service Health's incidentType -> kind; stage -> status
AZURE_INCIDENT_KINDS: dict[str, EventKind] = {
    "incident": "issue",
    "maintenance": "scheduled_maintenance",
    "informational": "issue",
    "actionrequired": "issue",
    "security": "issue",
}
AZURE_STAGES: dict[str, EventStatus] = {
    "active": "open",
    "inprogress": "open",
    "planned": "upcoming",
    "rescheduled": "upcoming",
    "resolved": "closed",
    "rca": "closed",
    "complete": "closed",
    "canceled": "closed",
    "cancelled": "closed",
}


def azure_incident_kind(incident_type: str) -> EventKind:
    """The kind of a Service Health event from its ``incidentType``; unknown: an issue."""
    return AZURE_INCIDENT_KINDS.get(incident_type.replace(" ", "").lower(), "issue")


def azure_stage_status(stage: str) -> EventStatus:
    """The status of a Service Health event from its ``stage``; raises ValueError for a stage
    Azure does not document."""
    found = AZURE_STAGES.get(stage.replace(" ", "").lower())
    if found is None:
        raise ValueError(f"stage: {stage!r} is not one Azure documents")
    return found


def gcp_event_kind(category: str) -> EventKind:
    """Personalized Service Health's ``category``: ``INCIDENT`` is an issue; the API documents no
    other category yet, so anything else is an issue too rather than dropped."""
    return "issue"


def gcp_event_status(state: str) -> EventStatus:
    """``ACTIVE`` is open, ``CLOSED`` closed; raises ValueError for any other state."""
    found: dict[str, EventStatus] = {"ACTIVE": "open", "CLOSED": "closed"}
    if state not in found:
        raise ValueError(f"state: {state!r} is neither ACTIVE nor CLOSED")
    return found[state]


def text_field(raw: Mapping[str, Any], name: str, malformed: type[ValueError]) -> str:
    """``raw[name]`` as non-empty text, else ``malformed`` naming the field."""
    value = raw.get(name)
    if not isinstance(value, str) or not value.strip():
        raise malformed(f"{name}: missing or not text")
    return value


def optional_text(raw: Mapping[str, Any], name: str, malformed: type[ValueError]) -> str:
    """``raw[name]`` as text, ``""`` when absent or null; anything else is ``malformed`` naming
    the field (a number where the provider documents words is not the provider's document)."""
    value = raw.get(name)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise malformed(f"{name}: {value!r} is not text")
    return value


def time_field(raw: Mapping[str, Any], name: str, malformed: type[ValueError]) -> datetime | None:
    """``raw[name]`` as an aware UTC time (:func:`utc`), else ``malformed`` naming the field."""
    try:
        return utc(raw.get(name))
    except ValueError:
        raise malformed(f"{name}: {raw.get(name)!r} is not a time") from None


def utc(value: object) -> datetime | None:
    """An aware UTC datetime from what an API answers: a datetime (naive means UTC), ISO 8601
    text (Azure's seven fractional digits included), or an RFC 1123 date (EventBridge's
    ``Sat, 05 Jun 2016 15:10:09 GMT``); None or empty text is None. Raises ValueError else."""
    if value is None or value == "":
        return None
    if isinstance(value, datetime):
        when = value
    elif isinstance(value, str):
        when = _parse_text_time(value.strip())
    else:
        raise ValueError(f"{value!r} is not a time")
    return (when if when.tzinfo else when.replace(tzinfo=UTC)).astimezone(UTC)


def _parse_text_time(text: str) -> datetime:
    if text[:1].isdigit():
        # 2016-05-04T14:11:29.7598931Z: Python reads at most six fractional digits
        trimmed = re.sub(r"(\.\d{6})\d+", r"\1", text.replace("Z", "+00:00"))
        return datetime.fromisoformat(trimmed)
    try:
        return parsedate_to_datetime(text)
    except (TypeError, ValueError):
        raise ValueError(f"{text!r} is not a time") from None


def first_line(text: object, limit: int = DETAIL_CHARS) -> str:
    """The first non-empty line of the provider's words, markup removed, at most ``limit``."""
    plain = _TAG.sub(" ", str(text or ""))
    for line in plain.splitlines():
        if line.strip():
            return " ".join(line.split())[:limit]
    return ""
