"""POST /api/v1/alertmanager: an Alertmanager webhook receiver, so the team's own Prometheus
alerts (dcgm-exporter's, node exporter's) join slamon's account events: a target's page, the
events list and the report's evidence for an outage they overlap.

Alertmanager's ``webhook_config`` posts its version 4 body here with an ``events`` (or
``admin``) token as ``http_config.authorization.credentials`` (a Bearer header). Each alert is
stored as an account event of provider ``prometheus`` (``monitor/account/alertmanager.py`` says
how it is keyed, named and ordered), once per key however often it is delivered: a repeat
notification, a second replica of an HA pair, a retry. The whole delivery is stored or none of
it, and the answer is 200 with what storing each alert did. The alerts raise no slamon alert:
Alertmanager routed them already (``monitor/alerts/rules.py``).

A body that is not the webhook's shape is a 422 naming the field (Alertmanager does not retry a
4xx); one over ``MAX_WEBHOOK_BYTES`` a 413 before it is parsed.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends
from pydantic import BaseModel
from sqlalchemy import select
from sqlalchemy.orm import Session

from monitor.account.alertmanager import (
    MalformedWebhook,
    ReceivedAlert,
    Webhook,
    from_webhook,
)
from monitor.account.model import AccountEvent
from monitor.api.account_events import (
    MAX_KEY,
    EventsToken,
    State,
    malformed,
    provider_document,
)
from monitor.api.auth import DbSession
from monitor.api.errors import body_reader, error_responses
from monitor.db.base import utcnow
from monitor.db.models import Target
from monitor.fleet.account_poll import announce
from monitor.fleet.account_store import Recorded, record
from monitor.history.account_events import events

router = APIRouter(
    prefix="/api/v1/alertmanager",
    tags=["events"],
    responses=error_responses(401, 403, 413, 422, 429),
)

# a group of ~1,500 alerts; set the receiver's max_alerts to stay under it
MAX_WEBHOOK_BYTES = 2 * 1024 * 1024

TEXT_MAP: dict[str, Any] = {"type": "object", "additionalProperties": {"type": "string"}}
WEBHOOK_SCHEMA: dict[str, Any] = {
    "type": "object",
    "description": "Alertmanager's webhook body, version 4, as its webhook_config posts it.",
    "required": ["alerts"],
    "properties": {
        "version": {"type": "string", "enum": ["4"]},
        "groupKey": {"type": "string"},
        "truncatedAlerts": {"type": "integer", "minimum": 0},
        "status": {"type": "string", "enum": ["firing", "resolved"]},
        "receiver": {"type": "string"},
        "groupLabels": TEXT_MAP,
        "commonLabels": TEXT_MAP,
        "commonAnnotations": TEXT_MAP,
        "externalURL": {"type": "string"},
        "alerts": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["status", "labels", "startsAt", "fingerprint"],
                "properties": {
                    "status": {"type": "string", "enum": ["firing", "resolved"]},
                    "labels": TEXT_MAP,
                    "annotations": TEXT_MAP,
                    "startsAt": {
                        "type": "string",
                        "format": "date-time",
                        "description": "With its UTC offset; not 0001-01-01 (422 otherwise).",
                    },
                    "endsAt": {
                        "type": "string",
                        "format": "date-time",
                        "description": "0001-01-01T00:00:00Z while it fires; once resolved, "
                        "when it ended: at or after startsAt (422 otherwise).",
                    },
                    "generatorURL": {"type": "string"},
                    "fingerprint": {
                        "type": "string",
                        "minLength": 1,
                        "maxLength": 200,
                        "description": "Not blank (422 otherwise).",
                    },
                },
            },
        },
    },
}


class StoredAlert(BaseModel):
    """What storing one alert did: the stored event's id, key and status (as stored: a firing
    repeat of an alert already resolved answers ``closed``), the outcome, the target its
    labels name (``target``, null: none) and whether slamon knows that target."""

    id: int
    key: str
    alertname: str
    status: Literal["open", "closed"]
    outcome: Literal["new", "updated", "unchanged", "stale"]
    target: str | None
    target_known: bool


class WebhookStored(BaseModel):
    """What a delivery did: each of the team's alerts in its order, how many of slamon's own
    alerts it carried (``echoed``, not stored) and how many Alertmanager left out of it
    (``truncated_alerts``: the receiver's ``max_alerts``)."""

    receiver: str
    group_key: str
    alerts: list[StoredAlert]
    echoed: int
    truncated_alerts: int


@router.post(
    "",
    response_model=WebhookStored,
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {"application/json": {"schema": WEBHOOK_SCHEMA}},
        }
    },
)
def receive(
    _token: EventsToken,
    raw: Annotated[bytes, Depends(body_reader(MAX_WEBHOOK_BYTES))],
    session: DbSession,
    state: State,
) -> dict[str, Any]:
    """Store the alerts of an Alertmanager webhook delivery (version 4; at most 2 MiB) as
    account events of provider ``prometheus``, each about the target its
    ``alertmanager_receiver.target_labels`` name: open while firing, closed once resolved.
    Delivered again, it changes nothing (``unchanged``); a firing repeat after the alert
    resolved is ``stale`` and leaves it closed."""
    webhook = parsed(raw, state.config.alertmanager_receiver.target_labels)
    now = utcnow()
    done = store(session, webhook.alerts, now)
    announce(session, done, now)
    session.commit()
    known = known_targets(session, {a.target for a in webhook.alerts if a.target})
    statuses = {view.id: view.status for view in events(session, ids={d.id for d in done})}
    return {
        "receiver": webhook.receiver,
        "group_key": webhook.group_key,
        "alerts": [
            stored(alert, outcome, statuses[outcome.id], known)
            for alert, outcome in zip(webhook.alerts, done, strict=True)
        ],
        "echoed": webhook.echoed,
        "truncated_alerts": webhook.truncated_alerts,
    }


def parsed(raw: bytes, target_labels: Sequence[str]) -> Webhook:
    """The delivery ``raw``; a 422 naming the field when it is not the webhook's shape."""
    try:
        webhook = from_webhook(provider_document(raw), target_labels)
    except MalformedWebhook as exc:
        raise malformed(str(exc)) from None
    for n, alert in enumerate(webhook.alerts):
        if len(alert.event.key) > MAX_KEY:
            raise malformed(f"alerts[{n}].fingerprint: longer than the stored key allows")
    return webhook


def store(session: Session, alerts: Sequence[ReceivedAlert], now: datetime) -> list[Recorded]:
    """Record each alert with the target it names, in the caller's transaction; one outcome
    per alert, in their order (an alert twice in one delivery has one row and one outcome)."""
    by_target: dict[str | None, list[AccountEvent]] = {}
    for alert in alerts:
        by_target.setdefault(alert.target, []).append(alert.event)
    outcomes: dict[tuple[str, str], Recorded] = {}
    for target, readings in by_target.items():
        for done in record(session, readings, now, "push", target=target):
            outcomes[(done.provider, done.key)] = done
    return [outcomes[(a.event.provider, a.event.key)] for a in alerts]


def known_targets(session: Session, names: set[str]) -> set[str]:
    """Those of ``names`` that are targets slamon knows (retired ones too: their history)."""
    if not names:
        return set()
    return set(session.scalars(select(Target.name).where(Target.name.in_(sorted(names)))))


def stored(alert: ReceivedAlert, done: Recorded, status: str, known: set[str]) -> dict[str, Any]:
    return {
        "id": done.id,
        "key": alert.event.key,
        "alertname": alert.alertname,
        "status": status,
        "outcome": done.outcome,
        "target": alert.target,
        "target_known": alert.target in known,
    }
