"""Where signals come from: probe transitions (in the probe round's own transaction) and a
periodic look at provider incidents and feed health."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from monitor.alerts.engine import Applied, apply
from monitor.alerts.rules import (
    Signal,
    TargetFacts,
    fingerprint,
    from_feed,
    from_incident,
    from_slowdown,
    from_transition,
    from_vantage,
    target_labels,
)
from monitor.alerts.sla_rules import breach_signal, burn_signal, burn_windows
from monitor.alerts.slowdown import SlowdownRule, judge_slowdown
from monitor.config.models import Config
from monitor.db.base import utcnow
from monitor.db.models import (
    Alert,
    CreditClaim,
    Feed,
    Heartbeat,
    Incident,
    Outage,
    ProbeResult,
    Provider,
    Target,
)
from monitor.probes.kinds import target_rules, usable_matters
from monitor.probes.kinds.heartbeat import work_unit
from monitor.probes.quorum import TargetTransition
from monitor.probes.round import TransitionHook
from monitor.probes.vantages import BlindRule, refresh
from monitor.reports.inputs import lifetime_starts
from monitor.sla.intervals import Span
from monitor.sla.maintenance import windows_for
from monitor.sla.months import month_of, month_period
from monitor.sla.policy import SlaPolicy, policies_for

RECENTLY_CLOSED = timedelta(days=1)
CLAIM_REMINDER = timedelta(days=7)


def on_transitions(
    session: Session, transitions: Sequence[TargetTransition], config: Config, now: datetime
) -> Applied:
    """Alerts for confirmed target transitions, committed with the results that caused them."""
    if not transitions:
        return Applied(0, 0)
    rows = {
        t.id: t
        for t in session.scalars(
            select(Target).where(Target.id.in_({t.target_id for t in transitions}))
        )
    }
    reachable_down = {
        t.target_id for t in transitions if t.series == "reachable" and t.transition.state == "down"
    }
    signals = []
    for change in transitions:
        row = rows.get(change.target_id)
        if row is None or (
            change.series == "usable" and not _usable_matters(row, change, reachable_down)
        ):
            continue
        facts = TargetFacts(
            row.name, row.kind, row.provider, row.region, row.zone, row.pool, row.gpus
        )
        signals += from_transition(
            facts,
            change.series,
            change.transition.state,
            change.transition.previous,
            change.transition.at,
            change.error or "",  # why a usable outage opened (or changed cause)
            causes=change.causes,
            was=change.was,
        )
    return apply(session, signals, config, now)


def alert_hook(config: Config) -> TransitionHook:
    """The hook a probe round runs in the transaction that stores its results: confirmed
    transitions become alerts (and deliveries in the outbox), committed with their cause."""

    def hook(session: Session, transitions: Sequence[TargetTransition], /) -> Applied:
        return on_transitions(session, transitions, config, utcnow())

    return hook


def _usable_matters(row: Target, change: TargetTransition, reachable_down: set[int]) -> bool:
    """The usable series speaks for itself only where it can differ from reachability (GPU
    scrapes, heartbeat progress), and not while the target is down outright."""
    return usable_matters(row.kind) and change.target_id not in reachable_down


# Rules whose every alert is re-judged on each evaluation: one that is firing but no longer
# asserted (its incident resolved long ago or vanished, its feed or target removed) resolves.
EVALUATED_RULES = (
    "provider_incident",
    "feed_stale",
    "sla_burn",
    "sla_breach",
    "vantage_blind",
    "training_slowdown",
)


def evaluate(session: Session, config: Config, now: datetime) -> Applied:
    """Provider incidents (open ones fire, closed ones resolve), stale feeds, SLA burn/breach,
    blind vantages; and resolves for every firing alert whose cause is gone."""
    signals = [
        *_incident_signals(session, now),
        *_feed_signals(session, config, now),
        *_sla_signals(session, config, now),
        *_vantage_signals(session, config, now),
        *_slowdown_signals(session, config, now),
    ]
    signals += _orphans(session, signals, now)
    return apply(session, [*signals, *_claim_signals(session, now)], config, now)


def _orphans(session: Session, signals: Sequence[Signal], now: datetime) -> list[Signal]:
    """Resolves for firing alerts that nothing asserts any more: an evaluated rule's alert no
    signal speaks for, or a target rule's alert whose target was retired or deleted. Resolves
    are never swallowed, however late slamon learns of them."""
    asserted = {s.fingerprint for s in signals}
    live = set(session.scalars(select(Target.name).where(Target.retired_at.is_(None))))
    firing = session.scalars(
        select(Alert).where(
            Alert.state == "firing", Alert.rule.in_((*EVALUATED_RULES, *target_rules()))
        )
    )
    orphans = []
    for alert in firing:
        if alert.rule in EVALUATED_RULES and alert.fingerprint not in asserted:
            why = "no longer reported"
        elif alert.rule in target_rules() and alert.labels.get("target") not in live:
            why = "target retired"
        else:
            continue
        summary = f"{alert.summary} — resolved: {why}"
        orphans.append(
            Signal(alert.rule, alert.fingerprint, alert.severity, alert.labels, summary, False, now)
        )
    return orphans


def slowdown_rule(config: Config) -> SlowdownRule:
    alerts = config.alerts
    return SlowdownRule(
        share=alerts.slowdown_share,
        after=timedelta(seconds=alerts.slowdown_after),
        trailing=timedelta(seconds=alerts.slowdown_trailing),
        min_samples=alerts.slowdown_min_samples,
    )


def _slowdown_signals(session: Session, config: Config, now: datetime) -> list[Signal]:
    """``training_slowdown`` for every live target whose heartbeats report throughput."""
    rule = slowdown_rule(config)
    rows = session.execute(
        select(Heartbeat.target_id, Heartbeat.at, Heartbeat.throughput, Heartbeat.payload)
        .join(Target, Target.id == Heartbeat.target_id)
        .where(
            Target.retired_at.is_(None),
            Heartbeat.throughput.is_not(None),
            Heartbeat.at > now - rule.span,
        )
    ).all()
    samples: dict[int, list[tuple[datetime, float]]] = {}
    units: dict[int, str] = {}
    for target_id, at, value, payload in rows:
        samples.setdefault(target_id, []).append((at, value))
        units[target_id] = work_unit(payload)
    if not samples:
        return []
    targets = session.scalars(select(Target).where(Target.id.in_(samples)))
    signals = []
    for t in targets:
        verdict = judge_slowdown(samples[t.id], now, rule)
        facts = TargetFacts(t.name, t.kind, t.provider, t.region, t.zone, t.pool, t.gpus)
        signals.append(from_slowdown(facts, verdict, rule.share, units[t.id], now))
    return signals


def _vantage_signals(session: Session, config: Config, now: datetime) -> list[Signal]:
    """``vantage_blind`` per vantage, from the verdicts ``refresh`` stores for the page."""
    rule = BlindRule(
        share=config.alerts.vantage_blind_share,
        after=timedelta(seconds=config.alerts.vantage_blind_after),
    )
    return [from_vantage(v, now) for v in refresh(session, now, rule)]


def _sla_signals(session: Session, config: Config, now: datetime) -> list[Signal]:
    policies = policies_for(config.sla_policies)
    live = session.scalars(select(Target).where(Target.retired_at.is_(None)))
    targets = [
        t for t in live if t.sla_policy in policies and policies[t.sla_policy].scope == "instance"
    ]
    if not targets:
        return []
    pairs = burn_windows(config.alerts.burn_windows)
    since = min(month_period(month_of(now)).start, now - max(w.long for w in pairs))
    spans = _outage_spans(session, [t.id for t in targets], since, now)
    ids = [t.id for t in targets]
    samples = {w.short: _samples(session, ids, now - w.short) for w in pairs}
    born = lifetime_starts(session, ids)  # imported history counts as the target's life
    signals = []
    for t in targets:
        policy = policies[t.sla_policy or ""]
        provider = t.provider or policy.provider  # rows stored before providers were inferred
        facts = TargetFacts(t.name, t.kind, provider, t.region, t.zone, t.pool, t.gpus)
        mine = spans.get(t.id, [])
        windows = [
            Span(w.start, w.end) for w in windows_for(target_labels(facts), config.maintenance)
        ]
        counts = {window: per_target.get(t.id, 0) for window, per_target in samples.items()}
        signals.append(
            burn_signal(facts, policy, mine, now, counts, config.alerts.burn_min_samples, pairs)
        )
        signals.append(breach_signal(facts, policy, mine, windows, born[t.id], now))
    return signals


def _claim_signals(session: Session, now: datetime) -> list[Signal]:
    """A week before a credit claim's deadline, once, unless it is marked as claimed."""
    due = select(CreditClaim).where(
        CreditClaim.claimed_at.is_(None),
        CreditClaim.deadline > now,
        CreditClaim.deadline <= now + CLAIM_REMINDER,
    )
    signals = []
    for claim in session.scalars(due):
        labels = {"provider": claim.provider, "month": claim.month}
        summary = (
            f"Claim the {claim.credit_pct:.1f}% {claim.provider} service credit for "
            f"{claim.month} before {claim.deadline:%Y-%m-%d %H:%M} UTC"
        )
        signals.append(
            Signal(
                "credit_claim_due",
                fingerprint("credit_claim_due", labels),
                "warning",
                labels,
                summary,
                True,
                now,
            )
        )
        claim.reminded_at = claim.reminded_at or now
    return signals


def _instance_scoped(policy: SlaPolicy) -> bool:
    """Region and pool policies are judged on the monthly report, not per target."""
    return policy.scope == "instance"


def _outage_spans(
    session: Session, ids: list[int], since: datetime, now: datetime
) -> dict[int, list[Span]]:
    found: dict[int, list[Span]] = {}
    query = (
        select(Outage)
        .where(Outage.target_id.in_(ids), Outage.series == "reachable")
        .where(Outage.end.is_(None) | (Outage.end > since))
    )
    for o in session.scalars(query):
        end = min(o.end or now, now)
        if end > o.start:
            found.setdefault(o.target_id, []).append(Span(o.start, end))
    return found


def _samples(session: Session, ids: list[int], since: datetime) -> dict[int, int]:
    """Known probe results per target since ``since`` (the burn alerts' minimum evidence)."""
    query = (
        select(ProbeResult.target_id, func.count())
        .where(ProbeResult.target_id.in_(ids), ProbeResult.at >= since, ProbeResult.ok.is_not(None))
        .group_by(ProbeResult.target_id)
    )
    return {target_id: int(n) for target_id, n in session.execute(query)}


def _incident_signals(session: Session, now: datetime) -> list[Signal]:
    """Open relevant incidents fire; recently closed ones resolve; and so does every incident
    whose alert still fires, however long ago the provider says it ended (slamon was down,
    the feed unreachable, or the resolution back-dated)."""
    alerted = session.scalars(
        select(Alert.labels).where(Alert.rule == "provider_incident", Alert.state == "firing")
    )
    firing = {(a.get("provider"), a.get("incident")) for a in alerted}
    recent = (Incident.resolved_at.is_(None)) | (Incident.resolved_at > now - RECENTLY_CLOSED)
    query = (
        select(Incident, Provider.slug)
        .join(Provider)
        .where(Incident.relevant.is_(True), Incident.is_maintenance.is_(False))
    )
    if firing:
        query = query.where(recent | Incident.source_id.in_({i for _, i in firing if i}))
    else:
        query = query.where(recent)
    return [
        from_incident(
            slug,
            i.source_id,
            i.title,
            i.impact,
            list(i.regions or []),
            i.resolved_at is None,
            i.resolved_at or i.started_at or i.first_seen_at,
            i.url,
        )
        for i, slug in session.execute(query)
        if i.resolved_at is None
        or i.resolved_at > now - RECENTLY_CLOSED
        or (slug, i.source_id) in firing
    ]


def _feed_signals(session: Session, config: Config, now: datetime) -> list[Signal]:
    stale_after = timedelta(seconds=config.alerts.feed_stale_after)
    signals = []
    for feed, slug in session.execute(
        select(Feed, Provider.slug).join(Provider).where(Feed.enabled.is_(True))
    ):
        if feed.last_polled_at is None:
            continue  # never tried yet: nothing to say
        reference = feed.last_success_at or feed.created_at
        stale = feed.consecutive_failures > 0 and now - reference > stale_after
        signals.append(from_feed(slug, feed.url, stale, now, feed.last_error))
    return signals
