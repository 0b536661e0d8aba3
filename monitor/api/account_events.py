"""/api/v1/events: account events pushed by the providers and by `slamon agent`, and read back.

``POST /api/v1/events/aws-health`` takes an EventBridge delivery of an AWS Health event (an API
destination's body, as EventBridge sends it); ``POST /api/v1/events/azure-service-health`` an
action group's Service Health alert (the common alert schema); both need an ``events`` (or
``admin``) token, the Azure one also as ``?token=`` (an events token only: an action group's
webhook sends no header of the user's). ``POST /api/v1/events/notices/{target}`` takes an
interruption notice that `slamon agent --metadata` heard on the target's box, with that
target's heartbeat token too.

Each push is stored whole or not at all, once per provider key
(``monitor.fleet.account_store.record``): the first delivery answers 201 (``outcome: new``),
any later one 200 with the same id (``updated``, ``unchanged``, or ``stale`` when it is older than
what is stored, which it leaves as it was). The account events' alerts are judged in the same
transaction, so a notice pages at once rather than at the next evaluation. A body that is not
the provider's documented shape is a 422 naming the field; a body over the bound, a 413 before
it is parsed.

``GET /api/v1/events`` lists them as every surface reads them (``monitor.history``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import replace
from datetime import datetime
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Query, Response
from fastapi.exceptions import RequestValidationError
from fastapi.security import HTTPAuthorizationCredentials
from pydantic import BaseModel, ConfigDict, Field, RootModel, StrictBool, StringConstraints
from sqlalchemy.orm import Session

from monitor.account.kinds.aws_health import from_eventbridge
from monitor.account.kinds.azure_resource_health import from_service_health_alert
from monitor.account.model import AccountEvent, EventKind, EventStatus
from monitor.account.notices import notice_event
from monitor.alerts.service import on_account_events
from monitor.api.auth import (
    Credentials,
    DbSession,
    Guard,
    ReadToken,
    authenticate,
    require_scope,
)
from monitor.api.deps import AppState, app_state
from monitor.api.errors import ApiError, body_reader, error_responses, parse_body
from monitor.api.heartbeats import target_pusher
from monitor.api.schemas import Instant, Limit, Offset
from monitor.api.targets import DEFAULT_LIMIT, Filter, find_target
from monitor.db.base import utcnow
from monitor.db.models import ApiToken, Target
from monitor.fleet.account_poll import announce
from monitor.fleet.account_store import Via, record
from monitor.history.account_events import AccountEventView, events
from monitor.interruptions.model import Notice

router = APIRouter(
    prefix="/api/v1/events",
    tags=["events"],
    responses=error_responses(401, 403, 422, 429),
)

MAX_PUSH_BYTES = 256 * 1024  # EventBridge's largest event; an action group's alert is smaller
MAX_NOTICE_BYTES = 16 * 1024
# the stored columns' widths (monitor/db/models.py AccountEventRecord)
MAX_KEY = 500
MAX_REGION = 500
MAX_SERVICE = 100
MAX_DETAIL = 2000  # a notice's words (the agent cuts them to this)
NoticeKind = Literal[
    "preemption", "stop", "hibernate", "rebalance", "scheduled_maintenance", "reboot", "redeploy"
]  # monitor.interruptions.model.KINDS
_NAMED = re.compile(r"^([A-Za-z_][\w.\-\[\]]*): (.+)$", re.DOTALL)


# --------------------------------------------------------------------------- what they take


class ProviderDocument(RootModel[dict[str, Any]]):
    """A provider's document: any JSON object; its own parser reads it."""


class NoticeIn(BaseModel):
    """What `slamon agent --metadata` pushes: a notice as its box's metadata service gave it
    (``monitor.interruptions.Notice``), and whether the agent acknowledged it (Azure)."""

    model_config = ConfigDict(extra="ignore")  # a newer agent's fields: not a lost notice

    cloud: Literal["aws", "gcp", "azure"]
    kind: NoticeKind
    deadline: Instant | None = Field(
        default=None, description="When it happens (ISO 8601 with an offset); null: now."
    )
    key: Annotated[str, StringConstraints(min_length=1, max_length=250, pattern=r"\S")]
    detail: Annotated[str, Field(max_length=MAX_DETAIL)] = ""
    acknowledged: StrictBool = False


# the providers' optional fields: absent and null are one to their parsers
TEXT_OR_NULL: dict[str, Any] = {"type": ["string", "null"]}
AWS_HEALTH_SCHEMA: dict[str, Any] = {
    "type": "object",
    "description": "An EventBridge delivery of an AWS Health event, as EventBridge sends it.",
    "required": ["source", "detail-type", "detail"],
    "properties": {
        "source": {"type": "string", "enum": ["aws.health"]},
        "detail-type": {"type": "string", "enum": ["AWS Health Event"]},
        "time": TEXT_OR_NULL,
        "detail": {
            "type": "object",
            "required": ["eventArn", "eventTypeCode", "eventTypeCategory"],
            "properties": {
                "eventArn": {"type": "string", "minLength": 1, "maxLength": MAX_KEY},
                "eventTypeCode": {"type": "string", "minLength": 1},
                "eventTypeCategory": {"type": "string", "minLength": 1},
                "eventRegion": TEXT_OR_NULL,
                "service": TEXT_OR_NULL,
                "statusCode": {"enum": ["open", "closed", "upcoming", None]},
                "startTime": TEXT_OR_NULL,
                "endTime": TEXT_OR_NULL,
                "lastUpdatedTime": TEXT_OR_NULL,
                "eventDescription": {"type": "array", "items": {"type": "object"}},
                "affectedEntities": {"type": "array", "items": {"type": "object"}},
            },
        },
    },
}
AZURE_SERVICE_HEALTH_SCHEMA: dict[str, Any] = {
    "type": "object",
    "description": "An action group's Service Health alert in the common alert schema.",
    "required": ["data"],
    "properties": {
        "schemaId": {"type": "string"},
        "data": {
            "type": "object",
            "required": ["essentials", "alertContext"],
            "properties": {
                "essentials": {
                    "type": "object",
                    "required": ["monitoringService"],
                    "properties": {
                        "monitoringService": {"type": "string", "enum": ["ServiceHealth"]},
                        "firedDateTime": TEXT_OR_NULL,
                    },
                },
                "alertContext": {
                    "type": "object",
                    "required": ["properties"],
                    "properties": {
                        "eventTimestamp": TEXT_OR_NULL,
                        "properties": {
                            "type": "object",
                            "required": ["trackingId", "incidentType", "stage"],
                            "properties": {
                                "trackingId": {"type": "string", "minLength": 1},
                                "incidentType": {"type": "string", "minLength": 1},
                                "stage": {"type": "string", "minLength": 1},
                                "title": TEXT_OR_NULL,
                                "service": TEXT_OR_NULL,
                                "region": TEXT_OR_NULL,
                                "communication": TEXT_OR_NULL,
                                "impactStartTime": TEXT_OR_NULL,
                                "impactMitigationTime": TEXT_OR_NULL,
                                "impactedServices": {
                                    "description": "A list, or the escaped JSON text of one.",
                                    "anyOf": [
                                        {"type": "array"},
                                        {"type": "string"},
                                        {"type": "null"},
                                    ],
                                },
                            },
                        },
                    },
                },
            },
        },
    },
}


def _body(schema: dict[str, Any]) -> dict[str, Any]:
    return {"requestBody": {"required": True, "content": {"application/json": {"schema": schema}}}}


# --------------------------------------------------------------------------- what they answer


class EventStored(BaseModel):
    """What a push did: the stored event's id, key, kind and status (as stored: a stale
    delivery answers what it did not replace), the outcome, and the targets it is about."""

    id: int
    provider: str
    key: str
    kind: str
    status: str
    outcome: Literal["new", "updated", "unchanged", "stale"]
    targets: list[str]


class AccountEventOut(BaseModel):
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
    entities: list[str]
    raw_type: str
    scope: Literal["targets", "region", "account"]
    targets: list[str]
    reported_for: str | None
    via: str
    readings: int
    accepted: bool
    first_seen_at: datetime
    last_seen_at: datetime


class AccountEventPage(BaseModel):
    items: list[AccountEventOut]
    total: int
    limit: int
    offset: int
    next_offset: int | None


PUSH_RESPONSES: dict[int | str, dict[str, Any]] = {
    201: {"model": EventStored, "description": "stored for the first time"},
    **error_responses(413),
}


# --------------------------------------------------------------------------- who may push


def require_events(credentials: Credentials, session: DbSession, guard: Guard) -> ApiToken:
    """A dependency: a live token with the events (or admin) scope."""
    return require_scope(authenticate(session, credentials, guard), "events")


EventsToken = Annotated[ApiToken, Depends(require_events)]
UrlToken = Annotated[
    str | None,
    Query(
        max_length=200,
        description="An events token, for a sender that cannot set headers (an Azure action "
        "group's webhook); only when no Authorization header is sent.",
    ),
]


def require_events_header_or_url(
    credentials: Credentials, session: DbSession, guard: Guard, token: UrlToken = None
) -> ApiToken:
    """A dependency: an events or admin token in the Authorization header, or an events token
    in the URL's ``token`` (an action group's webhook sends no headers of the user's; a URL
    lands in logs, so a token that may do more than push events is refused there: 403)."""
    if credentials is None and token:
        presented = HTTPAuthorizationCredentials(scheme="Bearer", credentials=token)
        found = authenticate(session, presented, guard)
        if found.scope != "events":
            raise ApiError(
                403,
                "a token in the URL must have the events scope; send any other as "
                "`Authorization: Bearer <token>`",
            )
        return found
    return require_events(credentials, session, guard)


WebhookToken = Annotated[ApiToken, Depends(require_events_header_or_url)]
State = Annotated[AppState, Depends(app_state)]


# an events or admin token, or the target's own heartbeat token (as for its heartbeats)
authorize_notice = target_pusher("events")


# --------------------------------------------------------------------------- the routes


@router.post(
    "/aws-health",
    response_model=EventStored,
    responses=PUSH_RESPONSES,
    openapi_extra=_body(AWS_HEALTH_SCHEMA),
)
def push_aws_health(
    _token: EventsToken,
    raw: Annotated[bytes, Depends(body_reader(MAX_PUSH_BYTES))],
    session: DbSession,
    state: State,
    response: Response,
) -> dict[str, Any]:
    """Store an AWS Health event delivered by EventBridge (``source: aws.health``,
    ``detail-type: AWS Health Event``; at most 256 KiB). Its region is ``detail.eventRegion``,
    not the delivery's. 201 the first time, 200 with the same id after."""
    event = parsed(from_eventbridge, raw, key_field="detail.eventArn")
    return store(session, state, response, event, "push")


@router.post(
    "/azure-service-health",
    response_model=EventStored,
    responses=PUSH_RESPONSES,
    openapi_extra=_body(AZURE_SERVICE_HEALTH_SCHEMA),
)
def push_azure_service_health(
    _token: WebhookToken,
    raw: Annotated[bytes, Depends(body_reader(MAX_PUSH_BYTES))],
    session: DbSession,
    state: State,
    response: Response,
) -> dict[str, Any]:
    """Store a Service Health alert an Azure action group's webhook delivers (the common alert
    schema; ``impactedServices`` a list or its escaped JSON text; at most 256 KiB), keyed by its
    ``trackingId``. An action group's webhook cannot send a header: its URL may carry an events
    token as ``?token=``. 201 the first time, 200 with the same id after."""
    key_field = "data.alertContext.properties.trackingId"
    event = parsed(from_service_health_alert, raw, key_field=key_field)
    return store(session, state, response, event, "push")


@router.post(
    "/notices/{target}",
    response_model=EventStored,
    responses={**PUSH_RESPONSES, **error_responses(404)},
    openapi_extra=_body(NoticeIn.model_json_schema()),
)
def push_notice(
    row: Annotated[Target, Depends(authorize_notice)],
    raw: Annotated[bytes, Depends(body_reader(MAX_NOTICE_BYTES))],
    session: DbSession,
    state: State,
    response: Response,
) -> dict[str, Any]:
    """Store an interruption notice `slamon agent --metadata` heard on the target's box (at
    most 16 KiB): scoped to that target, ``upcoming`` until its deadline, accepted maintenance
    when the agent acknowledged it. 201 the first time, 200 with the same id after."""
    body = parse_body(NoticeIn, raw)
    notice = Notice(body.cloud, body.kind, body.deadline, body.key, body.detail)
    event = notice_event(notice, row.name, utcnow(), row.external_id)
    return store(
        session, state, response, event, "agent", target=row.name, accepted=body.acknowledged
    )


@router.get("", response_model=AccountEventPage, responses=error_responses(404))
def list_events(
    _token: ReadToken,
    session: DbSession,
    limit: Limit = DEFAULT_LIMIT,
    offset: Offset = 0,
    target: Filter = None,
    kind: EventKind | None = None,
    status: EventStatus | None = None,
) -> dict[str, Any]:
    """Account events as stored, newest start first: those about ``target`` (404 for a target
    slamon does not know), of ``kind`` and ``status``."""
    if target is not None and find_target(session, target) is None:
        raise ApiError(404, f"no target named {target!r}")
    views = events(
        session,
        target=target,
        kinds=[kind] if kind else (),
        statuses=[status] if status else (),
    )
    following = offset + limit
    return {
        "items": [event_out(view) for view in views[offset:following]],
        "total": len(views),
        "limit": limit,
        "offset": offset,
        "next_offset": following if following < len(views) else None,
    }


# --------------------------------------------------------------------------- helpers


def provider_document(raw: bytes) -> Any:
    """The JSON document ``raw`` a provider (or an Alertmanager) pushed; a 422 when it is not
    JSON or holds a string that is not UTF-8 (a lone surrogate, which no column can store)."""
    document = parse_body(ProviderDocument, raw).root
    try:
        json.dumps(document, ensure_ascii=False).encode()
    except UnicodeEncodeError:
        raise malformed("the document: a string holds a lone surrogate (not UTF-8)") from None
    return document


def parsed(
    parser: Callable[[Mapping[str, Any]], AccountEvent], raw: bytes, *, key_field: str
) -> AccountEvent:
    """The event of a provider's document ``raw``; a 422 naming the field when it is not the
    provider's documented shape (or would not fit what is stored)."""
    document = provider_document(raw)
    try:
        event = parser(document)
    except ValueError as exc:  # the parser's Malformed…, naming the field
        raise malformed(str(exc)) from None
    except OverflowError:  # a time whose offset takes it past year 9999 in UTC
        raise malformed("the document: a time is out of range") from None
    if len(event.key) > MAX_KEY:
        raise malformed(f"{key_field}: longer than {MAX_KEY} characters")
    return fitted(event)


def fitted(event: AccountEvent) -> AccountEvent:
    """``event`` with its region and service cut to the stored width (a Service Health alert
    may name many regions); the key is refused above rather than cut."""
    region = event.region[:MAX_REGION] if event.region else event.region
    service = event.service[:MAX_SERVICE] if event.service else event.service
    return replace(event, region=region, service=service)


def malformed(message: str) -> RequestValidationError:
    """A 422 whose detail names the field ``message`` starts with (``detail.eventArn: …``)."""
    named = _NAMED.match(message)
    path, said = (named.group(1), named.group(2)) if named else ("", message)
    error = {"type": "value_error", "loc": ("body", path) if path else ("body",), "msg": said}
    return RequestValidationError([error])


def store(
    session: Session,
    state: AppState,
    response: Response,
    event: AccountEvent,
    via: Via,
    *,
    target: str | None = None,
    accepted: bool = False,
) -> dict[str, Any]:
    """Record ``event``, judge the account events' alerts, commit: one transaction."""
    now = utcnow()
    (done,) = record(session, [event], now, via, accepted=accepted, target=target)
    announce(session, [done], now)
    on_account_events(session, state.config, now, public_url=state.settings.public_url)
    session.commit()
    (view,) = events(session, ids=[done.id])
    response.status_code = 201 if done.outcome == "new" else 200
    return {
        "id": view.id,
        "provider": view.provider,
        "key": view.key,
        "kind": view.kind,
        "status": view.status,
        "outcome": done.outcome,
        "targets": list(view.targets),
    }


def event_out(view: AccountEventView) -> dict[str, Any]:
    return {
        "id": view.id,
        "provider": view.provider,
        "source": view.source,
        "key": view.key,
        "kind": view.kind,
        "status": view.status,
        "starts_at": view.starts_at,
        "ends_at": view.ends_at,
        "updated_at": view.updated_at,
        "region": view.region,
        "service": view.service,
        "title": view.title,
        "detail": view.detail,
        "entities": list(view.entities),
        "raw_type": view.raw_type,
        "scope": view.scope,
        "targets": list(view.targets),
        "reported_for": view.reported_for,
        "via": view.via,
        "readings": view.readings,
        "accepted": view.accepted,
        "first_seen_at": view.first_seen_at,
        "last_seen_at": view.last_seen_at,
    }
