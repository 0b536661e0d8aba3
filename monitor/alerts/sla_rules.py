"""SLA alerts (pure): multi-window burn rate on the month's error budget, and month-to-date
breach. Burn windows follow the SRE workbook: 14.4× over 1 h and 5 min pages, 6× over 6 h and
30 min warns; the short window must hold enough probe samples that one blip cannot page."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from monitor.alerts.rules import Signal, TargetFacts, fingerprint, target_labels
from monitor.sla.intervals import Span, clip, merge, total
from monitor.sla.math import burn_rate, credit_pct, sla_downtime, uptime_pct
from monitor.sla.months import month_of, month_period
from monitor.sla.policy import SlaPolicy


@dataclass(frozen=True, slots=True)
class BurnWindow:
    long: timedelta
    short: timedelta
    factor: float
    severity: str


BURN_WINDOWS = (
    BurnWindow(timedelta(hours=1), timedelta(minutes=5), 14.4, "critical"),
    BurnWindow(timedelta(hours=6), timedelta(minutes=30), 6.0, "warning"),
)


def burn_windows(configured: Iterable[Any]) -> tuple[BurnWindow, ...]:
    """The configured window pairs (``alerts.burn_windows``), as the rule takes them."""
    return tuple(
        BurnWindow(
            timedelta(seconds=w.long), timedelta(seconds=w.short), float(w.factor), w.severity
        )
        for w in configured
    )


def _down_within(outages: Sequence[Span], now: datetime, window: timedelta) -> timedelta:
    return total(merge(clip(outages, now - window, now)))


def _name(window: timedelta) -> str:
    """``1h``, ``30m``, ``90s``: the largest unit that divides the window exactly."""
    seconds = int(window.total_seconds())
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size and seconds % size == 0:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


def burn_signal(
    target: TargetFacts,
    policy: SlaPolicy,
    outages: Sequence[Span],
    now: datetime,
    samples: Mapping[timedelta, int],
    min_samples: int,
    windows: Sequence[BurnWindow] = BURN_WINDOWS,
) -> Signal:
    """Firing when a window pair burns at or above its factor over both its long and short
    window, and its short window holds at least ``min_samples`` probe samples (``samples`` by
    short window): with one-minute probes the 5-minute page cannot fire on a single blip."""
    firing: BurnWindow | None = None
    rates: dict[str, object] = {}
    for window in windows:
        long_rate = burn_rate(
            _down_within(outages, now, window.long), window.long, policy.target_pct
        )
        short_rate = burn_rate(
            _down_within(outages, now, window.short), window.short, policy.target_pct
        )
        rates[_name(window.long)], rates[_name(window.short)] = long_rate, short_rate
        enough = samples.get(window.short, 0) >= min_samples
        if firing is None and enough and long_rate >= window.factor and short_rate >= window.factor:
            firing = window
    labels = {**target_labels(target), "sla": policy.name}
    summary = (
        f"{target.name} is burning its {policy.target_pct}% error budget at "
        f"{rates[_name(firing.long)]:.1f}× over {_name(firing.long)} (page at ≥ {firing.factor}×)"
        if firing
        else f"{target.name} burn rate is back to normal"
    )
    severity = firing.severity if firing else "warning"
    return Signal(
        "sla_burn",
        fingerprint("sla_burn", {"target": target.name}),
        severity,
        labels,
        summary,
        firing is not None,
        now,
        rates,
    )


def breach_signal(
    target: TargetFacts,
    policy: SlaPolicy,
    outages: Sequence[Span],
    maintenance: Sequence[Span],
    lifetime_start: datetime,
    now: datetime,
    user_initiated: Sequence[Span] = (),
) -> Signal:
    """Firing while month-to-date uptime, as the policy counts it, is below target (a credit is
    owed). One fingerprint per month, so a new month starts clean. ``maintenance`` holds the
    configured windows and the provider's maintenance the user accepted, ``user_initiated`` the
    provider's record of the user's own doing: left out as the monthly report leaves them out."""
    month = month_of(now)
    period = month_period(month)
    start = max(period.start, lifetime_start)
    elapsed = Span(start, max(now, start + timedelta(microseconds=1)))
    counted = sla_downtime(outages, maintenance, elapsed, policy, user_initiated)
    uptime = uptime_pct(counted, elapsed.end - elapsed.start)
    owed = credit_pct(uptime, policy)
    labels = {**target_labels(target), "sla": policy.name, "month": month}
    summary = (
        f"{target.name} month-to-date uptime {uptime:.3f}% is below its {policy.target_pct}% "
        f"SLA: a {owed:g}% credit is owed"
        if owed
        else f"{target.name} is within its SLA"
    )
    return Signal(
        "sla_breach",
        fingerprint("sla_breach", {"target": target.name, "month": month}),
        "warning",
        labels,
        summary,
        owed > 0,
        now,
        {"uptime_pct": uptime, "credit_pct": owed},
    )
