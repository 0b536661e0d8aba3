"""The team's own Prometheus alerts in the monthly report: an alert Alertmanager delivered about a
target (stored as POST /api/v1/alertmanager stores it) is evidence for the outage its window
overlaps, counted in full (it excludes nothing) and never cited in a claim to the provider (it
is the team's record, not the provider's). On SQLite and PostgreSQL.

November 2026, gpu-1 on aws (aws-ec2-instance), watched all month, down Nov 10 10:00-11:00:
dcgm-exporter's XID 79 alert fired 09:58 and resolved 10:40 (overlaps: evidence); a second one
fired and resolved Nov 20 (overlaps nothing); gpu-2's alert is not gpu-1's evidence.
"""

from __future__ import annotations

import copy
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy.orm import Session

from monitor.account.alertmanager import from_webhook
from monitor.api.alertmanager import store
from monitor.config import parse_config
from monitor.reports.service import build_monthly, render
from tests.monitor.reports.test_assemble import AFTER, add, down

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "alertmanager"
RESOLVED: dict[str, Any] = json.loads((FIXTURES / "2-dcgm-xid-one-resolved.json").read_text())


def nov(day: int, hour: int, minute: int = 0) -> datetime:
    return datetime(2026, 11, day, hour, minute, tzinfo=UTC)


def delivery(start: datetime, end: datetime) -> dict[str, Any]:
    """The captured delivery (gpu-1's alert resolved, gpu-2's firing) moved to ``start``."""
    document = copy.deepcopy(RESOLVED)
    for alert in document["alerts"]:
        alert["startsAt"] = start.isoformat()
        if alert["status"] == "resolved":
            alert["endsAt"] = end.isoformat()
    return document


def test_an_overlapping_alert_is_evidence_counted_in_full_and_never_claimed(
    session: Session,
) -> None:
    gpu = add(session, "gpu-1", provider="aws", region="us-east-1", sla="aws-ec2-instance")
    add(session, "gpu-2", provider="aws", region="us-east-1", sla="aws-ec2-instance")
    down(session, gpu, nov(10, 10), nov(10, 11))
    for start, end in ((nov(10, 9, 58), nov(10, 10, 40)), (nov(20, 3), nov(20, 4))):
        store(session, from_webhook(delivery(start, end)).alerts, end)
    session.flush()

    report = build_monthly(session, "2026-11", AFTER, parse_config(""))
    row = next(t for t in report.targets if t.name == "gpu-1")
    (outage,) = row.outages
    (evidence,) = outage.evidence  # not Nov 20's, nor gpu-2's
    assert (evidence.provider, evidence.source, evidence.kind) == (
        "prometheus",
        "alertmanager",
        "issue",
    )
    assert evidence.event_id == "abccd36610cf5b47@2026-11-10T09:58:00Z"
    assert evidence.title == "GPU 0 on 10.0.0.5:9400 reported XID 79"
    assert (evidence.start, evidence.end) == (nov(10, 9, 58), nov(10, 10, 40))
    assert (outage.sla_counted_s, outage.excluded_by_events_s) == (3_600, 0)
    assert row.exclusions == ()
    (aws,) = report.providers
    assert aws.claim_event_ids == ()  # the provider's record holds nothing of it

    doc = json.loads(render(report, "json").content)
    shown = next(t for t in doc["targets"] if t["name"] == "gpu-1")["outages"][0]["evidence"]
    assert [(e["provider"], e["event_id"]) for e in shown] == [
        ("prometheus", "abccd36610cf5b47@2026-11-10T09:58:00Z")
    ]
