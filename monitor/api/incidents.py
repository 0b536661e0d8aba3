"""GET /api/v1/incidents: provider incidents, newest first, filtered."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from fastapi import APIRouter

from monitor.api.auth import DbSession, ReadToken
from monitor.api.errors import error_responses
from monitor.api.queries import page
from monitor.api.schemas import IncidentPage, Limit, Offset, TimeFilter
from monitor.api.targets import DEFAULT_LIMIT, Filter
from monitor.history.incidents import incident_listing

router = APIRouter(prefix="/api/v1", responses=error_responses(401, 403, 422, 429))


@router.get("/incidents", response_model=IncidentPage, tags=["incidents"])
def list_incidents(
    _token: ReadToken,
    session: DbSession,
    limit: Limit = DEFAULT_LIMIT,
    offset: Offset = 0,
    provider: Filter = None,
    region: Filter = None,
    status: Literal["open", "resolved", "any"] = "any",
    since: TimeFilter = None,
    until: TimeFilter = None,
    relevant: bool | None = None,
) -> dict[str, Any]:
    """Provider incidents, newest first. ``since``/``until`` keep the incidents that overlap
    that span (an open incident lasts until now); ``status=open`` is every unresolved one."""
    query, order = incident_listing(
        session,
        provider=provider,
        region=region,
        status=status,
        since=since,
        until=until,
        relevant=relevant,
    )

    def out(rows: Sequence[Any]) -> list[dict[str, Any]]:
        return [
            {
                "provider": slug,
                "source_id": i.source_id,
                "title": i.title,
                "status": i.status,
                "impact": i.impact,
                "is_maintenance": i.is_maintenance,
                "started_at": i.started_at,
                "acknowledged_at": i.acknowledged_at,
                "resolved_at": i.resolved_at,
                "regions": list(i.regions or []),
                "components": list(i.components or []),
                "relevant": i.relevant,
                "url": i.url,
            }
            for i, slug in rows
        ]

    return page(session, query, order, limit, offset, out)
