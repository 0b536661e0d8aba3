"""/api/v1/targets: list, read, register (create or update) and retire targets at run time.

The request body of a registration is the config's ``TargetConfig``, so a target registered
here is validated exactly like one in the YAML file. Responses never carry secrets: no token
hashes, and a password in a target's URL is masked.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit, urlunsplit

from fastapi import APIRouter, Depends, Query, Response
from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel
from sqlalchemy import Select, func, select
from sqlalchemy.exc import DataError, IntegrityError
from sqlalchemy.orm import Session

from monitor import tokens
from monitor.api.auth import AdminToken, DbSession, ReadToken
from monitor.api.deps import AppState, app_state
from monitor.api.errors import ApiError, body_reader, error_responses, parse_body
from monitor.config.loader import cross_check
from monitor.config.models import Config, TargetConfig, TargetKind
from monitor.db.base import utcnow
from monitor.db.models import Target
from monitor.history.heartbeats import LastHeartbeat
from monitor.history.heartbeats import latest as latest_heartbeats
from monitor.probes.state import DOWN, UNKNOWN, UP
from monitor.status.health import fresh, target_state
from monitor.status.repository import verdicts as status_verdicts
from monitor.targets import retire_target, upsert_target

router = APIRouter(
    prefix="/api/v1/targets",
    tags=["targets"],
    responses=error_responses(401, 403, 404, 422, 429),
)

MAX_LIMIT = 500
DEFAULT_LIMIT = 100
MAX_OFFSET = 1_000_000_000
MAX_INT32 = 2**31 - 1
_FIELD_OF = {"sla_policy": "sla", "interval_s": "interval", "timeout_s": "timeout"}
NO_NUL = r"^[^\x00]*$"  # PostgreSQL cannot compare text with NUL in it; refuse it as input

Filter = Annotated[str | None, Query(max_length=200, pattern=NO_NUL)]


class HeartbeatSeen(BaseModel):
    """A training job's latest push: its step and throughput (samples or tokens a second)."""

    at: datetime
    step: int | None
    throughput: float | None
    unit: str | None


class TargetOut(BaseModel):
    """A target as the API shows it: the config's field names, plus where it came from."""

    name: str
    kind: str
    url: str | None
    provider: str | None
    region: str | None
    zone: str | None
    pool: str | None
    instance_type: str | None
    gpus: int
    hourly_price: float
    sla: str | None
    interval: float
    timeout: float
    confirmations: int
    recovery_confirmations: int | None
    expect_status: list[int] | None
    expect_body: str | None
    grace: float | None
    stall_after: float | None
    labels: dict[str, Any]
    source: str
    created_at: datetime
    retired_at: datetime | None
    has_heartbeat_token: bool
    instance_id: str | None = None  # the cloud's own id (a discovered target's external id)
    capacity: str = "unknown"
    discovered_by: str | None = None  # the discovery source that registered it
    ended_by: str | None = None  # with retired_at: user | preempted | provider | unknown
    end_detail: str | None = None
    state: Literal["up", "unusable", "down", "unknown"] = "unknown"
    reachable: Literal["up", "down", "unknown"] = "unknown"
    usable: Literal["up", "down", "unknown"] = "unknown"
    last_probe_at: datetime | None = None
    last_heartbeat: HeartbeatSeen | None = None  # pushed targets: the latest push


class RegisteredTarget(TargetOut):
    heartbeat_token: str | None = None  # only when asked for; shown this once


class TargetPage(BaseModel):
    items: list[TargetOut]
    total: int
    limit: int
    offset: int
    next_offset: int | None


@dataclass(frozen=True, slots=True)
class Verdict:
    """The quorum's current verdict on a target, as every surface shows it."""

    state: str = UNKNOWN  # up | unusable | down | unknown (``monitor.status.health``)
    reachable: str = UNKNOWN
    usable: str = UNKNOWN
    last_probe_at: datetime | None = None


def verdicts(session: Session, rows: Sequence[Target], now: datetime) -> dict[int, Verdict]:
    """The displayed state of each target, by the status page's rule (a stale or missing
    quorum verdict is unknown, a reachable box with unusable GPUs is not up)."""
    if not rows:
        return {}
    known = status_verdicts(session)  # every live target: one read of target_states
    out = {}
    for row in rows:
        seen = known.get(row.id)
        if seen is None:
            continue
        is_fresh = fresh(seen.last_probe_at, row.interval_s, row.timeout_s, now)
        reachable = seen.reachable if is_fresh and seen.reachable in (UP, DOWN) else UNKNOWN
        usable = seen.usable if is_fresh and seen.usable in (UP, DOWN) else UNKNOWN
        out[row.id] = Verdict(
            target_state(seen.reachable, seen.usable, is_fresh),
            reachable,
            usable,
            seen.last_probe_at,
        )
    return out


def target_out(
    row: Target, verdict: Verdict | None = None, beat: LastHeartbeat | None = None
) -> dict[str, Any]:
    settings = row.settings or {}
    seen = verdict or Verdict()
    return {
        "last_heartbeat": None if beat is None else asdict(beat),
        "state": seen.state,
        "reachable": seen.reachable,
        "usable": seen.usable,
        "last_probe_at": seen.last_probe_at,
        "name": row.name,
        "kind": row.kind,
        "url": mask_password(row.url),
        "provider": row.provider,
        "region": row.region,
        "zone": row.zone,
        "pool": row.pool,
        "instance_type": row.instance_type,
        "gpus": row.gpus,
        "hourly_price": row.hourly_price,
        "sla": row.sla_policy,
        "interval": row.interval_s,
        "timeout": row.timeout_s,
        "confirmations": row.confirmations,
        "recovery_confirmations": row.recovery_confirmations,
        "expect_status": settings.get("expect_status"),
        "expect_body": settings.get("expect_body"),
        "grace": settings.get("grace_s"),
        "stall_after": settings.get("stall_after_s"),
        "labels": row.labels or {},
        "source": row.source,
        "created_at": row.created_at,
        "retired_at": row.retired_at,
        "has_heartbeat_token": row.heartbeat_token_hash is not None,
        "instance_id": row.external_id,
        "capacity": row.capacity,
        "discovered_by": row.discovered_by,
        "ended_by": row.ended_by,
        "end_detail": row.end_detail,
    }


def mask_password(url: str | None) -> str | None:
    """``http://user:secret@host/`` -> ``http://user:***@host/``; other URLs unchanged."""
    if not url:
        return url
    try:
        parts = urlsplit(url)
        if parts.password is None:
            return url
    except ValueError:
        return url
    host = parts.netloc.rsplit("@", 1)[1]
    netloc = f"{parts.username or ''}:***@{host}"
    return urlunsplit(parts._replace(netloc=netloc))


def find_target(session: Session, name: str) -> Target | None:
    if "\x00" in name:
        return None
    return session.scalars(select(Target).where(Target.name == name)).one_or_none()


def _filtered(
    provider: str | None,
    region: str | None,
    pool: str | None,
    kind: str | None,
    include_retired: bool,
) -> Select[Target]:
    query = select(Target)
    for column, value in (
        (Target.provider, provider),
        (Target.region, region),
        (Target.pool, pool),
        (Target.kind, kind),
    ):
        if value is not None:
            query = query.where(column == value)
    if not include_retired:
        query = query.where(Target.retired_at.is_(None))
    return query


@router.get("", response_model=TargetPage)
def list_targets(
    _token: ReadToken,
    session: DbSession,
    limit: Annotated[int, Query(ge=1, le=MAX_LIMIT)] = DEFAULT_LIMIT,
    offset: Annotated[int, Query(ge=0, le=MAX_OFFSET)] = 0,
    provider: Filter = None,
    region: Filter = None,
    pool: Filter = None,
    kind: TargetKind | None = None,
    include_retired: bool = False,
) -> dict[str, Any]:
    """Targets by name (a stable order), filtered; retired ones only with ``include_retired``.
    Page with ``offset``: the next page starts at ``next_offset`` (null on the last page)."""
    query = _filtered(provider, region, pool, kind, include_retired)
    total = session.scalar(select(func.count()).select_from(query.subquery())) or 0
    rows = session.scalars(query.order_by(Target.name).limit(limit).offset(offset)).all()
    seen = verdicts(session, rows, utcnow())
    beats = latest_heartbeats(session, [row.id for row in rows])
    following = offset + limit
    return {
        "items": [target_out(row, seen.get(row.id), beats.get(row.id)) for row in rows],
        "total": total,
        "limit": limit,
        "offset": offset,
        "next_offset": following if following < total else None,
    }


@router.get("/{name}", response_model=TargetOut)
def get_target(name: str, _token: ReadToken, session: DbSession) -> dict[str, Any]:
    """One live target; 404 when there is none by this name, or it was retired (deleted):
    its history stays in the reports and in ``GET /api/v1/targets?include_retired=true``."""
    row = find_target(session, name)
    if row is None:
        raise ApiError(404, f"no target named {name!r}")
    if row.retired_at is not None:
        raise ApiError(404, f"target {name!r} was retired at {row.retired_at.isoformat()}")
    beat = latest_heartbeats(session, [row.id]).get(row.id)
    return target_out(row, verdicts(session, [row], utcnow()).get(row.id), beat)


_TARGET_BODY = {
    "requestBody": {
        "required": True,
        "content": {"application/json": {"schema": TargetConfig.model_json_schema()}},
    }
}


@router.post(
    "",
    response_model=RegisteredTarget,
    status_code=201,
    openapi_extra=_TARGET_BODY,
    responses={
        200: {"model": RegisteredTarget, "description": "An existing target, updated"},
        **error_responses(409, 413),
    },
)
def register_target(
    _token: AdminToken,
    raw: Annotated[bytes, Depends(body_reader())],
    session: DbSession,
    response: Response,
    state: Annotated[AppState, Depends(app_state)],
    heartbeat_token: bool = False,
) -> dict[str, Any]:
    """Create (201) or update (200) the target named in the body, with source ``api``; a
    retired target of that name comes back. The body is a ``TargetConfig``; beyond its
    schema, ``timeout`` must not exceed ``interval`` and no string may hold a NUL character
    (422 otherwise).

    With ``heartbeat_token=true`` the answer carries a fresh heartbeat token for the target,
    this once (any earlier one stops working). Any kind may have one: a training job can push
    heartbeats beside an HTTP probe of its instance.

    Without a ``provider`` the target gets its SLA policy's; one that contradicts its policy's
    provider is refused (422).
    """
    cfg = _checked(parse_body(TargetConfig, raw), state.config)
    existed = find_target(session, cfg.name) is not None
    row = upsert_target(session, cfg, "api")
    plaintext = tokens.create_heartbeat_token(session, row) if heartbeat_token else None
    _commit(session, cfg.name)
    response.status_code = 200 if existed else 201
    return {**target_out(row), "heartbeat_token": plaintext}


def _checked(cfg: TargetConfig, config: Config) -> TargetConfig:
    """``cfg`` as the config file would hold it (with its SLA policy's provider when it names
    none; the file's own ``sla_policies`` count), or 422 for what the model alone cannot see:
    the config file's cross-checks for one target (an unknown SLA policy, a provider that is
    not the policy's). Column sizes are the model's own limits."""
    alone = Config(targets=[cfg], sla_policies=config.sla_policies)
    problems = [(loc[2:], m) for loc, m in cross_check(alone) if loc[0] == "targets"]
    if problems:
        errors = [{"type": "value_error", "loc": ("body", *loc), "msg": m} for loc, m in problems]
        raise RequestValidationError(errors)
    return alone.targets[0]


def _commit(session: Session, name: str) -> None:
    try:
        session.commit()
    except IntegrityError:
        session.rollback()
        raise ApiError(409, f"target {name!r} was registered at the same time; retry") from None
    except DataError:  # a value the checks above did not foresee; still the client's input
        session.rollback()
        raise ApiError(422, "a value does not fit the database's column") from None


@router.delete("/{name}", status_code=204, response_class=Response)
def retire(name: str, _token: AdminToken, session: DbSession) -> Response:
    """Retire the target: no more probes, its history stays (it is listed with
    ``include_retired``). Retiring a retired target changes nothing. 404 when unknown."""
    row = find_target(session, name)
    if row is None:
        raise ApiError(404, f"no target named {name!r}")
    if row.retired_at is None:
        retire_target(session, row, utcnow())
        session.commit()
    return Response(status_code=204)
