"""Alert rules (pure): what fires and what resolves, with stable fingerprints.

A signal says "this alert should be firing (or resolved) as of ``at``"; the engine turns signals
into state changes and deliveries, so sending the same signal twice changes nothing.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta

from monitor.events.words import one_line
from monitor.history.account_events import AccountEventView
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
    # while firing, a reminder is due from then: sent once (monitor/alerts/engine.py)
    remind_at: datetime | None = None


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


# What the providers tell the account (monitor/history/account_events.py reads it): a notice
# that an instance is taken back, maintenance or a retirement ahead, an issue on the user's
# targets. An event of the user's own doing (``user_initiated``) raises nothing.
ACCOUNT_RULES = ("interruption_notice", "scheduled_maintenance", "provider_event")
ACTIVE = frozenset({"upcoming", "open"})
# Providers whose events were paged already: the team's Alertmanager routed its own Prometheus
# alerts before delivering them to slamon (POST /api/v1/alertmanager); paging again would be a
# second pager, and through an alertmanager channel an echo back into Alertmanager.
ROUTED_ELSEWHERE = frozenset({"prometheus"})
MAINTENANCE_KINDS = frozenset({"scheduled_maintenance", "retirement"})
INTERRUPTION_GRACE = timedelta(minutes=10)  # a notice this long past its deadline is over
# A box's metadata service says when a notice appears, never that it is over: a notice with no
# time of its own (a rebalance recommendation, an Azure event not yet scheduled) is over this
# long after it was last heard, and an agent's maintenance notice this long after it starts.
AGENT_NOTICE_LIFETIME = timedelta(hours=1)
KIND_WORDS = {"scheduled_maintenance": "scheduled maintenance", "retirement": "retirement"}
NAMED_TARGETS = 5  # a summary names this many targets, then "and N more"
WORDS_CHARS = 200  # the provider's words in a summary: their first line, cut here


def from_account_event(
    event: AccountEventView, targets: Sequence[TargetFacts], now: datetime, reminder: timedelta
) -> list[Signal]:
    """The alerts ``event`` raises about ``targets`` (the live targets it is about, in its
    order): ``interruption_notice`` per target for a preemption, ``scheduled_maintenance`` for
    maintenance or a retirement (reminding ``reminder`` before it starts), ``provider_event``
    for an issue; nothing for an event about none of them, of the user's own doing, or
    delivered by the team's own Alertmanager (``ROUTED_ELSEWHERE``)."""
    if not targets or event.provider in ROUTED_ELSEWHERE:
        return []
    if event.kind == "preemption":
        return [from_interruption(event, target, now) for target in targets]
    if event.kind in MAINTENANCE_KINDS:
        return [from_maintenance(event, targets, now, reminder)]
    if event.kind == "issue":
        return [from_provider_event(event, targets, now)]
    return []


def from_interruption(event: AccountEventView, target: TargetFacts, now: datetime) -> Signal:
    """``interruption_notice`` (critical): the provider takes ``target`` back at the event's
    start, its deadline. Firing while the notice is upcoming or open and not
    ``INTERRUPTION_GRACE`` past its deadline (a notice without one: ``AGENT_NOTICE_LIFETIME``
    after it was last heard);
    resolved once it is closed or that late. ``extra`` carries the ``deadline`` (ISO 8601 UTC,
    or None) and the whole ``seconds_left`` at ``now`` (None without a deadline, 0 once past)."""
    deadline = event.starts_at
    facts = replace(target, provider=target.provider or event.provider)
    labels = {**target_labels(facts), "kind": event.kind, "event": event.key}
    identity = {"target": target.name, "provider": event.provider, "event": event.key}
    left = None if deadline is None else max(0, int((deadline - now).total_seconds()))
    late = (
        now >= deadline + INTERRUPTION_GRACE
        if deadline is not None
        else now >= event.last_seen_at + AGENT_NOTICE_LIFETIME
    )
    what = f"{target.name}: {event.provider} {event.kind}"
    if event.status in ACTIVE and not late:
        firing, at = True, min(event.first_seen_at, now)
        when = (
            " (no deadline given)" if deadline is None else f" at {_utc(deadline)} ({left} s left)"
        )
        summary = what + when + _words(event)
    elif event.status in ACTIVE and deadline is not None:
        firing, at = False, deadline + INTERRUPTION_GRACE
        summary = f"{what} at {_utc(deadline)} is past"
    elif event.status in ACTIVE:
        firing, at = False, event.last_seen_at + AGENT_NOTICE_LIFETIME
        summary = f"{what} (no deadline given) was last heard at {_utc(event.last_seen_at)}"
    else:
        firing, at, summary = False, _ended_at(event, now), f"{what} is over"
    extra: dict[str, object] = {
        "deadline": _iso(deadline),
        "seconds_left": left,
        "event_id": event.key,
        "event_kind": event.kind,
    }
    rule = "interruption_notice"
    return Signal(rule, fingerprint(rule, identity), "critical", labels, summary, firing, at, extra)


def from_maintenance(
    event: AccountEventView, targets: Sequence[TargetFacts], now: datetime, reminder: timedelta
) -> Signal:
    """``scheduled_maintenance`` (warning): the provider will take ``targets`` down for
    maintenance, or retire them. Firing from when it is announced while it is upcoming or open,
    with a reminder due ``reminder`` before it starts (``remind_at``, only while it has not
    started); resolved once it is closed or its end has passed."""
    labels = {"provider": event.provider, "event": event.key, "kind": event.kind}
    if event.region:
        labels["region"] = event.region
    identity = {"provider": event.provider, "event": event.key}
    names = [t.name for t in targets]
    ended = event.ends_at is not None and event.ends_at <= now
    if event.via == "agent" and event.ends_at is None:  # the box never hears it end
        ended = now >= (event.starts_at or event.last_seen_at) + AGENT_NOTICE_LIFETIME
    what = f"{event.provider} {KIND_WORDS[event.kind]} of {_named(names)}"
    remind_at = None
    if event.status in ACTIVE and not ended:
        firing, at = True, min(event.first_seen_at, now)
        summary = what + _window(event) + _words(event)
        if event.starts_at is not None and now < event.starts_at:
            remind_at = event.starts_at - reminder
    else:
        firing, at, summary = False, _ended_at(event, now), f"{what} is over"
    extra: dict[str, object] = {
        "event_id": event.key,
        "event_kind": event.kind,
        "starts_at": _iso(event.starts_at),
        "ends_at": _iso(event.ends_at),
        "targets": names,
    }
    rule = "scheduled_maintenance"
    return Signal(
        rule, fingerprint(rule, identity), "warning", labels, summary, firing, at, extra, remind_at
    )


def from_provider_event(
    event: AccountEventView, targets: Sequence[TargetFacts], now: datetime
) -> Signal:
    """``provider_event`` (warning): the provider tells the account of an issue on ``targets``.
    Firing while it is upcoming or open, resolved once it is closed."""
    labels = {"provider": event.provider, "event": event.key}
    if event.region:
        labels["region"] = event.region
    identity = {"provider": event.provider, "event": event.key}
    names = [t.name for t in targets]
    what = f"{event.provider} issue on {_named(names)}"
    if event.status in ACTIVE:
        firing, at, summary = True, min(event.first_seen_at, now), what + _words(event)
    else:
        firing, at, summary = False, _ended_at(event, now), f"{what} is over"
    extra: dict[str, object] = {"event_id": event.key, "service": event.service, "targets": names}
    rule = "provider_event"
    return Signal(rule, fingerprint(rule, identity), "warning", labels, summary, firing, at, extra)


def _words(event: AccountEventView) -> str:
    """``: `` and the provider's own words (the first line of its detail, else its title)."""
    words = one_line(event.detail or event.title, WORDS_CHARS)
    return f": {words}" if words else ""


def _window(event: AccountEventView) -> str:
    if event.starts_at is None:
        return ""
    until = f" until {_utc(event.ends_at)}" if event.ends_at else ""
    return f" at {_utc(event.starts_at)}{until}"


def _named(names: Sequence[str]) -> str:
    shown = ", ".join(names[:NAMED_TARGETS])
    more = len(names) - NAMED_TARGETS
    return f"{shown} and {more} more" if more > 0 else shown


def _ended_at(event: AccountEventView, now: datetime) -> datetime:
    """When a closed event ended as far as slamon can tell: its end, not before slamon first
    saw it, not after ``now``."""
    return min(max(event.ends_at or now, event.first_seen_at), now)


def _utc(at: datetime) -> str:
    """``2026-12-06 10:02:00Z``: a moment as a summary says it."""
    return at.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%SZ")


def _iso(at: datetime | None) -> str | None:
    """``2026-12-06T10:02:00Z``: a moment as a message's ``extra`` carries it."""
    return None if at is None else at.astimezone(UTC).isoformat().replace("+00:00", "Z")


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
