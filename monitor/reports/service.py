"""Building, rendering and keeping monthly reports: what the CLI, the API and the beat task call."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy.orm import Session

from monitor.config import Config
from monitor.db.dialect import upsert
from monitor.db.models import CreditClaim, Report
from monitor.history.generation import READ_MAX_AGE, ReadCache
from monitor.reports.assemble import assemble
from monitor.reports.inputs import gather
from monitor.reports.model import MonthlyReport
from monitor.sla.months import month_of
from monitor.sla.policy_config import policies_for

FORMATS = ("html", "pdf", "csv", "json")


@dataclass(frozen=True, slots=True)
class Rendered:
    report: MonthlyReport
    format: str
    content: bytes
    content_type: str


def build_monthly(session: Session, month: str, now: datetime, config: Config) -> MonthlyReport:
    return assemble(gather(session, month, now, config), policies_for(config.sla_policies), now)


# (the config, its report): the entry keeps the config alive, so its id names no other one
MONTH_TO_DATE: ReadCache[tuple[Config, MonthlyReport]] = ReadCache(READ_MAX_AGE)


def month_to_date(session: Session, config: Config, now: datetime) -> MonthlyReport:
    """The running month's report as of ``now``, the one every surface's month-to-date figures
    come from (the status page, ``/api/v1/sla``, ``/metrics``). Kept per config until a write
    to what happened (``monitor.history.generation``) or ``MONTH_TO_DATE.max_age``."""
    month = month_of(now)
    built = MONTH_TO_DATE.get(
        session,
        (month, id(config)),
        now,
        lambda: (config, build_monthly(session, month, now, config)),
    )
    return built.value[1]


def render(report: MonthlyReport, fmt: str) -> Rendered:
    from monitor.reports.render.formats import RENDERERS

    renderer = RENDERERS[fmt]
    return Rendered(report, fmt, renderer.render(report), renderer.content_type)


def keep(session: Session, rendered: Rendered) -> None:
    """Store the rendered report; the same month, format and policy hash replaces the old one."""
    row = {
        "month": rendered.report.month,
        "format": rendered.format,
        "generated_at": rendered.report.generated_at,
        "policy_hash": rendered.report.policy_hash,
        "content": rendered.content,
        "summary": {
            p.slug: {"uptime_pct": p.uptime_pct, "credit_pct": p.credit_pct}
            for p in rendered.report.providers
        },
    }
    upsert(
        session,
        Report,
        row,
        ["month", "format", "policy_hash"],
        ["generated_at", "content", "summary"],
    )


def record_claims(session: Session, report: MonthlyReport) -> int:
    """One credit claim per provider owed a credit this month (kept until marked claimed)."""
    rows = 0
    for provider in report.providers:
        if provider.credit_amount <= 0 or provider.claim_deadline is None:
            continue
        row = {
            "provider": provider.slug,
            "month": report.month,
            "scope": "provider",
            "credit_pct": provider.credit_pct,
            "deadline": provider.claim_deadline,
        }
        upsert(
            session, CreditClaim, row, ["provider", "month", "scope"], ["credit_pct", "deadline"]
        )
        rows += 1
    return rows
