"""GET /api/v1/sla: the month's SLA so far per provider, target and pool."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Response
from pydantic import AfterValidator

from monitor.api.auth import DbSession, ReadToken
from monitor.api.deps import AppState, app_state
from monitor.api.errors import error_responses
from monitor.api.schemas import Month, SlaOut, reportable_month
from monitor.db.base import utcnow
from monitor.reports.model import MonthlyReport
from monitor.reports.service import build_monthly, month_to_date
from monitor.sla.months import month_of

router = APIRouter(prefix="/api/v1", responses=error_responses(401, 403, 422, 429))


@router.get("/sla", response_model=SlaOut, tags=["sla"], responses=error_responses(404))
def month_to_date_sla(
    _token: ReadToken,
    session: DbSession,
    state: Annotated[AppState, Depends(app_state)],
    month: Annotated[
        Month | None,
        AfterValidator(reportable_month),
        Query(description="YYYY-MM (UTC); default this month"),
    ] = None,
) -> Response:
    """The month's SLA so far (the whole month once it is over) per provider, target and
    pool, as the monthly report counts it. Not a list: one month, not paginated. 404 for a
    month that has not begun."""
    now = utcnow()
    if month is None or month == month_of(now):
        report = month_to_date(session, state.config, now)  # the figures every surface shows
    else:
        report = build_monthly(session, month, now, state.config)
    return Response(_encoded(report), media_type="application/json")


_ENCODED: tuple[MonthlyReport, bytes] | None = None  # the last report and its body


def _encoded(report: MonthlyReport) -> bytes:
    """The report as the response body, validated against ``SlaOut``; the month-to-date
    report is kept between writes, and so is its body (a thousand targets' rows)."""
    global _ENCODED
    kept = _ENCODED
    if kept is not None and kept[0] is report:
        return kept[1]
    body = SlaOut.model_validate(_document(report)).model_dump_json().encode()
    _ENCODED = (report, body)
    return body


def _document(report: MonthlyReport) -> dict[str, Any]:
    return {
        "month": report.month,
        "period_start": report.period_start,
        "period_end": report.period_end,
        "generated_at": report.generated_at,
        "policy_hash": report.policy_hash,
        "providers": [
            {
                "slug": p.slug,
                "name": p.name,
                "sla": p.sla,
                "uptime_pct": p.uptime_pct,
                "target_pct": p.target_pct,
                "credit_pct": p.credit_pct,
                "credit_amount": p.credit_amount,
                "unknown_s": p.unknown_s,
                "observed_downtime_s": p.observed_downtime_s,
                "acknowledged_downtime_s": p.acknowledged_downtime_s,
                "sla_downtime_s": p.sla_downtime_s,
                "incidents": p.incidents,
            }
            for p in report.providers
        ],
        "targets": [
            {
                "name": t.name,
                "provider": t.provider,
                "region": t.region,
                "pool": t.pool,
                "sla": t.sla,
                "uptime_pct": t.uptime_pct,
                "target_pct": t.target_pct,
                "credit_pct": t.credit_pct,
                "observed_s": t.observed_s,
                "unknown_s": t.unknown_s,
                "downtime_s": t.downtime_s,
                "sla_downtime_s": t.sla_downtime_s,
                "usable_downtime_s": t.usable_downtime_s,
                "observed_uptime_pct": t.observed_uptime_pct,
                "slow_s": t.slow_s,
            }
            for t in report.targets
        ],
        "pools": [
            {
                "name": p.name,
                "members": p.members,
                "min_up": p.min_up,
                "availability_pct": p.availability_pct,
                "unknown_s": p.unknown_s,
            }
            for p in report.pools
        ],
    }
