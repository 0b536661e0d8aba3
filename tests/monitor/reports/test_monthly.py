"""The monthly report from stored intervals: edge cases on SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy.orm import Session

from monitor.config import parse_config
from monitor.config.models import TargetConfig
from monitor.db.models import ObservedWindow, Outage, Target
from monitor.reports.service import build_monthly
from monitor.targets import upsert_target

NOV = datetime(2026, 11, 1, tzinfo=UTC)
DEC = datetime(2026, 12, 1, tzinfo=UTC)
AFTER = DEC + timedelta(days=2)
MONTH_S = 30 * 86400


def add(
    session: Session,
    name: str,
    *,
    created: datetime = NOV - timedelta(days=60),
    retired: datetime | None = None,
    observed: tuple[datetime, datetime] | None = (NOV, DEC),
    **fields: object,
) -> Target:
    cfg = TargetConfig.model_validate({"name": name, "kind": "tcp", "url": "tcp://h:22", **fields})
    row = upsert_target(session, cfg, "config")
    row.created_at, row.retired_at = created, retired
    session.flush()
    if observed:
        session.add(
            ObservedWindow(target_id=row.id, start=observed[0], end=observed[1], source="probe")
        )
    return row


def down(
    session: Session,
    target: Target,
    start: datetime,
    end: datetime | None,
    series: str = "reachable",
) -> None:
    session.add(
        Outage(target_id=target.id, series=series, start=start, end=end, source="probe", detail={})
    )
    session.flush()


def report(session: Session, config: str = "", now: datetime = AFTER):  # type: ignore[no-untyped-def]
    return build_monthly(session, "2026-11", now, parse_config(config))


def row(rep, name: str):  # type: ignore[no-untyped-def]
    return next(t for t in rep.targets if t.name == name)


def test_an_outage_across_the_month_boundary_counts_only_its_part_in_the_month(
    session: Session,
) -> None:
    t = add(session, "gpu-0", sla="aws-ec2-instance", provider="aws", gpus=8, hourly_price=98.32)
    down(session, t, NOV - timedelta(hours=1), NOV + timedelta(minutes=90))
    r = row(report(session), "gpu-0")
    assert r.downtime_s == 90 * 60
    assert r.uptime_pct == pytest.approx(100 * (1 - 5400 / MONTH_S))
    assert r.gpu_hours_lost == pytest.approx(1.5 * 8)
    assert r.cost_lost == pytest.approx(1.5 * 98.32)
    assert r.outages[0].start == NOV


def test_an_open_outage_counts_until_the_report_is_made(session: Session) -> None:
    t = add(session, "gpu-0", observed=(NOV, NOV + timedelta(days=10)))
    down(session, t, NOV + timedelta(days=9), None)
    rep = report(session, now=NOV + timedelta(days=10))
    r = row(rep, "gpu-0")
    assert r.downtime_s == 86400
    assert r.outages[0].end is None
    assert any("still running" in note for note in rep.notes)


def test_overlapping_maintenance_is_excluded_once(session: Session) -> None:
    config = """
maintenance:
  - {name: a, start: 2026-11-10T00:00:00Z, end: 2026-11-10T02:00:00Z, targets: [gpu-0]}
  - {name: b, start: 2026-11-10T01:00:00Z, end: 2026-11-10T03:00:00Z, targets: [gpu-0]}
"""
    t = add(session, "gpu-0", sla="aws-ec2-instance")
    down(
        session, t, datetime(2026, 11, 10, 0, 30, tzinfo=UTC), datetime(2026, 11, 10, 4, tzinfo=UTC)
    )
    r = row(report(session, config), "gpu-0")
    assert r.downtime_s == 3.5 * 3600  # observed: everything
    assert r.sla_downtime_s == 3600  # 03:00-04:00 is outside both windows
    assert r.outages[0].excluded_by_maintenance_s == 2.5 * 3600


def test_a_target_created_mid_month_is_judged_on_its_own_lifetime(session: Session) -> None:
    start = NOV + timedelta(days=15)
    t = add(session, "late", created=start, observed=(start, DEC))
    down(session, t, start + timedelta(days=1), start + timedelta(days=1, hours=15))
    r = row(report(session), "late")
    assert r.observed_s == 15 * 86400
    assert r.uptime_pct == pytest.approx(100 * (1 - 15 / (15 * 24)))


def test_a_target_retired_mid_month_is_pro_rated_and_gone_targets_are_left_out(
    session: Session,
) -> None:
    add(
        session,
        "retired",
        retired=NOV + timedelta(days=10),
        observed=(NOV, NOV + timedelta(days=10)),
    )
    add(session, "long-gone", retired=NOV - timedelta(days=1), observed=None)
    rep = report(session)
    assert [t.name for t in rep.targets] == ["retired"]
    assert rep.targets[0].observed_s == 10 * 86400
    assert rep.targets[0].uptime_pct == 100.0


def test_no_data_at_all_is_unknown_not_100(session: Session) -> None:
    add(session, "blind", observed=None, sla="aws-ec2-instance")
    rep = report(session)
    r = row(rep, "blind")
    assert (r.uptime_pct, r.unknown_s, r.credit_pct) == (None, MONTH_S, 0.0)
    assert any("no data" in note for note in rep.notes)


def test_unknown_time_is_apart_from_uptime(session: Session) -> None:
    t = add(session, "half", observed=(NOV, NOV + timedelta(days=15)))
    down(session, t, NOV + timedelta(days=1), NOV + timedelta(days=1, hours=3))
    r = row(report(session), "half")
    assert r.unknown_s == 15 * 86400
    assert r.uptime_pct == pytest.approx(100 * (1 - 3 / (15 * 24)))


def test_the_credit_tier_and_claim_deadline_follow_the_policy(session: Session) -> None:
    t = add(session, "gpu-0", provider="aws", sla="aws-ec2-instance", hourly_price=10.0)
    down(session, t, NOV + timedelta(days=3), NOV + timedelta(days=3, hours=6))  # 99.17 %
    rep = report(session)
    r = row(rep, "gpu-0")
    assert r.target_pct == 99.5
    assert r.credit_pct == 10.0
    [aws] = rep.providers
    assert aws.credit_amount == pytest.approx(0.10 * 10.0 * 30 * 24)
    assert aws.claim_deadline is not None
    assert aws.claim_deadline > DEC


def test_region_policies_count_only_when_two_zones_are_down_at_once(session: Session) -> None:
    a = add(
        session, "a", provider="aws", region="us-east-1", zone="us-east-1a", sla="aws-ec2-region"
    )
    b = add(
        session, "b", provider="aws", region="us-east-1", zone="us-east-1b", sla="aws-ec2-region"
    )
    down(session, a, NOV + timedelta(hours=1), NOV + timedelta(hours=3))
    down(session, b, NOV + timedelta(hours=2), NOV + timedelta(hours=4))
    rep = report(session)
    assert row(rep, "a").downtime_s == 2 * 3600
    assert row(rep, "a").sla_downtime_s == 3600  # only 02:00-03:00 had both zones down
    [aws] = rep.providers
    assert aws.observed_downtime_s == 3 * 3600  # wall clock: 01:00-04:00


def test_the_accounting_policy_is_recorded_and_hashed_reproducibly(session: Session) -> None:
    add(session, "gpu-0", sla="gcp-compute-single-vm")
    first, second = report(session), report(session)
    assert first.policy_hash == second.policy_hash
    assert "gcp-compute-single-vm" in first.policy["policies"]
    other = report(
        session,
        "maintenance: [{name: m, start: 2026-11-02T00:00:00Z, "
        "end: 2026-11-02T01:00:00Z, targets: [gpu-0]}]",
    )
    assert other.policy_hash != first.policy_hash


def test_an_open_outage_nobody_watched_since_is_unknown_after_the_last_probe(
    session: Session,
) -> None:
    t = add(session, "gpu-0", observed=(NOV, NOV + timedelta(days=2)))
    down(session, t, NOV + timedelta(days=1), None)  # slamon stopped a day later
    r = row(report(session, now=NOV + timedelta(days=10)), "gpu-0")
    assert r.downtime_s == 86400
    assert r.unknown_s == 8 * 86400
    assert r.uptime_pct == 50.0
