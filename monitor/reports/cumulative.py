"""Each target's observed time and SLA downtime over all stored history, as the monthly report
counts them: what ``/metrics`` serves as the counters ``slamon_target_observed_seconds_total``
and ``slamon_target_downtime_seconds_total``, so ``1 − increase(downtime[w]) /
increase(observed[w])`` is the report's availability over any window ``w``.

The totals are the sum of each month's report (the report's own arithmetic: observed windows
inside the target's life, outages where it was watched, maintenance and the provider's record
left out as its policy says, whole minutes where it counts them), and they must only grow, or
Prometheus reads a reset. One thing makes a report's downtime shrink as time goes on: an
outage is counted up to now while open, and when recovery is confirmed it ends where the
recovery began, a few probes back. So here an open outage counts only up to ``now − settle``,
``settle`` being the longest such confirmation can take for its target (``settle_of``); where
nothing is open that is the report itself. History written after the fact (imported outages,
a maintenance window configured for the past, a target deleted) can still lower a total:
Prometheus then sees a counter reset, as for a restarted exporter.

Cheap to scrape: the running month is the month-to-date report every surface shares (while an
outage is open, the month is read once more and only the targets it cuts are assembled again),
a month that ended more than ``settle`` ago is kept for ``CLOSED_MAX_AGE`` (its history changes
only when rewritten), and at most one kept month is rebuilt per call once they age.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta

from sqlalchemy.orm import Session

from monitor.config import Config
from monitor.db.models import Target
from monitor.history import lifetimes
from monitor.history.spans import REACHABLE
from monitor.reports.assemble import assemble
from monitor.reports.inputs import TargetInput, gather
from monitor.reports.model import MonthlyReport
from monitor.reports.service import build_monthly
from monitor.sla.intervals import Span
from monitor.sla.months import add_months, month_of, month_period
from monitor.sla.policy import SlaPolicy
from monitor.sla.policy_config import policies_for

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
# a month that ended longer ago than this (or than any target's settle) is final
CLOSED_AFTER = timedelta(hours=1)
# a final month's figures are read again this often: history rewritten after the fact shows
CLOSED_MAX_AGE = timedelta(hours=1)
# clocks of the worker and the API apart, a round's transaction still committing
SETTLE_MARGIN = timedelta(seconds=5)


@dataclass(frozen=True, slots=True)
class Totals:
    """A target's observed seconds and the seconds its SLA policy counts as downtime."""

    observed_s: float = 0.0
    downtime_s: float = 0.0

    def __add__(self, other: Totals) -> Totals:
        return Totals(self.observed_s + other.observed_s, self.downtime_s + other.downtime_s)


def settle_of(target: Target, retry_interval_s: float, judge_every_s: float) -> timedelta:
    """How far back a confirmed recovery can date the end of ``target``'s outage: the outage
    ends at the first good result, and closes once ``recovery_confirmations`` (by default its
    ``confirmations``) results in a row agree, each a retry (or, for a pushed kind, a judging
    round every ``judge_every_s``) plus a probe's timeout later; one interval more for the
    first result to land, and a margin."""
    confirmations = target.recovery_confirmations or target.confirmations
    step = max(retry_interval_s, judge_every_s) + target.timeout_s
    return timedelta(seconds=target.interval_s + confirmations * step) + SETTLE_MARGIN


def figures(report: MonthlyReport) -> dict[str, Totals]:
    """Each target's totals in ``report``."""
    return {t.name: Totals(t.observed_s, t.sla_downtime_s) for t in report.targets}


def has_open_outage(report: MonthlyReport) -> bool:
    """Whether any target's reachable outage was still open at the report's end."""
    return any(
        row.end is None and row.series == REACHABLE for t in report.targets for row in t.outages
    )


def cut_open_outages(target: TargetInput, at: datetime) -> TargetInput:
    """``target`` with each reachable outage still open counted only up to ``at`` (one that
    began later is left out), its stored causes kept in step."""
    kept, causes = [], []
    for k, (series, span, still_open) in enumerate(target.outages):
        if still_open and series == REACHABLE:
            if span.start >= at:
                continue
            span = Span(span.start, min(span.end, at))
        kept.append((series, span, still_open))
        causes.append(target.causes[k] if k < len(target.causes) else None)
    return replace(target, outages=tuple(kept), causes=tuple(causes))


def settled_month(
    session: Session,
    config: Config,
    month: str,
    now: datetime,
    settles: Mapping[str, timedelta],
    running: MonthlyReport | None = None,
) -> dict[str, Totals]:
    """``month``'s totals as of ``now`` with every open outage cut at ``now`` minus its
    target's settle (``settles`` by name; ``CLOSED_AFTER`` for one not there). ``running``, the
    month's report as of ``now`` when the caller has it, is the answer for every target whose
    outages the cut leaves alone (all of them when nothing is open); only the others are
    assembled again (with the region-scoped targets of their region: their downtime is the
    region's)."""
    if running is not None and not has_open_outage(running):
        return figures(running)
    inputs = gather(session, month, now, config)
    policies = policies_for(config.sla_policies)
    cut = [cut_open_outages(t, now - settles.get(t.name, CLOSED_AFTER)) for t in inputs.targets]
    if running is None:
        again = cut
    else:
        changed = [c for c, t in zip(cut, inputs.targets, strict=True) if c != t]
        names = {c.name for c in changed}
        regions = {_region(c, policies) for c in changed} - {None}
        again = [c for c in cut if c.name in names or _region(c, policies) in regions]
    lean = replace(inputs, targets=tuple(again), incidents=(), ledger=())
    return {**(figures(running) if running else {}), **figures(assemble(lean, policies, now))}


def _region(target: TargetInput, policies: Mapping[str, SlaPolicy]) -> tuple[str, str] | None:
    """The provider and region whose downtime a region-scoped policy gives ``target``."""
    policy = policies.get(target.sla or "")
    if policy is None or policy.scope != "region":
        return None
    return (target.provider or policy.provider, target.region or "")


def months_between(first: datetime, last: datetime) -> list[str]:
    """Every ``YYYY-MM`` from ``first``'s month to ``last``'s, both included (none if
    ``last`` is earlier)."""
    months = []
    at = month_period(month_of(first)).start
    while at <= last:
        months.append(month_of(at))
        at = add_months(at, 1)
    return months


class ClosedMonths:
    """Final months' totals per config, each kept for ``max_age``; a call rebuilds every
    month it has never seen, but at most one that has aged (the rest are served a little
    older), so a deployment with years of history pays for them once, not every hour at once.
    Thread-safe; the entry keeps its config alive, so ``id(config)`` names no other one, and
    only the latest config's months are kept."""

    def __init__(self, max_age: timedelta = CLOSED_MAX_AGE) -> None:
        self.max_age = max_age
        self._entries: dict[tuple[int, str], tuple[Config, datetime, dict[str, Totals]]] = {}
        self._lock = threading.Lock()
        self.builds = 0

    def totals(
        self, session: Session, config: Config, months: Sequence[str], now: datetime
    ) -> list[dict[str, Totals]]:
        with self._lock:
            kept = {m: self._entries.get((id(config), m)) for m in months}
        missing = [m for m, entry in kept.items() if entry is None]
        aged = sorted(
            (entry[1], m) for m, entry in kept.items() if entry and now - entry[1] >= self.max_age
        )
        for month in [*missing, *(m for _, m in aged[:1])]:
            built = figures(build_monthly(session, month, now, config))
            self.builds += 1
            kept[month] = (config, now, built)
            with self._lock:
                # a config replaced (reloaded) leaves its months behind: drop them
                self._entries = {k: v for k, v in self._entries.items() if v[0] is config}
                self._entries[id(config), month] = (config, now, built)
        return [entry[2] for entry in kept.values() if entry is not None]

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


CLOSED = ClosedMonths()


def totals(
    session: Session, config: Config, now: datetime, running: MonthlyReport
) -> dict[str, Totals]:
    """Every target's totals over all stored history as of ``now`` (retired ones included),
    by name; ``running`` is the running month's report (``service.month_to_date``)."""
    alive = lifetimes.alive_in(session, Span(EPOCH, now))
    starts = [a.lifetime.start for a in alive if a.lifetime is not None]
    if not starts:
        return {}
    settles = {
        a.target.name: settle_of(a.target, config.probes.retry_interval, config.schedule.heartbeats)
        for a in alive
    }
    final_before = now - max([CLOSED_AFTER, *settles.values()])
    months = months_between(min(starts), now)
    closed = [m for m in months if month_period(m).end <= final_before]
    found = CLOSED.totals(session, config, closed, now)
    for month in months[len(closed) :]:
        mine = running if month == running.month else None
        found.append(settled_month(session, config, month, now, settles, mine))
    return _summed(found)


def _summed(months: Iterable[Mapping[str, Totals]]) -> dict[str, Totals]:
    summed: dict[str, Totals] = {}
    for month in months:
        for name, each in month.items():
            summed[name] = summed.get(name, Totals()) + each
    return summed
