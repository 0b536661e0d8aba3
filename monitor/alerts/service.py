"""Where signals come from: probe transitions (in the probe round's own transaction) and a
periodic look at provider incidents and feed health."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from monitor.alerts.engine import Applied, apply
from monitor.alerts.rules import (
    ACCOUNT_RULES,
    ACTIVE,
    Signal,
    TargetFacts,
    fingerprint,
    from_account_event,
    from_discovery,
    from_feed,
    from_incident,
    from_slowdown,
    from_transition,
    from_vantage,
    target_labels,
)
from monitor.alerts.sla_rules import breach_signal, burn_signal, burn_windows
from monitor.config.models import Config
from monitor.db.base import utcnow
from monitor.db.models import (
    Alert,
    CreditClaim,
    Feed,
    ProbeResult,
    Provider,
    Target,
    TargetState,
)
from monitor.fleet.health import source_health
from monitor.history import account_events, heartbeats, incidents, lifetimes, spans
from monitor.history.spans import REACHABLE, TargetSpans
from monitor.probes.kinds import target_rules, usable_matters
from monitor.probes.quorum import TargetTransition
from monitor.probes.record import lock_recording
from monitor.probes.round import TransitionHook
from monitor.probes.vantages import vantage_health
from monitor.sla.intervals import Span
from monitor.sla.maintenance import windows_for
from monitor.sla.months import month_of, month_period
from monitor.sla.policy import SlaPolicy
from monitor.sla.policy_config import policies_for
from monitor.sla.slowdown import judge_slowdown

RECENTLY_CLOSED = timedelta(days=1)
CLAIM_REMINDER = timedelta(days=7)


def on_transitions(
    session: Session,
    transitions: Sequence[TargetTransition],
    config: Config,
    now: datetime,
    *,
    public_url: str | None = None,
) -> Applied:
    """Alerts for confirmed target transitions, committed with the results that caused them;
    their messages link under ``public_url``."""
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
        if _held(row, change):
            continue  # down or gone? the next sweep says (see _held_down_signals)
        facts = _facts(row)
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
    return apply(session, signals, config, now, public_url=public_url)


def _held(row: Target, change: TargetTransition) -> bool:
    """A discovered target that stops answering may have been stopped or reclaimed, which is
    the end of its life, not an outage: its ``target_down`` waits for a sweep that still
    lists it running (or for its source to stay silent too long), so a preemption pages no
    one."""
    return (
        row.source == "discovery"
        and change.series == "reachable"
        and (change.transition.state == "down")
    )


def _held_down_signals(session: Session, config: Config, now: datetime) -> list[Signal]:
    """``target_down`` for discovered targets that are down while a sweep since has listed
    them running, or whose source has not swept successfully for three of its periods (the
    cloud cannot say, and unknown is never taken for fine)."""
    verdict = TargetState
    query = (
        select(Target, verdict.since)
        .join(verdict, verdict.target_id == Target.id)
        .where(
            Target.source == "discovery",
            Target.retired_at.is_(None),
            verdict.vantage == "*",
            verdict.series == REACHABLE,
            verdict.state == "down",
        )
    )
    # A round may record a recovery and resolve the alert between this read and this
    # evaluation's apply, which would fire it again: read the verdicts again once recording
    # for these targets waits for this transaction (it does until the evaluation commits).
    held = lock_recording(session, session.scalars(query.with_only_columns(Target.id)).all())
    if not held:
        return []
    again = query.where(Target.id.in_(held)).execution_options(populate_existing=True)
    signals = []
    for row, since in session.execute(again):
        source = config.source(row.discovered_by or "")
        confirmed = row.last_seen_at is not None and row.last_seen_at >= since
        silent = source is None or now - since > timedelta(seconds=3 * source.every)
        if not (confirmed or silent):
            continue
        why = (
            f"still listed running by discovery source {row.discovered_by}"
            if confirmed
            else f"discovery source {row.discovered_by} has not confirmed it is running"
        )
        signals += from_transition(_facts(row), REACHABLE, "down", "up", since, why)
    return signals


def _discovery_signals(session: Session, config: Config, now: datetime) -> list[Signal]:
    """``discovery_failing`` per configured source that has been swept, like ``feed_stale``."""
    return [
        from_discovery(s.name, s.kind, s.failing, now, s.last_error)
        for s in source_health(session, config, now)
        if s.last_swept_at is not None
    ]


def _facts(row: Target, provider: str | None = None) -> TargetFacts:
    """What the rules know of a target row (``provider``: one its policy names, when the row
    was stored before providers were inferred)."""
    return TargetFacts(
        row.name, row.kind, row.provider or provider, row.region, row.zone, row.pool, row.gpus
    )


def alert_hook(config: Config, public_url: str | None = None) -> TransitionHook:
    """The hook a probe round runs in the transaction that stores its results: confirmed
    transitions become alerts (and deliveries in the outbox, linking under ``public_url``),
    committed with their cause."""

    def hook(session: Session, transitions: Sequence[TargetTransition], /) -> Applied:
        return on_transitions(session, transitions, config, utcnow(), public_url=public_url)

    return hook


def _usable_matters(row: Target, change: TargetTransition, reachable_down: set[int]) -> bool:
    """The usable series speaks for itself only where it can differ from reachability (GPU
    scrapes, heartbeat progress), and not while the target is down outright."""
    return usable_matters(row.kind) and change.target_id not in reachable_down


def on_account_events(
    session: Session, config: Config, now: datetime, *, public_url: str | None = None
) -> Applied:
    """Alerts for what the providers told the account (``interruption_notice``,
    ``scheduled_maintenance``, ``provider_event``), judged at once in the caller's transaction:
    a push endpoint, a poll or an agent's notice does not wait for the next evaluation."""
    signals = _account_signals(session, config, now)
    return apply(session, signals, config, now, public_url=public_url)


def _account_signals(session: Session, config: Config, now: datetime) -> list[Signal]:
    """The alerts of the account events that are upcoming or open, about the live targets they
    name (``monitor.history.account_events`` scopes them), and of the closed ones whose alert
    still fires (each resolves once). One that vanished resolves through ``_orphans``."""
    live = {t.name: t for t in session.scalars(select(Target).where(Target.retired_at.is_(None)))}
    current = account_events.events(session, kinds=ACCOUNT_KINDS, statuses=ACTIVE)
    firing = {
        (labels.get("provider"), labels.get("event"))
        for labels in session.scalars(
            select(Alert.labels).where(Alert.rule.in_(ACCOUNT_RULES), Alert.state == "firing")
        )
    }
    if firing - {(e.provider, e.key) for e in current}:  # some event has closed
        closed = account_events.events(session, kinds=ACCOUNT_KINDS, statuses=("closed",))
        current += [e for e in closed if (e.provider, e.key) in firing]
    reminder = timedelta(seconds=config.alerts.maintenance_reminder)
    signals = []
    for event in current:
        targets = [_facts(live[name]) for name in event.targets if name in live]
        signals += from_account_event(event, targets, now, reminder)
    return signals


# Rules whose every alert is re-judged on each evaluation: one that is firing but no longer
# asserted (its incident resolved long ago or vanished, its feed or target removed) resolves.
EVALUATED_RULES = (
    "provider_incident",
    "feed_stale",
    "sla_burn",
    "sla_breach",
    "vantage_blind",
    "training_slowdown",
    "discovery_failing",
    *ACCOUNT_RULES,
)
# The account events' kinds that raise an alert (``user_initiated`` is the user's own doing).
ACCOUNT_KINDS = ("preemption", "scheduled_maintenance", "retirement", "issue")
# Alerts about one target (besides the target's own series' rules): resolved once it is retired.
TARGET_EVENT_RULES = ("interruption_notice",)


def evaluate(
    session: Session, config: Config, now: datetime, *, public_url: str | None = None
) -> Applied:
    """Provider incidents (open ones fire, closed ones resolve), stale feeds, SLA burn/breach,
    blind vantages, the account events' alerts; and resolves for every firing alert whose cause
    is gone. The messages link under ``public_url``."""
    # Only an alert already firing when the sweep begins can be an orphan: one a push fires
    # (in its own transaction) while the sweep reads has a cause the sweep's reads may have
    # missed, and resolving it would end it before it began.
    before = set(session.scalars(select(Alert.id).where(Alert.state == "firing")))
    signals = [
        *_incident_signals(session, now),
        *_account_signals(session, config, now),
        *_feed_signals(session, config, now),
        *_sla_signals(session, config, now),
        *_vantage_signals(session, now),
        *_slowdown_signals(session, config, now),
        *_discovery_signals(session, config, now),
        *_held_down_signals(session, config, now),
    ]
    signals += _orphans(session, signals, now, before)
    claims = _claim_signals(session, now)
    return apply(session, [*signals, *claims], config, now, public_url=public_url)


def _orphans(
    session: Session, signals: Sequence[Signal], now: datetime, among: set[int]
) -> list[Signal]:
    """Resolves for the firing alerts in ``among`` (their ids) that nothing asserts any more:
    an evaluated rule's alert no signal speaks for, or a target rule's alert whose target was
    retired or deleted. Resolves are never swallowed, however late slamon learns of them."""
    asserted = {s.fingerprint for s in signals}
    live = set(session.scalars(select(Target.name).where(Target.retired_at.is_(None))))
    about_targets = (*target_rules(), *TARGET_EVENT_RULES)
    firing = session.scalars(
        select(Alert).where(
            Alert.state == "firing", Alert.rule.in_((*EVALUATED_RULES, *about_targets))
        )
    )
    orphans = []
    for alert in firing:
        if alert.id not in among:
            continue
        if alert.rule in about_targets and alert.labels.get("target") not in live:
            why = "target retired"
        elif alert.rule in EVALUATED_RULES and alert.fingerprint not in asserted:
            why = "no longer reported"
        else:
            continue
        summary = f"{alert.summary} — resolved: {why}"
        orphans.append(
            Signal(alert.rule, alert.fingerprint, alert.severity, alert.labels, summary, False, now)
        )
    return orphans


def _slowdown_signals(session: Session, config: Config, now: datetime) -> list[Signal]:
    """``training_slowdown`` for every live target whose heartbeats report throughput."""
    rule = config.alerts.slowdown_rule
    live = {t.id: t for t in session.scalars(select(Target).where(Target.retired_at.is_(None)))}
    series = heartbeats.throughput(session, list(live), now - rule.span, now)
    signals = []
    for target_id, work in series.items():
        verdict = judge_slowdown(work.samples, now, rule)
        unit = work.unit or "samples"
        signals.append(from_slowdown(_facts(live[target_id]), verdict, rule.share, unit, now))
    return signals


def _vantage_signals(session: Session, now: datetime) -> list[Signal]:
    """``vantage_blind`` per vantage, from the verdicts the vantage task stored (the page and
    /metrics show the same ones)."""
    return [from_vantage(v, now) for v in vantage_health(session)]


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
    ids = [t.id for t in targets]
    timelines = spans.spans(session, ids, Span(since, now), now)
    samples = {w.short: _samples(session, ids, now - w.short) for w in pairs}
    born = lifetimes.starts(session, ids)  # imported history counts as the target's life
    recorded = _recorded_exclusions(session, Span(month_period(month_of(now)).start, now), now)
    signals = []
    for t in targets:
        policy = policies[t.sla_policy or ""]
        facts = _facts(t, policy.provider)
        mine = timelines.get(t.id, TargetSpans()).of(REACHABLE)
        windows = [
            Span(w.start, w.end) for w in windows_for(target_labels(facts), config.maintenance)
        ]
        counts = {window: per_target.get(t.id, 0) for window, per_target in samples.items()}
        signals.append(
            burn_signal(facts, policy, mine, now, counts, config.alerts.burn_min_samples, pairs)
        )
        accepted, users = recorded.get(t.name, ([], []))
        signals.append(
            breach_signal(facts, policy, mine, [*windows, *accepted], born[t.id], now, users)
        )
    return signals


def _recorded_exclusions(
    session: Session, period: Span, now: datetime
) -> dict[str, tuple[list[Span], list[Span]]]:
    """Per target, the provider's record of what an SLA policy may leave out in ``period``: the
    windows of maintenance the user accepted, and of the user's own doing (the monthly report
    reads the same events the same way: monitor/reports/evidence.py)."""
    found: dict[str, tuple[list[Span], list[Span]]] = {}
    kinds = ("scheduled_maintenance", "user_initiated")
    for view in account_events.events(session, period=period, kinds=kinds):
        span = view.window(now)
        if span is None or (view.kind == "scheduled_maintenance" and not view.accepted):
            continue
        for name in view.targets:
            accepted, users = found.setdefault(name, ([], []))
            (users if view.kind == "user_initiated" else accepted).append(span)
    return found


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
    chosen = incidents.to_alert_on(session, now, RECENTLY_CLOSED, {i for _, i in firing if i})
    return [
        from_incident(
            i.provider,
            i.source_id,
            i.title,
            i.impact,
            list(i.regions),
            i.resolved_at is None,
            i.resolved_at or i.started_at or i.first_seen_at,
            i.url,
        )
        for i in chosen
        if i.resolved_at is None
        or i.resolved_at > now - RECENTLY_CLOSED
        or (i.provider, i.source_id) in firing
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
