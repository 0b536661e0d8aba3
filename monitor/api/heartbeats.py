"""POST /api/v1/heartbeats/{target}: a training job says it is alive, and how far it got.

Authorized by an admin API token or by the target's own heartbeat token (which works for that
target only). Heartbeats are accepted for a target of any kind, not only ``heartbeat``: a
training job may push beside an HTTP probe of the instance it runs on.

`slamon agent` adds ``gpus`` (its GPU readings, judged like a dcgm scrape) and ``at`` (when it
took them). A fresh reading is stored at the server's time, whatever the box's clock says; one
that waited out an outage in the agent's outbox (``at`` more than ``FRESH_S`` ago, at most
``MAX_AGE``) keeps its own time, so the backlog lands where it belongs.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Annotated, Any

from fastapi import APIRouter, Depends
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, field_validator

from monitor import tokens
from monitor.api.auth import (
    Credentials,
    DbSession,
    Guard,
    insufficient_scope,
    presented_token,
    unauthorized,
)
from monitor.api.errors import ApiError, body_reader, error_responses, parse_body
from monitor.api.schemas import Instant
from monitor.api.targets import find_target
from monitor.config.models import json_number
from monitor.db.base import utcnow
from monitor.db.models import Heartbeat, Target
from monitor.probes.gpus.wire import GPU_READING_SCHEMA, MAX_GPUS, snapshot_from_json
from monitor.reports.work import MAX_THROUGHPUT

router = APIRouter(
    prefix="/api/v1/heartbeats",
    tags=["heartbeats"],
    responses=error_responses(401, 403, 404, 413, 422, 429),
)

MAX_BODY_BYTES = 16 * 1024
MAX_STEP = 2**63 - 1  # the column is a signed 64-bit integer
FRESH_S = 120.0  # a reading taken less long ago is stored at the server's time (clock skew)
MAX_AGE = timedelta(days=7)  # an agent's backlog older than this is refused
AT_RULE = (
    f"When the readings were taken: at most {FRESH_S:g} s in the future (clock skew) and at most "
    f"{MAX_AGE.days} days ago, by the server's clock (422 otherwise)."
)


class HeartbeatIn(BaseModel):
    """The optional body; keys beyond ``step`` and ``throughput`` are kept as the payload."""

    model_config = ConfigDict(extra="allow")

    # bounds before the number check, or the JSON schema would not state them (config/models.py)
    step: Annotated[int, Field(ge=0, le=MAX_STEP), BeforeValidator(json_number)] | None = None
    throughput: (
        Annotated[
            float,
            Field(ge=0, le=MAX_THROUGHPUT, allow_inf_nan=False),
            BeforeValidator(json_number),
        ]
        | None
    ) = None
    at: Instant | None = Field(default=None, description=AT_RULE)
    gpus: (
        Annotated[
            list[dict[str, Any]],
            Field(max_length=MAX_GPUS, json_schema_extra={"items": GPU_READING_SCHEMA}),
        ]
        | None
    ) = None

    @field_validator("gpus")
    @classmethod
    def _readable_gpus(cls, value: list[dict[str, Any]] | None) -> list[dict[str, Any]] | None:
        if value is not None:
            snapshot_from_json(value)  # the judge reads them back: refuse what it cannot
        return value


class HeartbeatAccepted(BaseModel):
    target: str
    at: datetime


def target_pusher(scope: str) -> Callable[..., Target]:
    """A dependency authorizing a push for one target: an API token of ``scope`` (or one that
    implies it), or the target's own heartbeat token. It gives the live target.

    401: no token, or one that is neither an API token nor this target's heartbeat token
    (another target's heartbeat token included); 403: an API token without ``scope``;
    404: the caller may push, but the target is unknown or retired.
    """

    def authorize(
        target: str, credentials: Credentials, session: DbSession, guard: Guard
    ) -> Target:
        presented = presented_token(credentials)
        guard.before_lookup(presented)
        api_token = tokens.verify(session, presented)
        row = find_target(session, target)
        if api_token is not None:
            if not tokens.scope_allows(api_token.scope, scope):
                raise insufficient_scope(scope)
        elif row is None or not tokens.heartbeat_token_matches(row, presented):
            error = unauthorized(f"the token is not valid for target {target!r}", invalid=True)
            raise guard.refuse(presented, error)
        if row is None:
            raise ApiError(404, f"no target named {target!r}")
        if row.retired_at is not None:
            raise ApiError(404, f"target {target!r} is retired")
        return row

    return authorize


authorize_heartbeat = target_pusher("admin")


@router.post(
    "/{target}",
    status_code=202,
    response_model=HeartbeatAccepted,
    openapi_extra={
        "requestBody": {
            "required": False,
            "content": {"application/json": {"schema": HeartbeatIn.model_json_schema()}},
        }
    },
)
def push_heartbeat(
    row: Annotated[Target, Depends(authorize_heartbeat)],
    raw: Annotated[bytes, Depends(body_reader(MAX_BODY_BYTES))],
    session: DbSession,
) -> dict[str, Any]:
    """Store a heartbeat at the server's time (UTC); the body (at most 16 KiB) is optional.
    Beyond the schema: no string in it may hold a NUL character (422 otherwise)."""
    beat = parse_body(HeartbeatIn, raw) if raw.strip() else HeartbeatIn()
    at = stored_time(beat.at, utcnow())
    payload = dict(beat.model_extra or {})
    if beat.gpus is not None:
        payload["gpus"] = beat.gpus
    session.add(
        Heartbeat(
            target_id=row.id,
            at=at,
            step=beat.step,
            throughput=beat.throughput,
            payload=payload or None,
        )
    )
    session.commit()
    return {"target": row.name, "at": at}


def stored_time(taken: datetime | None, now: datetime) -> datetime:
    """The server's time for a fresh heartbeat; the reading's own for a backlog. 422 for a
    time in the future (beyond the skew allowed) or older than ``MAX_AGE``."""
    if taken is None:
        return now
    age = (now - taken).total_seconds()
    if age < -FRESH_S:
        raise ApiError(
            422,
            f"at: {taken.isoformat()} is in the future (the server's time is {now.isoformat()})",
        )
    if age <= FRESH_S:
        return now
    if now - taken > MAX_AGE:
        raise ApiError(422, f"at: {taken.isoformat()} is older than {MAX_AGE.days} days")
    return taken
