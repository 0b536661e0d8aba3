"""Assembling the monthly report (monitor/reports/assemble.py) from stored intervals, gathered
by inputs.py: edge cases on SQLite and PostgreSQL."""

from __future__ import annotations

import shutil
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session

from monitor.config import parse_config
from monitor.config.models import TargetConfig
from monitor.db.models import ObservedWindow, Outage, Target
from monitor.reports.backfill import import_outages, read_rows
from monitor.reports.model import MonthlyReport
from monitor.reports.render import csv as render_csv
from monitor.reports.render import html as render_html
from monitor.reports.render import json as render_json
from monitor.reports.render import tables as rt
from monitor.reports.service import build_monthly, render
from monitor.targets import sync_config_targets, upsert_target

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


# --------------------------------------------------------------------------- imported history


def test_history_imported_for_before_registration_counts_the_target_as_existing_there(
    session: Session,
) -> None:
    # registered after the month; another monitor's history covers Nov 1-21 with two outages
    t = add(session, "gpu-0", created=DEC + timedelta(days=1), observed=None, gpus=8)
    text = (
        "target,start,end\n"
        "gpu-0,2026-11-03T10:00:00Z,2026-11-03T12:00:00Z\n"
        "gpu-0,2026-11-12T00:00:00Z,2026-11-12T01:00:00Z\n"
    )
    lo, hi = NOV, NOV + timedelta(days=20)
    import_outages(session, read_rows(text, lo, hi), lo, hi)
    session.flush()
    rep = report(session)
    r = row(rep, t.name)
    assert (r.observed_s, r.unknown_s) == (20 * 86400, 10 * 86400)
    assert r.downtime_s == 3 * 3600
    assert r.uptime_pct == pytest.approx(100 * (1 - 3 / (20 * 24)))
    assert r.gpu_hours_lost == 3 * 8
    assert [(o.start, o.end) for o in r.outages] == [
        (datetime(2026, 11, 3, 10, tzinfo=UTC), datetime(2026, 11, 3, 12, tzinfo=UTC)),
        (datetime(2026, 11, 12, tzinfo=UTC), datetime(2026, 11, 12, 1, tzinfo=UTC)),
    ]


def test_a_month_between_imported_history_and_registration_lists_the_target_without_data(
    session: Session,
) -> None:
    add(
        session,
        "gpu-0",
        created=DEC + timedelta(days=1),
        observed=(NOV - timedelta(days=31), NOV - timedelta(days=1)),  # October's import
    )
    r = row(report(session), "gpu-0")
    assert (r.uptime_pct, r.observed_s, r.unknown_s) == (None, 0.0, MONTH_S)


def test_a_target_whose_history_starts_after_the_month_is_not_in_it(session: Session) -> None:
    add(session, "later", created=DEC + timedelta(days=1), observed=(DEC, AFTER))
    assert report(session).targets == ()


# --------------------------------------------------------------------------- policy providers

# Ten instances on the three clouds' built-in single-instance policies, none naming its
# provider, and the hours each was down in November: credits of 10, 30, 100 (AWS), 10, 25
# (GCP), 10, 100 (Azure) % — seven of the ten are owed one.
FLEET: dict[str, tuple[str, float, float, float]] = {
    # name: (policy, hourly price, hours down, credit % owed)
    "aws-0": ("aws-ec2-instance", 98.32, 5, 10),
    "aws-1": ("aws-ec2-instance", 98.32, 10, 30),
    "aws-2": ("aws-ec2-instance", 98.32, 40, 100),
    "aws-3": ("aws-ec2-instance", 98.32, 0, 0),
    "gcp-0": ("gcp-compute-single-vm", 88.25, 1, 10),
    "gcp-1": ("gcp-compute-single-vm", 88.25, 40, 25),
    "gcp-2": ("gcp-compute-single-vm", 88.25, 0, 0),
    "azure-0": ("azure-vm-single-premium", 98.0, 2, 10),
    "azure-1": ("azure-vm-single-premium", 98.0, 80, 100),
    "azure-2": ("azure-vm-single-premium", 98.0, 0, 0),
}
FLEET_CONFIG = "targets:\n" + "".join(
    f"  - {{name: {name}, kind: tcp, url: 'tcp://10.0.0.{i}:22', sla: {sla}, gpus: 8, "
    f"hourly_price: {price}}}\n"
    for i, (name, (sla, price, _, _)) in enumerate(FLEET.items())
)
FLEET_CREDIT = sum(credit / 100 * price * 30 * 24 for _, price, _, credit in FLEET.values())
FLEET_GPU_HOURS_LOST = sum(8 * hours for _, _, hours, _ in FLEET.values())


def fleet_report(session: Session, stored_provider: bool = True) -> MonthlyReport:
    """The fleet synced from its config (no ``provider:`` field) and its November."""
    config = parse_config(FLEET_CONFIG)
    sync_config_targets(session, config, NOV - timedelta(days=60))
    session.flush()
    for target in session.scalars(select(Target)):
        target.created_at = NOV - timedelta(days=60)
        if not stored_provider:
            target.provider = None  # as stored before targets took their policy's provider
        session.add(ObservedWindow(target_id=target.id, start=NOV, end=DEC, source="probe"))
        hours = FLEET[target.name][2]
        if hours:
            start = NOV + timedelta(days=2)
            down(session, target, start, start + timedelta(hours=hours))
    session.flush()
    return build_monthly(session, "2026-11", AFTER, config)


@pytest.mark.parametrize("stored_provider", [True, False], ids=["synced", "stored-without"])
def test_targets_without_a_provider_are_owed_their_credit_under_their_policys_provider(
    session: Session, stored_provider: bool
) -> None:
    rep = fleet_report(session, stored_provider)
    assert {t.name: t.credit_pct for t in rep.targets} == {n: f[3] for n, f in FLEET.items()}
    assert {t.name: t.provider for t in rep.targets} == {n: n.split("-")[0] for n in FLEET}
    assert [p.slug for p in rep.providers] == ["aws", "azure", "gcp"]
    assert sum(t.credit_amount for t in rep.targets) == pytest.approx(FLEET_CREDIT)
    assert sum(p.credit_amount for p in rep.providers) == pytest.approx(FLEET_CREDIT)
    assert sum(p.gpu_hours_lost for p in rep.providers) == pytest.approx(FLEET_GPU_HOURS_LOST)
    assert all(p.claim_deadline is not None for p in rep.providers)


def test_every_rendering_agrees_on_the_credit_owed_and_the_hours_lost(
    session: Session, tmp_path: Path
) -> None:
    rep = fleet_report(session)
    owed, lost = rt.money(FLEET_CREDIT), rt.hours(FLEET_GPU_HOURS_LOST)
    assert dict(rt.summary(rep))["Credit owed"] == owed
    assert dict(rt.summary(rep))["GPU-hours lost"] == lost
    for table, column in ((rt.scorecard(rep), 1), (rt.provider_sla(rep), 0)):
        assert sorted(r[column] for r in table.rows) == ["aws", "azure", "gcp"], table.key
    assert sorted(r[0] for r in rt.training_impact(rep).rows) == ["aws", "azure", "gcp"]
    assert sum(float(str(r[3]).replace(",", "")) for r in rt.training_impact(rep).rows) == (
        pytest.approx(FLEET_GPU_HOURS_LOST)
    )
    page = render_html.render(rep).decode()
    assert f'<span class="label">Credit owed</span><span class="value">{owed}</span>' in page
    for key in ("scorecard", "sla", "impact"):
        assert "None." not in section(page, key)
    for parse in (render_json.parse, render_csv.parse):
        again = parse(render(rep, "json" if parse is render_json.parse else "csv").content)
        assert sum(t.credit_amount for t in again.targets) == pytest.approx(FLEET_CREDIT)
        assert sum(p.credit_amount for p in again.providers) == pytest.approx(FLEET_CREDIT)
    if shutil.which("pdftotext"):
        pdf = tmp_path / "report.pdf"
        pdf.write_bytes(render(rep, "pdf").content)
        text = subprocess.run(
            ["pdftotext", "-enc", "UTF-8", str(pdf), "-"], check=True, capture_output=True
        ).stdout.decode()
        assert owed in text
        assert lost in text
        assert "None." not in text.split("Targets\n")[0]  # the provider sections come first


def test_training_impact_counts_targets_that_name_no_provider(session: Session) -> None:
    t = add(session, "own-box", gpus=4, hourly_price=10.0)  # no provider, no SLA policy
    down(session, t, NOV + timedelta(days=1), NOV + timedelta(days=1, hours=6))
    rep = report(session)
    assert rep.providers == ()
    [impact] = rt.training_impact(rep).rows
    assert impact[0] == rt.NO_PROVIDER
    assert impact[1:5] == (rt.money(10.0 * 720), rt.hours(4 * 720), rt.hours(24.0), "60.00")
    assert dict(rt.summary(rep))["Credit owed"] == "0.00"


def section(page: str, key: str) -> str:
    start = page.index(f'<section id="{key}">')
    return page[start : page.index("</section>", start)]


@pytest.mark.parametrize(
    ("stored", "shown"),
    [
        pytest.param("stalled_step", "stalled_step", id="the-job-stalled"),
        pytest.param("gpu_hardware", "gpu_hardware", id="a-gpu-fault"),
        pytest.param("gpu_hardware+stalled_step", "gpu_hardware+stalled_step", id="both"),
        pytest.param(None, "gpu_hardware", id="nothing-stored"),
    ],
)
def test_a_usable_outage_is_reported_with_the_cause_the_probe_stored(
    session: Session, stored: str | None, shown: str
) -> None:
    t = add(session, "job", kind="heartbeat", url=None, gpus=8)
    session.add(
        Outage(
            target_id=t.id,
            series="usable",
            start=NOV + timedelta(days=2),
            end=NOV + timedelta(days=2, hours=1),
            cause=stored,
            source="probe",
            detail={},
        )
    )
    session.flush()
    [outage] = row(report(session), "job").outages
    assert (outage.series, outage.cause) == ("usable", shown)
