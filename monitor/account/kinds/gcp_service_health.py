"""``gcp_service_health``: Google Cloud's Personalized Service Health events of each project.

A poll GETs ``https://servicehealth.googleapis.com/v1/projects/{project}/locations/global/
events`` page after page (``pageToken`` from ``nextPageToken``), with the checkpoint as the
filter ``update_time>="…"``. It needs the Service Health API enabled on the project and
``servicehealth.events.list`` (the role ``roles/servicehealth.viewer``). Credentials:
``token``, a bearer token minted elsewhere, else google-auth's application default credentials
(``pip install 'slamon[gcp]'``), loaded only then.

An event is keyed by its ``name`` (``projects/…/locations/global/events/…``); its kind is an
issue (``INCIDENT`` is the one category the API documents), its status its ``state``
(``ACTIVE`` open, ``CLOSED`` closed), its region and service the locations and products of its
``eventImpacts``. It names no resource: a project-wide event is scoped by region.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any
from urllib.parse import urlencode

from pydantic import Field

from monitor.account.kind import AccountKind, EventPollContext, SourceOptions
from monitor.account.kinds._http import failed, get_page
from monitor.account.model import (
    AccountEvent,
    first_line,
    gcp_event_kind,
    gcp_event_status,
    text_field,
    time_field,
)

NAME = "gcp_service_health"
API = "https://servicehealth.googleapis.com"
SCOPE = "https://www.googleapis.com/auth/cloud-platform"
MAX_PAGES = 1000


class GcpServiceHealthOptions(SourceOptions):
    projects: tuple[str, ...] = Field(min_length=1)
    endpoint: str | None = Field(default=None, pattern=r"^https?://")  # the API's base URL
    token: str | None = Field(default=None, repr=False)  # a bearer token, else the default chain


class MalformedEvent(ValueError):
    """An event that is not the shape Google documents; the message names the field."""


def list_events(
    options: GcpServiceHealthOptions, context: EventPollContext
) -> Sequence[AccountEvent]:
    import httpx  # loaded by a process that polls

    headers = {"Authorization": f"Bearer {_token(options)}", "Accept": "application/json"}
    found: list[AccountEvent] = []
    with httpx.Client(timeout=context.timeout_s) as client:
        for project in options.projects:
            where = f"{NAME}: project {project}"
            for page in _pages(client, options, project, context.since, headers, where):
                try:
                    found.extend(events(page))
                except MalformedEvent as exc:
                    raise failed(where, f"malformed answer: {exc}") from None
    return found


def _pages(
    client: Any,
    options: GcpServiceHealthOptions,
    project: str,
    since: datetime | None,
    headers: Mapping[str, str],
    where: str,
) -> list[dict[str, Any]]:
    base = f"{(options.endpoint or API).rstrip('/')}/v1/projects/{project}/locations/global/events"
    params = {"filter": event_filter(since)} if since is not None else {}
    pages: list[dict[str, Any]] = []
    while len(pages) < MAX_PAGES:
        url = f"{base}?{urlencode(params)}" if params else base
        pages.append(get_page(client, url, headers, where))
        token = str(pages[-1].get("nextPageToken") or "")
        if not token:
            break
        params["pageToken"] = token
    return pages


def event_filter(since: datetime) -> str:
    """The list's ``filter`` for events updated at or after the checkpoint."""
    return f'update_time>="{since.isoformat().replace("+00:00", "Z")}"'


def _token(options: GcpServiceHealthOptions) -> str:
    if options.token:
        return options.token
    try:
        import google.auth
        import google.auth.transport.requests

        credentials, _ = google.auth.default(scopes=[SCOPE])
        credentials.refresh(google.auth.transport.requests.Request())  # type: ignore[no-untyped-call]
        return str(credentials.token)
    except Exception as exc:  # google-auth's own error says which credentials it looked for
        said = (str(exc).splitlines() or [""])[0]
        raise failed(NAME, f"no credential: {type(exc).__name__}: {said}") from None


def events(page: Mapping[str, Any]) -> list[AccountEvent]:
    """The events of one list page (``events``, absent when there are none), pure."""
    items = page.get("events") or []
    if not isinstance(items, list):
        raise MalformedEvent("events: not a list")
    return [event(item) for item in items]


def event(raw: Mapping[str, Any]) -> AccountEvent:
    """One Personalized Service Health event. Raises :class:`MalformedEvent` naming the field."""
    if not isinstance(raw, Mapping):
        raise MalformedEvent("an event: not an object")
    name = text_field(raw, "name", MalformedEvent)
    impacts = raw.get("eventImpacts") or []
    if not isinstance(impacts, list) or not all(isinstance(item, Mapping) for item in impacts):
        raise MalformedEvent("eventImpacts: not a list of objects")
    try:
        status = gcp_event_status(text_field(raw, "state", MalformedEvent))
    except ValueError as exc:
        raise MalformedEvent(str(exc)) from None
    category = text_field(raw, "category", MalformedEvent)
    return AccountEvent(
        provider="gcp",
        source=NAME,
        key=name,
        kind=gcp_event_kind(category),
        status=status,
        starts_at=time_field(raw, "startTime", MalformedEvent),
        ends_at=time_field(raw, "endTime", MalformedEvent),
        updated_at=time_field(raw, "updateTime", MalformedEvent),
        region=_joined(impacts, "location", "locationName"),
        service=_joined(impacts, "product", "productName"),
        title=str(raw.get("title") or ""),
        detail=first_line(raw.get("description")),
        entities=(),
        raw_type=str(raw.get("detailedCategory") or category),
    )


def _joined(impacts: Sequence[Mapping[str, Any]], part: str, name: str) -> str | None:
    values = [str((item.get(part) or {}).get(name) or "") for item in impacts]
    return ", ".join(dict.fromkeys(value for value in values if value)) or None


KIND = AccountKind(
    name=NAME,
    provider="gcp",
    options=GcpServiceHealthOptions,
    list_events=list_events,
    requires=("google.auth",),  # only without a token
    extra="gcp",
)
