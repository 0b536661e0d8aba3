"""A deployment with something in every /metrics family, written straight into the tables:
targets up, down and stale with observed time and outages (one open, one inside maintenance),
a training job's heartbeat, latency rollups, feeds (answering, failing, never polled), an open
incident, alerts and their deliveries, task runs, vantages, a discovery source, account events
and sources, instances for the interruption ledger, and the scheduler's lease, slots and
watchdog ping. What the promtool and counter tests scrape."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta

from sqlalchemy.orm import Session

from monitor.config import Config, parse_config
from monitor.config.models import TargetConfig
from monitor.db.models import (
    AccountSource,
    Alert,
    Channel,
    Delivery,
    DiscoverySource,
    Feed,
    Heartbeat,
    Incident,
    ObservedWindow,
    Outage,
    ProbeRollup,
    Provider,
    Target,
    TargetState,
    TaskStat,
    Vantage,
)
from monitor.fleet.account_store import record
from monitor.health.read import record_ping
from monitor.liveness import bucket_start
from monitor.targets import upsert_target
from tests.monitor.api.test_pages import retirement
from tests.monitor.health.rows import put_lease, put_slot

CONFIG = """
discovery:
  - {name: fleet, kind: file_sd, path: /nonexistent/*.json, template: {kind: tcp}}
account_events:
  - {name: ec2, kind: ec2_events, regions: [us-east-1]}
maintenance:
  - {name: kernel, start: "%(start)s", end: "%(end)s", targets: [gpu-1]}
"""


def config(now: datetime) -> Config:
    """The config the populated deployment runs under: a discovery source, an account event
    source and a maintenance window over part of gpu-1's closed outage."""
    window = (now - timedelta(hours=2), now - timedelta(hours=1, minutes=30))
    return parse_config(CONFIG % {"start": window[0].isoformat(), "end": window[1].isoformat()})


def populate(session: Session, now: datetime) -> None:
    """Write the deployment (in the caller's transaction)."""
    gpu0, gpu1, stale = _targets(session, now)
    _history(session, now, gpu0.id, gpu1.id, stale.id)
    _training(session, now)
    _providers(session, now)
    _alerts(session, now)
    session.add_all(
        [
            TaskStat(task="slamon.probes.run_shard", runs=40, failures=1, seconds_total=6.5,
                     last_seconds=0.25, last_finished_at=now),
            Vantage(name="east", targets=3, disagreeing=0, last_agreed_at=now, updated_at=now),
            Vantage(name="west", targets=3, disagreeing=3, last_agreed_at=now - timedelta(hours=1),
                    disagreeing_since=now - timedelta(hours=1),
                    blind_since=now - timedelta(minutes=50), updated_at=now),
            DiscoverySource(name="fleet", kind="file_sd", last_swept_at=now,
                            last_success_at=now - timedelta(minutes=1), consecutive_failures=1,
                            instances=2),
            AccountSource(name="ec2", kind="ec2_events", last_polled_at=now, last_success_at=now,
                          events=1),
        ]
    )  # fmt: skip
    notice = replace(retirement(now, "i-1"), key="i-1:spot", kind="preemption",
                     starts_at=now + timedelta(minutes=2))  # fmt: skip
    record(session, [retirement(now), notice], now)
    put_lease(session, "web-1:4242", 3, now=now)
    put_slot(session, "probes-dispatch", 1.0, done_ago_s=0.5, fenced=1, now=now)
    put_slot(session, "reports-monthly", None, now=now)
    record_ping(session, "web-1:4242", now - timedelta(seconds=20), taken=True)
    session.flush()


def _targets(session: Session, now: datetime) -> list[Target]:
    rows = []
    for name, instance in (("gpu-0", "i-0abc"), ("gpu-1", "i-1"), ("gpu-stale", None)):
        cfg = TargetConfig(
            name=name,
            kind="tcp",
            url="tcp://h:22",
            provider="aws",
            region="us-east-1",
            pool="h100",
            instance_type="p5.48xlarge",
            sla="aws-ec2-instance",
        )
        row = upsert_target(session, cfg, "config")
        row.created_at, row.external_id, row.capacity = now - timedelta(days=45), instance, "spot"
        rows.append(row)
    session.flush()
    return rows


def _history(session: Session, now: datetime, up: int, down: int, stale: int) -> None:
    states = [
        TargetState(target_id=target, vantage=vantage, series=series, state=state,
                    last_probe_at=now if target != stale else now - timedelta(days=1), detail={})
        for target, state in ((up, "up"), (down, "down"), (stale, "up"))
        for vantage in ("*", "east")
        for series in ("reachable", "usable")
    ]  # fmt: skip
    windows = [
        ObservedWindow(target_id=target, start=now - timedelta(days=40),
                       end=now + timedelta(seconds=30), source="probe")
        for target in (up, down)
    ]  # fmt: skip
    outages = [
        Outage(target_id=down, series="reachable", start=now - timedelta(hours=2),
               end=now - timedelta(hours=1), source="probe", detail={}),
        Outage(target_id=down, series="reachable", start=now - timedelta(minutes=10), end=None,
               source="probe", detail={}),
        Outage(target_id=up, series="reachable", start=now - timedelta(days=35),
               end=now - timedelta(days=35, minutes=-7), source="probe", detail={}),
    ]  # fmt: skip
    minute = bucket_start(now, 60) - timedelta(minutes=1)
    rollup = ProbeRollup(target_id=up, resolution="minute", bucket_start=minute, count=4,
                         failures=0, unknown=0, latency_p50_ms=12.5, latency_p95_ms=20.0,
                         latency_max_ms=25.0)  # fmt: skip
    session.add_all([*states, *windows, *outages, rollup])


def _training(session: Session, now: datetime) -> None:
    cfg = TargetConfig(name="job", kind="heartbeat", interval=15, provider="aws", pool="h100")
    job = upsert_target(session, cfg, "config")
    session.flush()
    session.add(Heartbeat(target_id=job.id, at=now, step=10, throughput=100.0, payload={}))


def _providers(session: Session, now: datetime) -> None:
    for slug, polled, succeeded, failures in (
        ("aws", now, now, 0),
        ("lambda", now, now - timedelta(hours=2), 7),
        ("gcp", None, None, 0),
    ):
        provider = Provider(slug=slug, name=slug, source="config")
        session.add(provider)
        session.flush()
        session.add(Feed(provider_id=provider.id, kind="statuspage",
                         url=f"http://{slug}.example/api/v2/incidents.json",
                         last_polled_at=polled, last_success_at=succeeded,
                         consecutive_failures=failures))  # fmt: skip
        if slug == "aws":
            session.add(Incident(provider_id=provider.id, source_id="aws-1",
                                 title="GPU launches failing", status="investigating",
                                 impact="major", started_at=now - timedelta(hours=1),
                                 relevant=True, content_hash="x"))  # fmt: skip


def _alerts(session: Session, now: datetime) -> None:
    channel = Channel(name="ops", kind="webhook")
    alert = Alert(fingerprint="fp-down", rule="target_down", severity="critical",
                  labels={"target": "gpu-1"}, summary="gpu-1 is down", state="firing",
                  started_at=now - timedelta(minutes=10))  # fmt: skip
    session.add_all([channel, alert])
    session.flush()
    session.add_all(
        [
            Delivery(alert_id=alert.id, channel_id=channel.id, event=event, status=status,
                     idempotency_key=f"k-{event}", payload={}, next_attempt_at=now)
            for event, status in (("firing", "delivered"), ("renotify", "pending"))
        ]
    )  # fmt: skip
