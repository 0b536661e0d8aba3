"""GET /api/v1/alerts: alerts, newest first, by state and rule."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from fastapi import APIRouter
from sqlalchemy import select

from monitor.api.auth import DbSession, ReadToken
from monitor.api.errors import error_responses
from monitor.api.queries import page
from monitor.api.schemas import AlertPage, Limit, Offset
from monitor.api.targets import DEFAULT_LIMIT, Filter
from monitor.db.models import Alert

router = APIRouter(prefix="/api/v1", responses=error_responses(401, 403, 422, 429))


@router.get("/alerts", response_model=AlertPage, tags=["alerts"])
def list_alerts(
    _token: ReadToken,
    session: DbSession,
    limit: Limit = DEFAULT_LIMIT,
    offset: Offset = 0,
    state: Literal["firing", "resolved", "any"] = "any",
    rule: Filter = None,
) -> dict[str, Any]:
    """Alerts, newest first, by state and rule."""
    query = select(Alert)
    if state != "any":
        query = query.where(Alert.state == state)
    if rule is not None:
        query = query.where(Alert.rule == rule)

    def out(rows: Sequence[Any]) -> list[dict[str, Any]]:
        return [
            {
                "fingerprint": a.fingerprint,
                "rule": a.rule,
                "severity": a.severity,
                "labels": a.labels or {},
                "summary": a.summary,
                "state": a.state,
                "started_at": a.started_at,
                "resolved_at": a.resolved_at,
                "suppressed": a.suppressed,
            }
            for (a,) in rows
        ]

    order = [Alert.started_at.desc(), Alert.id.desc()]
    return page(session, query, order, limit, offset, out)
