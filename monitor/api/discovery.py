"""GET /api/v1/discovery: each configured discovery source and how its sweeps are going."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request

from monitor.api.auth import DbSession, ReadToken
from monitor.api.deps import app_state
from monitor.api.errors import error_responses
from monitor.api.schemas import DiscoverySourceOut
from monitor.db.base import utcnow
from monitor.fleet.health import source_health

router = APIRouter(prefix="/api/v1", responses=error_responses(401, 403, 422, 429))


@router.get("/discovery", response_model=list[DiscoverySourceOut], tags=["discovery"])
def list_sources(request: Request, _token: ReadToken, session: DbSession) -> list[dict[str, Any]]:
    """Every discovery source in the config: ``unknown`` until first swept, ``ok``,
    ``degraded`` (the latest sweep failed) or ``failing`` (sweeps have failed for
    ``alerts.discovery_failing_after``: ``discovery_failing`` fires). A failed sweep retires
    nothing, so the fleet shown is the last good sweep's."""
    config = app_state(request).config
    return [
        {
            "name": s.name,
            "kind": s.kind,
            "state": s.state,
            "every": s.every_s,
            "last_swept_at": s.last_swept_at,
            "last_success_at": s.last_success_at,
            "consecutive_failures": s.consecutive_failures,
            "last_error": s.last_error,
            "instances": s.instances,
        }
        for s in source_health(session, config, utcnow())
    ]
