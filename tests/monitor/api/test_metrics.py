"""/metrics: the deployment's state, parsed back with prometheus-client's own parser."""

from __future__ import annotations

from datetime import timedelta

from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy.orm import Session, sessionmaker

from monitor.config.models import TargetConfig
from monitor.db.base import utcnow
from monitor.db.models import Alert, Outage, TargetState
from monitor.targets import upsert_target
from tests.support import ApiClient


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
        if s.name.startswith("slamon_")
    }


def test_metrics_report_target_state_month_uptime_and_alerts(
    api: ApiClient, sessions: sessionmaker[Session]
) -> None:
    now = utcnow()
    with sessions() as session:
        for name in ("gpu-0", "gpu-1"):
            row = upsert_target(
                session,
                TargetConfig(name=name, kind="tcp", url="tcp://h:22", provider="aws", pool="h100"),
                "config",
            )
            row.created_at = now - timedelta(days=60)
        session.flush()
        gpu0, gpu1 = (
            upsert_target(
                session,
                TargetConfig(name=n, kind="tcp", url="tcp://h:22", provider="aws", pool="h100"),
                "config",
            )
            for n in ("gpu-0", "gpu-1")
        )
        session.add_all(
            [
                TargetState(
                    target_id=gpu0.id,
                    vantage="*",
                    series="reachable",
                    state="up",
                    consecutive_failures=0,
                    consecutive_successes=1,
                    detail={},
                ),
                TargetState(
                    target_id=gpu1.id,
                    vantage="*",
                    series="reachable",
                    state="down",
                    consecutive_failures=2,
                    consecutive_successes=0,
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
            ]
        )
        session.commit()
    text = api.get("/metrics").text
    got = samples(text)
    labels0 = (("pool", "h100"), ("provider", "aws"), ("region", ""), ("target", "gpu-0"))
    labels1 = (("pool", "h100"), ("provider", "aws"), ("region", ""), ("target", "gpu-1"))
    assert got[("slamon_target_up", labels0)] == 1.0
    assert got[("slamon_target_up", labels1)] == 0.0
    assert got[("slamon_target_month_uptime_ratio", labels0)] == 1.0
    assert 0.9 < got[("slamon_target_month_uptime_ratio", labels1)] < 1.0
    assert got[("slamon_alerts_firing", (("rule", "target_down"), ("severity", "critical")))] == 1.0
