"""/metrics' interval-exact availability counters and the objective beside them, on the
deployment of ``metrics_rows.py`` scraped at a known instant: observed time and SLA downtime
over all stored history, worked out by hand (``monitor/reports/cumulative.py`` is tested on
its own in tests/monitor/reports/test_cumulative.py)."""

from __future__ import annotations

from datetime import timedelta

from prometheus_client import CollectorRegistry, generate_latest
from sqlalchemy.orm import Session

from monitor.db.base import utcnow
from monitor.metrics import SlamonCollector
from tests.monitor.api.metrics_rows import config, populate
from tests.monitor.api.test_metrics import samples

DAY, MINUTE = timedelta(days=1), timedelta(minutes=1)
# a tcp target's settle (settle_of, monitor/reports/cumulative.py) under the defaults: its 30 s
# interval, 2 confirmations × (the 5 s heartbeat judging round + the 5 s timeout), 5 s margin
SETTLE = timedelta(seconds=30 + 2 * (5 + 5) + 5)


def key(target: str, region: str = "us-east-1") -> tuple[tuple[str, str], ...]:
    return (("pool", "h100"), ("provider", "aws"), ("region", region), ("target", target))


def test_the_counters_hold_all_history_as_the_report_counts_it(session: Session) -> None:
    """gpu-0: watched 40 days, one 7-minute outage 35 days ago. gpu-1: watched 40 days; an
    hour down that ended an hour ago, its first 30 minutes in a configured maintenance window
    (left out under aws-ec2-instance), and 10 minutes down still open, counted up to its
    settle. gpu-stale and the training job: never observed, all zero."""
    now = utcnow()
    populate(session, now)
    registry = CollectorRegistry()
    registry.register(SlamonCollector(session, config(now), now))
    got = samples(generate_latest(registry).decode())

    def counters(target: str, region: str = "us-east-1") -> tuple[float, float]:
        labels = key(target, region)
        return (
            got["slamon_target_observed_seconds_total", labels],
            got["slamon_target_downtime_seconds_total", labels],
        )

    assert counters("gpu-0") == (40 * DAY.total_seconds(), 7 * 60)
    assert counters("gpu-1") == (
        40 * DAY.total_seconds(),
        30 * 60 + (10 * MINUTE - SETTLE).total_seconds(),
    )
    assert counters("gpu-stale") == (0, 0)
    assert counters("job", region="") == (0, 0)
    objectives = {
        dict(labels)["target"]: (dict(labels)["sla"], value)
        for (name, labels), value in got.items()
        if name == "slamon_target_sla_objective_ratio"
    }
    assert objectives == {
        "gpu-0": ("aws-ec2-instance", 0.995),
        "gpu-1": ("aws-ec2-instance", 0.995),
        "gpu-stale": ("aws-ec2-instance", 0.995),
    }  # the job has no SLA policy


def test_a_region_scoped_policy_has_no_objective_as_sla_burn_judges_none(session: Session) -> None:
    from monitor.config import parse_config
    from monitor.config.models import TargetConfig
    from monitor.targets import upsert_target

    now = utcnow()
    cfg = TargetConfig(name="r", kind="tcp", url="tcp://h:22", provider="aws", sla="aws-ec2-region")
    upsert_target(session, cfg, "config")
    session.flush()
    registry = CollectorRegistry()
    registry.register(SlamonCollector(session, parse_config(""), now))
    got = samples(generate_latest(registry).decode())
    assert not any(name == "slamon_target_sla_objective_ratio" for name, _ in got)
    assert ("slamon_target_observed_seconds_total", (("pool", ""), ("provider", "aws"),
            ("region", ""), ("target", "r"))) in got  # fmt: skip
