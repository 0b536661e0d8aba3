"""Per-provider, per-month incident response statistics from the stored incidents."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy.orm import Session

from monitor.history.incidents import ProviderIncident, started_in
from monitor.sla.intervals import Span
from monitor.sla.months import month_bounds
from monitor.sla.response import (
    Lifecycle,
    Summary,
    summarize,
    time_to_acknowledge,
    time_to_resolve,
)


@dataclass(frozen=True, slots=True)
class ResponseStats:
    provider: str
    month: str
    incidents: int
    relevant: int
    tta: Summary
    ttr: Summary

    def to_json(self) -> dict[str, object]:
        return {
            "provider": self.provider,
            "month": self.month,
            "incidents": self.incidents,
            "relevant": self.relevant,
            "tta_count": self.tta.count,
            "tta_median_s": self.tta.median_s,
            "tta_p90_s": self.tta.p90_s,
            "ttr_count": self.ttr.count,
            "ttr_median_s": self.ttr.median_s,
            "ttr_p90_s": self.ttr.p90_s,
        }


def response_stats(
    session: Session, month: str, *, relevant_only: bool = False
) -> list[ResponseStats]:
    """Incidents (not maintenance) that started in ``month``, summarized per provider."""
    grouped: dict[str, list[ProviderIncident]] = {}
    for row in started_in(session, Span(*month_bounds(month))):
        grouped.setdefault(row.provider, []).append(row)
    return [_stats(slug, month, rows, relevant_only) for slug, rows in grouped.items()]


def _stats(
    slug: str, month: str, rows: list[ProviderIncident], relevant_only: bool
) -> ResponseStats:
    chosen = [r for r in rows if r.relevant or not relevant_only]
    lives = [
        Lifecycle(r.started_at, r.acknowledged_at, r.identified_at, r.resolved_at) for r in chosen
    ]
    return ResponseStats(
        provider=slug,
        month=month,
        incidents=len(chosen),
        relevant=sum(r.relevant for r in rows),
        tta=summarize(time_to_acknowledge(life) for life in lives),
        ttr=summarize(time_to_resolve(life) for life in lives),
    )
