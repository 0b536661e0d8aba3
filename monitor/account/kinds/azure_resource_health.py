"""``azure_resource_health``: Azure Resource Health's availability statuses of a subscription's
resources, and the parser of an action group's Service Health alert.

A poll GETs ``/subscriptions/{id}/providers/Microsoft.ResourceHealth/availabilityStatuses``
(every resource's current status, page after page by ``nextLink``), or, where ``resources``
names some, ``{resource id}/providers/Microsoft.ResourceHealth/availabilityStatuses/current``
for each. It needs ``Microsoft.ResourceHealth/availabilityStatuses/read`` (the Reader role has
it). Credentials: ``token``, a bearer token minted elsewhere (a test's, a pipeline's), else
azure-identity's ``DefaultAzureCredential`` (``pip install 'slamon[azure]'``), loaded only then.

A status is an event when it says the resource is down or degraded (``Unavailable``,
``Degraded``: open) or came back from a reason Azure names (``Available`` with a
``reasonType``: closed); a plain ``Available`` or an ``Unknown`` is none. Its kind is its
``reasonType``: Unplanned is an issue, Planned maintenance, UserInitiated the user's own doing
(what the claim report excludes). An occurrence is keyed by the resource and the time it
occurred (Azure spells it ``occuredTime``), so the next poll of the same downtime is the same
event. ``resolutionETA`` is Azure's estimate, not an end, and is not kept as one.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import Field

from monitor.account.kind import AccountKind, EventPollContext, SourceOptions
from monitor.account.kinds._http import failed, get_page
from monitor.account.model import (
    AccountEvent,
    azure_incident_kind,
    azure_reason_kind,
    azure_stage_status,
    first_line,
    optional_text,
    utc,
)

NAME = "azure_resource_health"
ARM = "https://management.azure.com"
API_VERSION = "2024-02-01"
STATUS_PATH = "/providers/Microsoft.ResourceHealth/availabilityStatuses"
MAX_PAGES = 1000  # a nextLink that never ends is a fault, not a fleet
DOWN = frozenset({"unavailable", "degraded"})


class AzureResourceHealthOptions(SourceOptions):
    subscription: str = Field(min_length=1)
    resources: tuple[str, ...] = ()  # resource ids; empty: the whole subscription
    endpoint: str | None = Field(default=None, pattern=r"^https?://")  # the ARM base URL
    token: str | None = Field(default=None, repr=False)  # a bearer token, else the default chain


class MalformedStatus(ValueError):
    """A document that is not the shape Azure documents; the message names the field."""


def list_events(
    options: AzureResourceHealthOptions, context: EventPollContext
) -> Sequence[AccountEvent]:
    import httpx  # loaded by a process that polls

    base = (options.endpoint or ARM).rstrip("/")
    where = f"{NAME}: subscription {options.subscription}"
    headers = {"Authorization": f"Bearer {_token(options, where)}", "Accept": "application/json"}
    pages: list[dict[str, Any]]
    with httpx.Client(timeout=context.timeout_s) as client:
        if options.resources:
            pages = [get_page(client, url, headers, where) for url in _status_urls(base, options)]
        else:
            pages = _subscription_pages(client, base, options, headers, where)
    try:
        return [found for page in pages for found in events(page)]
    except MalformedStatus as exc:
        raise failed(where, f"malformed answer: {exc}") from None


def _status_urls(base: str, options: AzureResourceHealthOptions) -> list[str]:
    return [
        f"{base}/{resource.strip('/')}{STATUS_PATH}/current?api-version={API_VERSION}"
        for resource in options.resources
    ]


def _subscription_pages(
    client: Any, base: str, options: AzureResourceHealthOptions, headers: Any, where: str
) -> list[dict[str, Any]]:
    url: str | None = (
        f"{base}/subscriptions/{options.subscription}{STATUS_PATH}?api-version={API_VERSION}"
    )
    pages: list[dict[str, Any]] = []
    while url and len(pages) < MAX_PAGES:
        page = get_page(client, url, headers, where)
        pages.append(page)
        url = str(page.get("nextLink") or "") or None
        if url and not url.startswith(f"{base}/"):  # the bearer token goes to ARM alone
            raise failed(where, f"nextLink leaves {base}: {url}")
    return pages


def _token(options: AzureResourceHealthOptions, where: str) -> str:
    if options.token:
        return options.token
    try:
        from azure.identity import DefaultAzureCredential

        return str(DefaultAzureCredential().get_token(f"{ARM}/.default").token)
    except Exception as exc:  # the chain's own error names every credential it tried
        raise failed(where, f"no credential: {(str(exc).splitlines() or [''])[0]}") from None


def events(page: Mapping[str, Any]) -> list[AccountEvent]:
    """The events of one answer (pure): a list page (``value``) or one ``current`` status."""
    if "value" in page:
        items = page["value"]
        if not isinstance(items, list):
            raise MalformedStatus("value: not a list")
        return [found for item in items if (found := availability_event(item)) is not None]
    found = availability_event(page)
    return [found] if found is not None else []


def availability_event(status: Mapping[str, Any]) -> AccountEvent | None:
    """The event an availability status says, or None where it says none (pure)."""
    if not isinstance(status, Mapping):
        raise MalformedStatus("an availability status: not an object")
    props = status.get("properties")
    if not isinstance(props, Mapping):
        raise MalformedStatus("properties: not an object")
    state = str(props.get("availabilityState") or "")
    if not state:
        raise MalformedStatus("properties.availabilityState: missing")
    reason = str(props.get("reasonType") or "")
    if state.lower() not in DOWN and not (state.lower() == "available" and reason):
        return None
    resource = resource_id(_field(status, "id"))
    occurred = _when(props, "occuredTime") or _when(props, "occurredTime")
    closed = state.lower() == "available"
    return AccountEvent(
        provider="azure",
        source=NAME,
        key=f"{resource}@{occurred.isoformat() if occurred else ''}",
        kind=azure_reason_kind(reason),
        status="closed" if closed else "open",
        starts_at=occurred,
        ends_at=_when(props, "reportedTime") if closed else None,
        updated_at=_when(props, "reportedTime"),
        region=str(status.get("location") or "") or None,
        service=_resource_type(resource),
        title=str(props.get("title") or state),
        detail=first_line(props.get("summary") or props.get("detailedStatus")),
        entities=(resource,),
        raw_type=reason or state,
    )


def resource_id(status_id: str) -> str:
    """The resource an availability status is of: its id without the status' own path, any
    space beside a ``/`` removed (Azure's published example has one inside its path)."""
    cut = re.split(f"(?i){re.escape(STATUS_PATH)}", status_id)[0]
    return re.sub(r"\s*/\s*", "/", cut).strip()


def _resource_type(resource: str) -> str | None:
    # …/providers/Microsoft.Compute/virtualMachines/name
    found = re.search(r"/providers/([^/]+/[^/]+)/[^/]+$", resource)
    return found.group(1) if found else None


def from_service_health_alert(document: Mapping[str, Any]) -> AccountEvent:
    """The event of an action group's Service Health alert in the common alert schema (pure).

    Keyed by its ``trackingId`` (each stage's communication of one event has its own
    ``communicationId``; the event is one), updated at ``eventTimestamp``. ``impactedServices``
    is a list in Azure's test action and an escaped JSON string in real deliveries: both are
    read. Raises :class:`MalformedStatus` naming the field."""
    if not isinstance(document, Mapping):
        raise MalformedStatus("the document: not an object")
    data = _object(document, "data", "data")
    essentials = _object(data, "essentials", "data.essentials")
    if essentials.get("monitoringService") != "ServiceHealth":
        said = essentials.get("monitoringService")
        raise MalformedStatus(f"data.essentials.monitoringService: {said!r}, not 'ServiceHealth'")
    context = _object(data, "alertContext", "data.alertContext")
    props = _object(context, "properties", "data.alertContext.properties")
    where = "data.alertContext.properties"
    try:
        tracking = _field(props, "trackingId")
        incident_type = _field(props, "incidentType")
        stage = _field(props, "stage")
        status = azure_stage_status(stage)
        regions = impacted_regions(props.get("impactedServices"))
        starts, ends = _when(props, "impactStartTime"), _when(props, "impactMitigationTime")
        words = {
            name: optional_text(props, name, MalformedStatus)
            for name in (
                "region", "service", "title", "defaultLanguageTitle", "communication",
                "defaultLanguageContent",
            )
        }  # fmt: skip
    except ValueError as exc:  # a MalformedStatus, or a stage Azure does not document
        raise MalformedStatus(f"{where}.{exc}") from None
    return AccountEvent(
        provider="azure",
        source="azure_service_health",
        key=tracking,
        kind=azure_incident_kind(incident_type),
        status=status,
        starts_at=starts,
        ends_at=ends if status == "closed" else None,
        updated_at=_when(context, "eventTimestamp") or _when(essentials, "firedDateTime"),
        region=", ".join(regions) or words["region"] or None,
        service=words["service"] or None,
        title=words["title"] or words["defaultLanguageTitle"] or tracking,
        detail=first_line(words["communication"] or words["defaultLanguageContent"]),
        entities=(),
        raw_type=incident_type,
    )


def impacted_regions(value: object) -> list[str]:
    """The region names of ``impactedServices``, a list or the escaped JSON string of one."""
    if value is None or value == "":
        return []
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            raise MalformedStatus("impactedServices: a string that is not JSON") from None
    if not isinstance(value, list) or not all(isinstance(item, Mapping) for item in value):
        raise MalformedStatus("impactedServices: not a list of objects")
    names = [
        str(region.get("RegionName"))
        for service in value
        for region in service.get("ImpactedRegions") or []
        if isinstance(region, Mapping) and region.get("RegionName")
    ]
    return list(dict.fromkeys(names))


def _object(parent: Mapping[str, Any], name: str, path: str) -> Mapping[str, Any]:
    value = parent.get(name)
    if not isinstance(value, Mapping):
        raise MalformedStatus(f"{path}: not an object")
    return value


def _field(parent: Mapping[str, Any], name: str) -> str:
    value = parent.get(name)
    if not isinstance(value, str) or not value.strip():
        raise MalformedStatus(f"{name}: missing or not text")
    return value


def _when(parent: Mapping[str, Any], name: str) -> Any:
    try:
        return utc(parent.get(name))
    except ValueError:
        raise MalformedStatus(f"{name}: {parent.get(name)!r} is not a time") from None


KIND = AccountKind(
    name=NAME,
    provider="azure",
    options=AzureResourceHealthOptions,
    list_events=list_events,
    requires=("azure.identity",),  # only without a token
    extra="azure",
)
