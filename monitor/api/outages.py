"""GET /api/v1/outages: confirmed outages, newest first, filtered."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from fastapi import APIRouter

from monitor.api.auth import DbSession, ReadToken
from monitor.api.errors import error_responses
from monitor.api.queries import page
from monitor.api.schemas import Limit, Offset, OutagePage, TimeFilter
from monitor.api.targets import DEFAULT_LIMIT, Filter
from monitor.history.spans import outage_listing

router = APIRouter(prefix="/api/v1", responses=error_responses(401, 403, 422, 429))


@router.get("/outages", response_model=OutagePage, tags=["outages"])
def list_outages(
    _token: ReadToken,
    session: DbSession,
    limit: Limit = DEFAULT_LIMIT,
    offset: Offset = 0,
    target: Filter = None,
    provider: Filter = None,
    series: Literal["reachable", "usable"] | None = None,
    since: TimeFilter = None,
    until: TimeFilter = None,
    open: bool | None = None,
) -> dict[str, Any]:
    """Confirmed outages, newest first; ``since``/``until`` keep those overlapping the span
    (an open outage lasts until now), ``open=true`` only those still going on."""
    query, order = outage_listing(
        target=target,
        provider=provider,
        series=series,
        since=since,
        until=until,
        still_open=open,
    )

    def out(rows: Sequence[Any]) -> list[dict[str, Any]]:
        return [
            {
                "target": name,
                "series": o.series,
                "start": o.start,
                "end": o.end,
                "cause": o.cause,
                "source": o.source,
            }
            for o, name in rows
        ]

    return page(session, query, order, limit, offset, out)
