"""Alert rules (pure): what fires and what resolves, with stable fingerprints.

A signal says "this alert should be firing (or resolved) as of ``at``"; the engine turns signals
into state changes and deliveries, so sending the same signal twice changes nothing.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime

from monitor.probes.kind import UsableRule
from monitor.probes.kinds import KINDS
from monitor.probes.model import cause_text
from monitor.probes.state import DOWN, UP
from monitor.probes.vantages import VantageHealth
from monitor.reports.model import MonthlyReport
from monitor.sla.slowdown import Slowdown

IMPACT_SEVERITY = {"critical": "critical", "major": "critical", "minor": "warning", "none": "info"}


@dataclass(frozen=True, slots=True)
class Signal:
    rule: str
    fingerprint: str
    severity: str
    labels: dict[str, str]
    summary: str
    firing: bool
    at: datetime
    extra: dict[str, object] = field(default_factory=dict)


def fingerprint(rule: str, labels: dict[str, str]) -> str:
    """Stable across restarts and replicas: the rule and its identifying labels."""
    text = rule + "|" + "|".join(f"{k}={labels[k]}" for k in sorted(labels))
    return hashlib.sha256(text.encode()).hexdigest()[:32]


@dataclass(frozen=True, slots=True)
class TargetFacts:
    name: str
    kind: str
    provider: str | None
    region: str | None
    zone: str | None
    pool: str | None
    gpus: int = 0


def target_labels(target: TargetFacts) -> dict[str, str]:
    labels = {
        "target": target.name,
        "provider": target.provider,
        "region": target.region,
        "zone": target.zone,
        "pool": target.pool,
    }
    return {k: v for k, v in labels.items() if v}


def from_transition(
    target: TargetFacts,
    series: str,
    state: str,
    previous: str,
    at: datetime,
    detail: str = "",
    *,
    causes: frozenset[str] = frozenset(),
    was: frozenset[str] | None = None,
) -> list[Signal]:
    """``target_down`` for the reachable series. For the usable one, the rules the target's
    kind names for the outage's ``causes``: ``heartbeat_stalled`` for a stalled step,
    ``gpu_health`` for GPU readings, both for both (each owner hears of its part). A cause
    change (``was``: the causes before) fires the new causes' rules and resolves the rules
    only the old ones raised; a recovery resolves every usable rule of the kind (resolving one
    that is not firing changes nothing). Coming up from unknown is not a recovery."""
    if state not in (UP, DOWN) or (state == UP and previous != DOWN):
        return []
    if series == "reachable":
        return [_target_signal(target, "target_down", "critical", "is down", state, at, detail)]
    kind = KINDS.get(target.kind)
    if kind is None or not kind.usable:
        return []  # a kind whose usable series only mirrors reachability raises nothing
    if state == UP:
        return [_target_signal(target, r.rule, r.severity, r.what, UP, at) for r in kind.usable]
    firing = _distinct(kind.usable_rules(causes))
    extra: dict[str, object] = {"cause": cause_text(causes)} if causes else {}
    signals = [
        _target_signal(target, r.rule, r.severity, r.what, DOWN, at, detail, extra) for r in firing
    ]
    if was is not None:
        still = ", ".join(CAUSE_WORDS.get(c, c) for c in sorted(causes))
        summary = f"{target.name} has recovered from this, but is still not usable: {still}"
        for rule in _distinct(kind.usable_rules(was)):
            if rule not in firing:
                identity = fingerprint(rule.rule, {"target": target.name})
                labels = target_labels(target)
                signals.append(
                    Signal(rule.rule, identity, rule.severity, labels, summary, False, at, extra)
                )
    return signals


CAUSE_WORDS = {
    "gpu_hardware": "its GPUs are not usable",
    "stalled_step": "its step has stopped advancing",
}


def _distinct(rules: Iterable[UsableRule]) -> list[UsableRule]:
    """One of each rule name (a kind may name one rule for several causes)."""
    seen: dict[str, UsableRule] = {}
    for rule in rules:
        seen.setdefault(rule.rule, rule)
    return list(seen.values())


def _target_signal(
    target: TargetFacts,
    rule: str,
    severity: str,
    what: str,
    state: str,
    at: datetime,
    detail: str = "",
    extra: dict[str, object] | None = None,
) -> Signal:
    """``rule`` for ``target``: firing when ``state`` is down (``<target> <what>: <detail>``),
    resolved when it is up."""
    labels = target_labels(target)
    identity = {"target": target.name}
    summary = f"{target.name} {what}" if state == DOWN else f"{target.name} has recovered"
    if detail and state == DOWN:
        summary += f": {detail}"
    return Signal(
        rule, fingerprint(rule, identity), severity, labels, summary, state == DOWN, at, extra or {}
    )


def from_incident(
    provider: str,
    source_id: str,
    title: str,
    impact: str,
    regions: list[str],
    is_open: bool,
    at: datetime,
    url: str | None,
) -> Signal:
    """``provider_incident``: a relevant provider incident is open (firing) or closed."""
    labels = {"provider": provider, "incident": source_id}
    if regions:
        labels["region"] = ",".join(regions[:5])
    severity = IMPACT_SEVERITY.get(impact, "warning")
    extra: dict[str, object] = {"url": url} if url else {}
    return Signal(
        "provider_incident",
        fingerprint("provider_incident", {"provider": provider, "incident": source_id}),
        severity,
        labels,
        f"{provider}: {title}",
        is_open,
        at,
        extra,
    )


def from_feed(provider: str, url: str, stale: bool, at: datetime, error: str | None) -> Signal:
    """``feed_stale``: a provider's status feed has not been read successfully for too long."""
    labels = {"provider": provider, "feed": url}
    summary = f"{provider} status feed unreadable" + (f": {error}" if error and stale else "")
    return Signal(
        "feed_stale", fingerprint("feed_stale", labels), "warning", labels, summary, stale, at
    )


def from_discovery(
    source: str, kind: str, failing: bool, at: datetime, error: str | None
) -> Signal:
    """``discovery_failing``: a discovery source's sweeps have failed for too long (and retired
    nothing meanwhile: the fleet slamon shows may be out of date)."""
    labels = {"source": source, "kind": kind}
    summary = f"discovery source {source} ({kind}) failing" + (
        f": {error}" if error and failing else ""
    )
    return Signal(
        "discovery_failing",
        fingerprint("discovery_failing", labels),
        "warning",
        labels,
        summary,
        failing,
        at,
    )


def from_slowdown(
    target: TargetFacts, slowdown: Slowdown, share: float, unit: str, at: datetime
) -> Signal:
    """``training_slowdown``: the job's throughput has stayed below ``share`` of its trailing
    median. Dated to the first slow sample; resolved when a sample is back above the line."""
    identity = {"target": target.name}
    if slowdown.slow and slowdown.baseline and slowdown.latest is not None:
        pct = 100 * slowdown.latest / slowdown.baseline
        summary = (
            f"{target.name} is training at {pct:.0f} % of its usual throughput "
            f"({slowdown.latest:,.1f} {unit}/s against a median of {slowdown.baseline:,.1f}; "
            f"the line is {100 * share:.0f} %)"
        )
    else:
        summary = f"{target.name} is training at its usual throughput again"
    extra: dict[str, object] = {"unit": unit}
    if slowdown.baseline is not None:
        extra["baseline"] = round(slowdown.baseline, 3)
    if slowdown.latest is not None:
        extra["latest"] = round(slowdown.latest, 3)
    return Signal(
        "training_slowdown",
        fingerprint("training_slowdown", identity),
        "warning",
        target_labels(target),
        summary,
        slowdown.slow,
        slowdown.since or at,
        extra,
    )


def from_vantage(vantage: VantageHealth, at: datetime) -> Signal:
    """``vantage_blind``: a vantage disagrees with the quorum on (nearly) every target it
    probes — its own network is failing, not the fleet. Dated to when the disagreement began."""
    labels = {"vantage": vantage.vantage}
    blind = vantage.blind_since is not None
    agreed = vantage.last_agreed_at.isoformat() if vantage.last_agreed_at else "never"
    summary = (
        f"vantage {vantage.vantage} is blind: it disagrees with the quorum on "
        f"{vantage.disagreeing} of {vantage.targets} targets (last agreed {agreed})"
        if blind
        else f"vantage {vantage.vantage} agrees with the quorum again"
        if vantage.targets
        else f"vantage {vantage.vantage} has stopped probing"
    )
    return Signal(
        "vantage_blind",
        fingerprint("vantage_blind", labels),
        "warning",
        labels,
        summary,
        blind,
        vantage.blind_since or at,
        {"last_agreed_at": agreed},
    )


def announcement(report: MonthlyReport, now: datetime) -> Signal:
    """The message that tells the channels a month's report is ready, and what is owed."""
    owed = [f"{p.slug} {p.credit_pct:.1f}%" for p in report.providers if p.credit_amount > 0]
    summary = f"SLA report for {report.month} is ready" + (
        f"; credits owed: {', '.join(owed)}" if owed else "; no credits owed"
    )
    labels = {"month": report.month, "policy_hash": report.policy_hash[:12]}
    return Signal(
        "monthly_report",
        fingerprint("monthly_report", {"month": report.month}),
        "info",
        labels,
        summary,
        True,
        now,
    )
