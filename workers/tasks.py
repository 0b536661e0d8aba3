"""Thin tasks: take names or ids, call one function in `monitor`, commit at the boundary."""

from __future__ import annotations

import logging
import os
from datetime import timedelta
from typing import Any

from workers.app import app
from workers.runtime import runtime

log = logging.getLogger(__name__)
FEED_RETRY_BASE_S = 15
SHARD_EXPIRES_S = 30  # a shard still queued this late is stale: the next round probes again
# how long before its first slot a shard is sent: the queue trip, reading its targets and
# handing it to the probe loop happen before the slot, not after it
SHARD_LEAD = timedelta(seconds=1)


@app.task(name="slamon.tick")
def tick() -> str:
    """Record that this vantage's monitor is alive now; gaps in these rows are unknown time."""
    from monitor.liveness import record_tick

    rt = runtime()
    with rt.transaction() as session:
        bucket = record_tick(session, rt.settings.vantage, rt.config.schedule.tick)
    return bucket.isoformat()


@app.task(name="slamon.feeds.poll_all")
def poll_all_feeds() -> int:
    """Sync the provider catalog and fan out one poll per enabled feed."""
    from monitor.feeds.service import feeds_to_poll, sync_catalog

    rt = runtime()
    with rt.transaction() as session:
        sync_catalog(session, rt.config)
        feed_ids = feeds_to_poll(session)
    expires = max(5.0, rt.config.schedule.feeds * 0.9)
    for feed_id in feed_ids:
        poll_feed.apply_async((feed_id,), expires=expires)
    return len(feed_ids)


@app.task(name="slamon.feeds.poll", bind=True, max_retries=3)
def poll_feed(self: Any, feed_id: int) -> str:
    """Poll one feed; a transient failure (timeout, 5xx) is retried with exponential backoff."""
    from monitor.feeds.poll import poll_feed as poll

    rt = runtime()
    outcome = poll(rt.sessions, rt.http, feed_id)
    if outcome.transient and self.request.retries < self.max_retries:
        raise self.retry(countdown=FEED_RETRY_BASE_S * 2**self.request.retries)
    return outcome.result


@app.task(name="slamon.probes.dispatch")
def dispatch_probes() -> int:
    """Claim the targets due before the dispatch after next and send one shard task per shard
    and vantage; each target is probed at its own slot.

    Claiming a period plus ``SHARD_LEAD`` ahead, a shard reaches its worker before its first
    slot and waits on the probe loop (not Celery's eta, which fired up to a second late here),
    so probes land on their slots instead of one queue trip after them.
    """
    from monitor.db.base import utcnow
    from monitor.probes.schedule import claim_due_targets, shard_message, shards_by_slot

    rt = runtime()
    probes = rt.config.probes
    ahead = timedelta(seconds=rt.config.schedule.dispatch) + SHARD_LEAD
    with rt.transaction() as session:
        due = claim_due_targets(session, utcnow(), ahead)
    for shard in shards_by_slot(due, probes.shard_size):
        message = shard_message(shard)
        for queue in probe_queues(probes.vantages):
            run_probe_shard.apply_async((message,), queue=queue, expires=SHARD_EXPIRES_S)
    return len(due)


def probe_queues(vantages: list[str]) -> list[str]:
    """Every named vantage has its own queue; without names, any worker takes the shared one."""
    return [f"probes.{v}" for v in vantages] or ["probes"]


@app.task(name="slamon.probes.run_shard", bind=True, max_retries=3)
def run_probe_shard(self: Any, shard: list[Any]) -> int:
    """Probe one shard (``[target id, slot]`` pairs, or bare ids) from this worker's vantage,
    each at its slot; store results, states and outages.

    A database hiccup (restart, deadlock, lock timeout) re-runs the shard: it is re-probed,
    never half-stored, since each pass commits in one transaction.
    """
    from celery.exceptions import Ignore
    from sqlalchemy.exc import OperationalError

    from monitor.alerts.service import alert_hook
    from monitor.db.base import utcnow
    from monitor.probes.loop import shared_loop
    from monitor.probes.record import process_memory
    from monitor.probes.round import Prober
    from monitor.probes.schedule import Shard, read_shard, without_stale

    rt = runtime()
    work, stale = without_stale(read_shard(shard), utcnow())
    if stale:
        log.warning("not probing %d target(s) of a shard past their slots: %s", len(stale), stale)
    if self.request.retries:  # a re-run probes at once: its slots have passed
        work = Shard(work.target_ids)
    if not work.target_ids:  # ignored, not a success: nothing here reached the database
        raise Ignore()
    vantage = rt.settings.vantage
    prober = Prober(
        rt.sessions,
        vantage,
        rt.config.probes,
        shared_loop(),
        alert_hook(rt.config, rt.settings.public_url),
        process_memory(vantage),
    )
    try:
        report = prober.round(work)
    except OperationalError as exc:
        raise self.retry(exc=exc, countdown=1 + self.request.retries) from None
    if report.transitions:
        deliver_alerts.delay()  # the fast path; the periodic sweep catches anything missed
    return len(report.results)


@app.task(name="slamon.probes.judge_heartbeats")
def judge_heartbeats() -> int:
    """Turn pushed heartbeats (or their absence) into results for the push vantage."""
    from monitor.alerts.service import alert_hook
    from monitor.db.base import utcnow
    from monitor.probes.round import pushed_round

    rt = runtime()
    with rt.transaction() as session:
        hook = alert_hook(rt.config, rt.settings.public_url)
        outcomes = pushed_round(session, utcnow(), on_transitions=hook)
    if any(outcome.transitions for outcome in outcomes.values()):
        deliver_alerts.delay()
    return sum(len(outcome.states) for outcome in outcomes.values())


@app.task(name="slamon.targets.sync")
def sync_targets() -> int:
    """Bring config-sourced targets in line with the config file (API targets are kept)."""
    from monitor.db.base import utcnow
    from monitor.targets import sync_config_targets

    rt = runtime()
    with rt.transaction() as session:
        return sync_config_targets(session, rt.config, utcnow())


@app.task(name="slamon.probes.rollup")
def roll_up_results() -> int:
    """Roll raw probe results into minute and hour buckets and delete the routine raw rows of
    final minutes (their bucket holds them); each step its own short transaction
    (``monitor.probes.rollup``). What is past its retention goes in :func:`prune_expired`."""
    from monitor.db.base import utcnow
    from monitor.db.changes import prune_changes
    from monitor.probes.rollup import compact_raw, roll_up

    rt = runtime()
    now = utcnow()
    buckets = roll_up(rt.sessions, now)
    compact_raw(rt.sessions, now)
    with rt.transaction() as session:
        prune_changes(session)
    return buckets


@app.task(name="slamon.probes.prune")
def prune_expired() -> int:
    """Delete the probes kept whole past ``probes.raw_retention`` and the minute buckets past
    ``probes.minute_retention`` whose hours are rolled up, oldest first, in short transactions;
    every ``schedule.retention``. How many rows went."""
    from datetime import timedelta

    from monitor.db.base import utcnow
    from monitor.probes.rollup import prune_minutes, prune_raw

    rt = runtime()
    now = utcnow()
    probes = rt.config.probes
    raw = prune_raw(rt.sessions, now, timedelta(seconds=probes.raw_retention))
    return raw + prune_minutes(rt.sessions, now, timedelta(seconds=probes.minute_retention))


@app.task(name="slamon.probes.judge_vantages")
def judge_vantages() -> int:
    """Judge every probing vantage against the quorum and store the verdicts every surface
    shows (and ``vantage_blind`` alerts on); returns how many are blind."""
    from monitor.db.base import utcnow
    from monitor.probes.vantages import refresh

    rt = runtime()
    with rt.transaction() as session:
        health = refresh(session, utcnow(), rt.config.alerts.blind_rule)
    return sum(v.blind_since is not None for v in health)


@app.task(name="slamon.discovery.sweep_due")
def sweep_discovery() -> dict[str, int]:
    """Sweep every discovery source whose ``every`` has passed; per source, the instances a
    good sweep listed (-1: the sweep failed, retired nothing, and is on the source's record)."""
    from monitor.db.base import utcnow
    from monitor.fleet.sweep import due_sources, sweep

    rt = runtime()
    if not rt.config.discovery:
        return {}
    now = utcnow()
    with rt.sessions() as session:
        due = due_sources(session, rt.config, now)
    listed = {}
    for source in due:
        outcome = sweep(rt.sessions, rt.config, source, now)
        listed[source.name] = outcome.instances if outcome.ok else -1
    return listed


@app.task(name="slamon.account.poll_due")
def poll_account_events() -> dict[str, int]:
    """Poll every account event source whose ``every`` has passed; per source, the events a
    clean poll read (-1: the poll failed, stored nothing, and is on the source's record). An
    event new or changed is judged by the alert rules at once, not at their next round."""
    from monitor.db.base import utcnow
    from monitor.fleet.account_poll import due_sources, poll

    rt = runtime()
    if not rt.config.account_events:
        return {}
    now = utcnow()
    with rt.sessions() as session:
        due = due_sources(session, rt.config, now)
    read, changed = {}, False
    for source in due:
        outcome = poll(rt.sessions, source, now)
        read[source.name] = len(outcome.recorded) if outcome.ok else -1
        changed |= any(r.outcome in ("new", "updated") for r in outcome.recorded)
    if changed:
        evaluate_alerts.delay()
    return read


@app.task(name="slamon.reports.monthly")
def build_last_month_report(month: str | None = None) -> str:
    """Build and keep last month's report in every format (run by beat on the 1st)."""
    from monitor.alerts.engine import apply
    from monitor.alerts.rules import announcement
    from monitor.db.base import utcnow
    from monitor.reports.service import FORMATS, build_monthly, keep, record_claims, render
    from monitor.sla.months import previous_month

    rt = runtime()
    now = utcnow()
    month = month or previous_month(now)
    with rt.transaction() as session:
        report = build_monthly(session, month, now, rt.config)
        for fmt in FORMATS:
            keep(session, render(report, fmt))
        record_claims(session, report)
        notice = [announcement(report, now)]  # one message per month
        apply(session, notice, rt.config, now, public_url=rt.settings.public_url)
    deliver_alerts.delay()
    return month


@app.task(name="slamon.alerts.evaluate")
def evaluate_alerts() -> int:
    """Provider incidents and feed health into alerts (probe alerts come with the probe rounds)."""
    from monitor.alerts.service import evaluate
    from monitor.db.base import utcnow

    rt = runtime()
    with rt.transaction() as session:
        applied = evaluate(session, rt.config, utcnow(), public_url=rt.settings.public_url)
    if applied.deliveries:
        deliver_alerts.delay()
    return applied.changed


@app.task(name="slamon.alerts.deliver")
def deliver_alerts() -> int:
    """Send what the outbox holds that is due; failures wait their backoff for the next sweep."""
    from monitor.alerts.delivery import deliver_due

    rt = runtime()
    run = deliver_due(rt.sessions, rt.http, rt.config, f"{rt.settings.vantage}:{os.getpid()}")
    return run.delivered


@app.task(name="slamon.alerts.resend")
def resend_to_alertmanagers() -> int:
    """Tell each alertmanager channel due a resend again of what still fires there (and what
    resolved lately): an Alertmanager keeps alerts in memory only. Returns the alerts resent."""
    from monitor.alerts.resend import resend
    from monitor.db.base import utcnow

    rt = runtime()
    return resend(rt.sessions, rt.http, rt.config, utcnow()).alerts
