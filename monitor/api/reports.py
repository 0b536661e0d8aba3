"""Monthly SLA reports over the API: generate and download in any of the four formats."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Depends, Query, Response

from monitor.api.auth import DbSession, ReadToken
from monitor.api.deps import AppState, app_state
from monitor.api.errors import error_responses
from monitor.db.base import utcnow
from monitor.reports.service import build_monthly, keep, render
from monitor.sla.months import MONTH_PATTERN

router = APIRouter(
    prefix="/api/v1/reports",
    tags=["reports"],
    responses=error_responses(401, 403, 404, 422, 429),
)


@router.get("/monthly", response_class=Response)
def monthly_report(
    _token: ReadToken,
    session: DbSession,
    state: Annotated[AppState, Depends(app_state)],
    month: Annotated[str, Query(pattern=MONTH_PATTERN, description="YYYY-MM (UTC)")],
    format: Annotated[Literal["html", "pdf", "csv", "json"], Query()] = "json",
) -> Response:
    """The month's report (a running month is reported so far); kept for later download.
    404 for a month that has not begun."""
    rendered = render(build_monthly(session, month, utcnow(), state.config), format)
    keep(session, rendered)
    session.commit()
    filename = f"slamon-sla-{month}.{format}"
    return Response(
        rendered.content,
        media_type=rendered.content_type,
        headers={
            "Content-Disposition": f'attachment; filename="{filename}"',
            "X-Slamon-Policy-Hash": rendered.report.policy_hash,
        },
    )
