"""/healthz: can this process reach its database and broker, and is slamon doing its job?"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Depends
from fastapi.responses import JSONResponse
from starlette.concurrency import run_in_threadpool

from monitor.api.deps import AppState, app_state
from monitor.health.assess import Assessment, assess
from monitor.health.model import Judgement, Snapshot

router = APIRouter()


@router.get("/healthz", tags=["health"])
async def healthz(state: Annotated[AppState, Depends(app_state)]) -> JSONResponse:
    """503 ``unavailable`` when the database or the broker does not answer; 200 ``degraded``
    with the reasons when slamon is not doing its job (no scheduler leads, the schedule lags,
    deliveries back up, no feed is polled); else 200 ``ok``."""
    found = await run_in_threadpool(assess, state.sessions, state.settings, state.config)
    body = health_body(found, watchdog_url=state.config.watchdog.url is not None)
    return JSONResponse(body, status_code=503 if found.status == "unavailable" else 200)


def health_body(found: Assessment, *, watchdog_url: bool = False) -> dict[str, Any]:
    """The JSON /healthz answers (docs/api.md); what could not be read is null."""
    judgement, snapshot = found.judgement, found.snapshot
    return {
        "status": found.status,
        "database": _check(found.database_error),
        "broker": _check(found.broker_error),
        "scheduler": _scheduler(judgement, snapshot),
        "deliveries": {
            "oldest_pending_seconds": _seconds(judgement.backlog_s) if judgement else None
        },
        "feeds": _feeds(judgement, snapshot),
        "watchdog": _watchdog(snapshot, watchdog_url),
        "reasons": [reason.text for reason in found.reasons],
    }


def _check(error: str | None) -> dict[str, Any]:
    return {"ok": True} if error is None else {"ok": False, "error": error}


def _scheduler(judgement: Judgement | None, snapshot: Snapshot | None) -> dict[str, Any]:
    lease = judgement.lease if judgement is not None else None
    lags = dict(judgement.lags) if judgement is not None else {}
    slots = snapshot.slots if snapshot is not None else ()
    return {
        "leader": judgement.leader if judgement is not None else None,
        "token": lease.token if lease is not None else None,
        "since": _time(lease.acquired_at) if lease is not None else None,
        "expires_at": _time(lease.expires_at) if lease is not None else None,
        "lag_seconds": _seconds(judgement.lag_s) if judgement is not None else None,
        "entries": {
            slot.name: {
                "lag_seconds": _seconds(lags.get(slot.name)),
                "done_at": _time(slot.done_at),
                "fenced": slot.fenced,
                "repeated": slot.repeated,
            }
            for slot in slots
        },
    }


def _feeds(judgement: Judgement | None, snapshot: Snapshot | None) -> dict[str, Any]:
    if judgement is None or snapshot is None:
        return {"enabled": None, "last_polled_at": None, "age_seconds": None}
    return {
        "enabled": snapshot.feeds,
        "last_polled_at": _time(snapshot.last_feed_poll) if snapshot.feeds else None,
        "age_seconds": _seconds(judgement.feed_age_s),
    }


def _watchdog(snapshot: Snapshot | None, configured: bool) -> dict[str, Any]:
    ping = snapshot.ping if snapshot is not None else None
    return {
        "configured": configured,
        "last_ping_at": _time(ping.pinged_at) if ping is not None else None,
        "last_attempt_at": _time(ping.attempted_at) if ping is not None else None,
        "error": ping.error if ping is not None else None,
    }


def _time(at: datetime | None) -> str | None:
    return at.isoformat().replace("+00:00", "Z") if at is not None else None


def _seconds(value: float | None) -> float | None:
    return round(value, 3) if value is not None else None
