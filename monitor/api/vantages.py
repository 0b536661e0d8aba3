"""GET /api/v1/vantages: every probing vantage as the alert evaluator last judged it."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from fastapi import APIRouter

from monitor.api.auth import DbSession, ReadToken
from monitor.api.errors import error_responses
from monitor.api.schemas import VantageOut
from monitor.probes.vantages import vantage_health

router = APIRouter(prefix="/api/v1", responses=error_responses(401, 403, 422, 429))


@router.get("/vantages", response_model=list[VantageOut], tags=["vantages"])
def list_vantages(_token: ReadToken, session: DbSession) -> list[dict[str, Any]]:
    """Every probing vantage as the alert evaluator last judged it: blind (it disagrees with
    the quorum on nearly every target, for long enough: ``vantage_blind`` fires), disagreeing
    (not yet that long, or on fewer targets), agreeing, or unknown (no current verdict)."""
    return [
        {
            "vantage": v.vantage,
            "state": _vantage_state(v.blind_since, v.disagreeing, v.targets),
            "last_probe_at": v.last_probe_at,
            "targets": v.targets,
            "disagreeing": v.disagreeing,
            "last_agreed_at": v.last_agreed_at,
            "blind_since": v.blind_since,
        }
        for v in vantage_health(session)
    ]


def _vantage_state(blind_since: datetime | None, disagreeing: int, targets: int) -> str:
    """``unknown`` for a vantage with no current verdict to compare: silence agrees with
    nothing."""
    if blind_since is not None:
        return "blind"
    if not targets:
        return "unknown"
    return "disagrees" if disagreeing else "agrees"
