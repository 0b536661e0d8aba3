"""/metrics: the deployment's state, parsed back with prometheus-client's own parser."""

from __future__ import annotations

from datetime import timedelta

import pytest
from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy.orm import Session, sessionmaker

from monitor.config.models import TargetConfig
from monitor.db.base import utcnow
from monitor.db.models import (
    Alert,
    Feed,
    ObservedWindow,
    Outage,
    ProbeRollup,
    Provider,
    TargetState,
    TaskStat,
    Vantage,
)
from monitor.liveness import bucket_start
from monitor.sla.months import month_period
from monitor.sla.terms import BUILTIN_POLICIES
from monitor.targets import upsert_target
from tests.support import ApiClient


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
        if s.name.startswith("slamon_")
    }


def labels(target: str) -> tuple[tuple[str, str], ...]:
    return (("pool", "h100"), ("provider", "aws"), ("region", ""), ("target", target))


def test_metrics_report_state_uptime_budget_latency_and_alerts(
    api: ApiClient, sessions: sessionmaker[Session]
) -> None:
    now = utcnow()
    with sessions() as session:
        rows = []
        for name in ("gpu-0", "gpu-1", "gpu-stale"):
            cfg = TargetConfig(
                name=name,
                kind="tcp",
                url="tcp://h:22",
                provider="aws",
                pool="h100",
                sla="aws-ec2-instance",
            )
            row = upsert_target(session, cfg, "config")
            row.created_at = now - timedelta(days=60)
            rows.append(row)
        session.flush()
        gpu0, gpu1, stale = rows
        session.add_all(
            [
                *(
                    TargetState(
                        target_id=row.id,
                        vantage=vantage,
                        series="reachable",
                        state=state,
                        last_probe_at=now,
                        consecutive_failures=0 if state == "up" else 2,
                        consecutive_successes=1 if state == "up" else 0,
                        detail={},
                    )
                    for row, state in ((gpu0, "up"), (gpu1, "down"))
                    for vantage in ("*", "here")
                ),
                *(
                    ObservedWindow(
                        target_id=row.id,
                        start=now - timedelta(days=40),
                        end=now + timedelta(seconds=30),
                        source="probe",
                    )
                    for row in (gpu0, gpu1)
                ),
                TargetState(  # a verdict nobody has refreshed for a day: unknown, not up
                    target_id=stale.id,
                    vantage="here",
                    series="reachable",
                    state="up",
                    last_probe_at=now - timedelta(days=1),
                    detail={},
                ),
                TargetState(
                    target_id=stale.id,
                    vantage="*",
                    series="reachable",
                    state="up",
                    last_probe_at=now - timedelta(days=1),
                    detail={},
                ),
                Outage(
                    target_id=gpu1.id,
                    series="reachable",
                    start=now - timedelta(seconds=1),
                    end=None,
                    source="probe",
                    detail={},
                ),
                Alert(
                    fingerprint="x",
                    rule="target_down",
                    severity="critical",
                    labels={},
                    state="firing",
                    started_at=now,
                ),
                ProbeRollup(
                    target_id=gpu0.id,
                    resolution="minute",
                    bucket_start=bucket_start(now, 60) - timedelta(minutes=1),
                    count=4,
                    failures=0,
                    unknown=0,
                    latency_p50_ms=12.5,
                    latency_p95_ms=20.0,
                    latency_max_ms=25.0,
                ),
                ProbeRollup(
                    target_id=gpu0.id,
                    resolution="minute",
                    bucket_start=bucket_start(now, 60) - timedelta(minutes=2),
                    count=4,
                    failures=0,
                    unknown=0,
                    latency_p50_ms=99.0,
                    latency_p95_ms=99.0,
                    latency_max_ms=99.0,
                ),
            ]
        )
        session.commit()
    got = samples(api.get("/metrics").text)
    assert got[("slamon_target_up", labels("gpu-0"))] == 1.0
    assert got[("slamon_target_up", labels("gpu-1"))] == 0.0
    assert ("slamon_target_up", labels("gpu-stale")) not in got
    assert got[("slamon_target_month_uptime_ratio", labels("gpu-0"))] == 1.0
    assert got[("slamon_target_month_uptime_ratio", labels("gpu-1"))] < 1.0
    # nothing watched gpu-stale this month: no uptime figure at all, not 100 %
    assert ("slamon_target_month_uptime_ratio", labels("gpu-stale")) not in got
    assert got[("slamon_target_latency_seconds", labels("gpu-0"))] == 0.0125  # the latest minute
    month = month_period(f"{now:%Y-%m}")
    allowed = (month.end - month.start).total_seconds() * (1 - 99.5 / 100)
    assert BUILTIN_POLICIES["aws-ec2-instance"].target_pct == 99.5
    assert got[("slamon_target_error_budget_left_seconds", labels("gpu-0"))] == pytest.approx(
        allowed
    )
    assert allowed - 5 < got[("slamon_target_error_budget_left_seconds", labels("gpu-1"))] < allowed
    assert got[("slamon_alerts_firing", (("rule", "target_down"), ("severity", "critical")))] == 1.0


def test_metrics_report_task_runs_durations_and_failures(
    api: ApiClient, sessions: sessionmaker[Session]
) -> None:
    finished = utcnow().replace(microsecond=0)
    with sessions() as session, session.begin():
        session.add(
            TaskStat(
                task="slamon.probes.run_shard",
                runs=4,
                failures=1,
                seconds_total=6.5,
                last_seconds=1.25,
                last_finished_at=finished,
            )
        )
    got = samples(api.get("/metrics").text)
    task = (("task", "slamon.probes.run_shard"),)
    assert got[("slamon_task_duration_seconds_count", task)] == 4
    assert got[("slamon_task_duration_seconds_sum", task)] == 6.5
    assert got[("slamon_task_failures_total", task)] == 1
    assert got[("slamon_task_last_duration_seconds", task)] == 1.25
    assert got[("slamon_task_last_finished_timestamp_seconds", task)] == finished.timestamp()


def test_metrics_tell_feed_health_and_never_call_an_unpolled_feed_up(
    api: ApiClient, sessions: sessionmaker[Session]
) -> None:
    now = utcnow().replace(microsecond=0)
    with sessions() as session, session.begin():
        for slug, polled, succeeded, failures in (
            ("fresh", now, now, 0),
            ("failing", now, now - timedelta(hours=2), 7),
            ("never", None, None, 0),
        ):
            provider = Provider(slug=slug, name=slug, source="config")
            session.add(provider)
            session.flush()
            session.add(
                Feed(
                    provider_id=provider.id,
                    kind="statuspage",
                    url=f"http://{slug}.example/api/v2/incidents.json",
                    last_polled_at=polled,
                    last_success_at=succeeded,
                    consecutive_failures=failures,
                )
            )
    got = samples(api.get("/metrics").text)
    feed = (("kind", "statuspage"), ("provider", "{}"))

    def key(name: str, slug: str) -> tuple[str, tuple[tuple[str, str], ...]]:
        return name, tuple((k, v.format(slug)) for k, v in feed)

    assert got[key("slamon_feed_up", "fresh")] == 1.0
    assert got[key("slamon_feed_up", "failing")] == 0.0
    assert key("slamon_feed_up", "never") not in got
    assert (
        got[key("slamon_feed_last_success_timestamp_seconds", "failing")]
        == (now - timedelta(hours=2)).timestamp()
    )
    assert key("slamon_feed_last_success_timestamp_seconds", "never") not in got


def test_metrics_tell_a_blind_vantage_apart(
    api: ApiClient, sessions: sessionmaker[Session]
) -> None:
    now = utcnow().replace(microsecond=0)
    with sessions() as session, session.begin():
        session.add_all(
            [
                Vantage(name="east", targets=5, disagreeing=0, last_agreed_at=now, updated_at=now),
                Vantage(
                    name="west",
                    targets=5,
                    disagreeing=5,
                    last_agreed_at=now - timedelta(minutes=9),
                    disagreeing_since=now - timedelta(minutes=8),
                    blind_since=now - timedelta(minutes=8),
                    updated_at=now,
                ),
            ]
        )
    got = samples(api.get("/metrics").text)
    assert got[("slamon_vantage_blind", (("vantage", "east"),))] == 0.0
    assert got[("slamon_vantage_blind", (("vantage", "west"),))] == 1.0
    assert got[("slamon_vantage_disagreeing_targets", (("vantage", "west"),))] == 5.0
    assert (
        got[("slamon_vantage_last_agreed_timestamp_seconds", (("vantage", "west"),))]
        == (now - timedelta(minutes=9)).timestamp()
    )


def test_a_provider_whose_incidents_are_all_resolved_reads_zero_open(
    api: ApiClient, sessions: sessionmaker[Session]
) -> None:
    from monitor.db.models import Incident

    now = utcnow()
    with sessions() as session, session.begin():
        for slug, resolved in (("calm", now), ("burning", None)):
            provider = Provider(slug=slug, name=slug, source="config")
            session.add(provider)
            session.flush()
            session.add(
                Incident(
                    provider_id=provider.id,
                    source_id=f"{slug}-1",
                    title="GPU launches failing",
                    status="resolved" if resolved else "investigating",
                    impact="major",
                    started_at=now - timedelta(hours=1),
                    resolved_at=resolved,
                    relevant=True,
                    content_hash="x",
                )
            )
    got = samples(api.get("/metrics").text)
    assert got[("slamon_provider_open_incidents", (("provider", "calm"),))] == 0.0
    assert got[("slamon_provider_open_incidents", (("provider", "burning"),))] == 1.0


def test_a_scrape_between_writes_is_kept_but_a_new_heartbeat_shows_at_once(
    api: ApiClient, sessions: sessionmaker[Session]
) -> None:
    """The deployment's part of /metrics is kept until something happened; a training job's
    latest push is read at every scrape (pushes log no change)."""
    from monitor.db.models import Heartbeat, TaskStat

    now = utcnow()
    cfg = TargetConfig(name="job", kind="heartbeat", interval=15, provider="aws", pool="h100")
    with sessions() as session, session.begin():
        job = upsert_target(session, cfg, "config")
        session.flush()
        session.add(Heartbeat(target_id=job.id, at=now, step=10, throughput=100.0, payload={}))
    first = samples(api.get("/metrics").text)
    assert first[("slamon_training_throughput", (*labels("job"), ("unit", "samples")))] == 100.0
    with sessions() as session, session.begin():
        session.add(
            Heartbeat(
                target_id=job.id,
                at=now + timedelta(seconds=1),
                step=11,
                throughput=80.0,
                payload={},
            )
        )
        # steady traffic that logs no change: kept until the next write or 15 s
        session.add(TaskStat(task="slamon.tick", runs=1, failures=0, seconds_total=0.1,
                             last_seconds=0.1, last_finished_at=now))  # fmt: skip
    second = samples(api.get("/metrics").text)
    assert second[("slamon_training_step", labels("job"))] == 11.0
    assert second[("slamon_training_throughput", (*labels("job"), ("unit", "samples")))] == 80.0
    assert not any(name == "slamon_task_last_duration_seconds" for name, _ in second)
    with sessions() as session, session.begin():
        session.add(Alert(fingerprint="fp", rule="target_down", severity="critical", labels={},
                          summary="down", state="firing", started_at=now))  # fmt: skip
    third = samples(api.get("/metrics").text)
    assert third[("slamon_alerts_firing", (("rule", "target_down"), ("severity", "critical")))] == 1
    assert third[("slamon_task_last_duration_seconds", (("task", "slamon.tick"),))] == 0.1


def test_metrics_carry_the_interruption_ledger_of_the_worked_example(session: Session) -> None:
    """The report's ledger example (tests/monitor/reports/test_ledger.py), scraped on the last
    instant of November: the same rows the report and the status page show."""
    from prometheus_client import CollectorRegistry, generate_latest

    from monitor.config import parse_config
    from monitor.metrics import SlamonCollector
    from tests.monitor.reports.test_ledger import DEC, known_lives

    known_lives(session)
    registry = CollectorRegistry()
    registry.register(SlamonCollector(session, parse_config(""), DEC - timedelta(microseconds=1)))
    got = samples(generate_latest(registry).decode())

    def row(provider: str, instance_type: str, capacity: str) -> tuple[float, float, float]:
        key = (("capacity", capacity), ("instance_type", instance_type), ("provider", provider))
        return (
            got[("slamon_ledger_instance_seconds", key)] / 3600,
            got[("slamon_ledger_interruptions", key)],
            got[("slamon_ledger_interruptions_per_1000h", key)],
        )

    assert row("aws", "p5.48xlarge", "spot") == pytest.approx((1020.0, 2, 2 / 1.02))
    assert row("aws", "p5.48xlarge", "on-demand") == pytest.approx((1440.0, 0, 0.0))
    assert row("gcp", "a3-highgpu-8g", "spot") == pytest.approx((2868.0, 3, 3 / 2.868))
    ledger = [name for name, _ in got if name.startswith("slamon_ledger_")]
    assert len(ledger) == 9  # three rows, three series each: the heartbeat job is no instance


# --------------------------------------------------------------------------- account events


def test_metrics_count_account_events_and_tell_how_soon_each_on_a_target_starts(
    api: ApiClient, sessions: sessionmaker[Session]
) -> None:
    """Upcoming and open events all, closed ones of this month only; seconds until an upcoming
    event on a target in service starts (none once due), and each target's earliest preemption
    deadline, as stored by the account store (monitor/fleet/account_store.py)."""
    from dataclasses import replace

    from monitor.fleet.account_store import record
    from monitor.status.account import month_start
    from tests.monitor.api.test_pages import retirement, this_month

    now = utcnow().replace(microsecond=0)
    with sessions() as session, session.begin():
        for name, instance in (("gpu-0", "i-0abc"), ("gpu-1", "i-1"), ("gpu-old", "i-old")):
            cfg = TargetConfig(name=name, kind="tcp", url="tcp://h:22", provider="aws", pool="h100")
            row = upsert_target(session, cfg, "config")
            row.external_id = instance
        row.retired_at = now - timedelta(days=1)  # gpu-old: out of service
        session.flush()
        ahead = retirement(now)  # gpu-0, 14 days and a minute ahead
        soon = now + timedelta(seconds=90)
        record(
            session,
            [
                ahead,
                replace(ahead, key="due", starts_at=now - timedelta(minutes=1)),  # past its start
                replace(ahead, key="old-box", entities=("i-old",)),
                replace(
                    ahead, key="notice-1", kind="preemption", entities=("i-1",), starts_at=soon
                ),
                replace(
                    ahead,
                    key="notice-2",
                    kind="preemption",
                    status="open",
                    entities=("i-1",),
                    starts_at=soon + timedelta(seconds=30),
                ),
                replace(ahead, key="no-deadline", kind="preemption", starts_at=None),
                replace(
                    ahead,
                    key="closed-now",
                    kind="scheduled_maintenance",
                    status="closed",
                    starts_at=this_month(now) - timedelta(hours=1),
                    ends_at=this_month(now),
                ),
                replace(
                    ahead,
                    key="closed-before",
                    kind="scheduled_maintenance",
                    status="closed",
                    starts_at=month_start(now) - timedelta(days=2),
                    ends_at=month_start(now) - timedelta(days=1),
                ),
                replace(ahead, provider="azure", key="vm", kind="issue", status="open"),
            ],
            now,
        )
    got = samples(api.get("/metrics").text)
    # the scrape came this long after ``now``: a busy machine's seconds, not slamon's error
    late = (utcnow() - now).total_seconds()

    def count(provider: str, kind: str, status: str) -> float:
        return got[
            ("slamon_account_events", (("kind", kind), ("provider", provider), ("status", status)))
        ]

    def seconds_ahead(value: float, expected: float) -> bool:
        return expected - late - 1 <= value <= expected + 1

    assert count("aws", "retirement", "upcoming") == 3  # ahead, due, old-box
    assert count("aws", "preemption", "upcoming") == 2
    assert count("aws", "preemption", "open") == 1
    assert count("aws", "scheduled_maintenance", "closed") == 1  # not last month's
    assert count("aws", "issue", "open") == 0  # every series of a provider heard of: 0 for none
    assert count("azure", "issue", "open") == 1
    assert not any(name == "slamon_account_events" and ("provider", "gcp") in key
                   for name, key in got)  # fmt: skip

    def starts(target: str, kind: str, event: str) -> tuple[str, tuple[tuple[str, str], ...]]:
        key = (("event", event), ("kind", kind), ("provider", "aws"), ("target", target))
        return "slamon_account_event_starts_in_seconds", key

    ahead_s = timedelta(days=14, minutes=1).total_seconds()
    assert seconds_ahead(got[starts("gpu-0", "retirement", ahead.key)], ahead_s)
    assert seconds_ahead(got[starts("gpu-1", "preemption", "notice-1")], 90)
    assert starts("gpu-0", "retirement", "due") not in got  # due: never a negative count
    assert starts("gpu-old", "retirement", "old-box") not in got  # retired
    assert not any(key[0] == ("event", "no-deadline") for name, key in got if "starts_in" in name)
    deadlines = {
        key: value
        for (name, key), value in got.items()
        if name == "slamon_interruption_notice_deadline_timestamp_seconds"
    }
    assert deadlines == {(("provider", "aws"), ("target", "gpu-1")): soon.timestamp()}


def test_metrics_tell_each_account_source_s_polls_and_never_call_an_unpolled_one_up(
    api: ApiClient, sessions: sessionmaker[Session]
) -> None:
    from monitor.config import parse_config
    from monitor.db.models import AccountSource

    now = utcnow().replace(microsecond=0)
    with sessions() as session, session.begin():
        session.add_all(
            [
                AccountSource(name="health", kind="aws_health", last_polled_at=now,
                              last_success_at=now, consecutive_failures=0, events=3),
                AccountSource(name="vms", kind="azure_resource_health", last_polled_at=now,
                              last_success_at=now - timedelta(hours=2), consecutive_failures=4,
                              last_error="403"),
                AccountSource(name="unconfigured", kind="ec2_events", last_polled_at=now,
                              last_success_at=now),
            ]
        )  # fmt: skip
    api.app.state.slamon.config = parse_config(  # type: ignore[attr-defined]
        "account_events:\n"
        "  - {name: health, kind: aws_health}\n"
        "  - {name: vms, kind: azure_resource_health, subscription: s-1}\n"
        "  - {name: ec2, kind: ec2_events, regions: [us-east-1]}\n"
    )
    got = samples(api.get("/metrics").text)

    def key(name: str, source: str, kind: str) -> tuple[str, tuple[tuple[str, str], ...]]:
        return name, (("kind", kind), ("source", source))

    up, success = "slamon_account_source_up", "slamon_account_source_last_success_timestamp_seconds"
    assert got[key(up, "health", "aws_health")] == 1.0
    assert got[key(up, "vms", "azure_resource_health")] == 0.0
    assert key(up, "ec2", "ec2_events") not in got  # never polled: unknown, not up
    assert got[key(success, "health", "aws_health")] == now.timestamp()
    assert (
        got[key(success, "vms", "azure_resource_health")] == (now - timedelta(hours=2)).timestamp()
    )
    assert key(success, "ec2", "ec2_events") not in got
    assert not any(("source", "unconfigured") in labels for _, labels in got)
    # every provider a source reads has its event counts, zero while it has told nothing
    zero = (("kind", "retirement"), ("provider", "azure"), ("status", "upcoming"))
    assert got[("slamon_account_events", zero)] == 0.0


def test_metric_families_are_named_once_with_units_as_suffixes(
    api: ApiClient, sessions: sessionmaker[Session]
) -> None:
    """No family is declared twice, and a family's samples carry its own name (a counter its
    ``_total``): what ``promtool check metrics`` reads."""
    from monitor.fleet.account_store import record
    from tests.monitor.api.test_pages import retirement

    now = utcnow()
    with sessions() as session, session.begin():
        record(session, [retirement(now)], now)
    text = api.get("/metrics").text
    declared = [line.split()[2] for line in text.splitlines() if line.startswith("# TYPE ")]
    assert len(declared) == len(set(declared))
    account = [name for name in declared if "account" in name or "interruption_notice" in name]
    assert sorted(account) == [
        "slamon_account_event_starts_in_seconds",
        "slamon_account_events",
        "slamon_account_source_last_success_timestamp_seconds",
        "slamon_account_source_up",
        "slamon_interruption_notice_deadline_timestamp_seconds",
    ]
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            assert sample.name.startswith(family.name), (family.name, sample.name)
