"""The performance leg: effective price per unit of training work, with a worked example whose
figures are computed by hand here, through the real path (heartbeats, outages and alerts in the
database -> gather -> assemble) and shown in all four formats."""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import insert
from sqlalchemy.orm import Session

from monitor.config import parse_config
from monitor.config.models import TargetConfig
from monitor.db.models import Heartbeat, ObservedWindow, Outage
from monitor.reports.render import csv as render_csv
from monitor.reports.render import json as render_json
from monitor.reports.render import tables as rt
from monitor.reports.service import build_monthly, render
from monitor.reports.work import work_done
from monitor.sla.intervals import Span
from monitor.targets import upsert_target

NOV = datetime(2026, 11, 1, tzinfo=UTC)
DEC = datetime(2026, 12, 1, tzinfo=UTC)
MINUTE = timedelta(minutes=1)

# The worked example. A training job on one RunPod A100 box at $2.00 an hour does 1,000
# samples a second and reports every minute, for all of November (30 days, 720 h), except:
#   - 1 h down (Nov 1 10:00-11:00): no heartbeats, no work;
#   - 2 h slow (Nov 2 00:00-02:00): 500 samples a second. Slow time comes from the heartbeats
#     themselves, judged by the training_slowdown rule; over a trailing 6 h median, 2 h at half
#     speed stay slow from the first slow sample (00:01) to the first one back (02:01).
# Work = (720 h - 1 h - 2 h) x 3,600 s x 1,000 + 2 h x 3,600 s x 500
#      = 717 x 3,600,000 + 3,600,000 = 2,581,200,000 + 3,600,000 = 2,584,800,000 samples
# Spend = 720 h x $2.00 = $1,440.00
# Effective price = $1,440 / 2,584.8 M samples = $0.557103... per million samples
# List price = $2.00 an hour / (1,000 samples/s x 3,600 s) = $2.00 / 3.6 M = $0.555556 per M
WORK = 2_584_800_000.0
SPEND = 1440.0
EFFECTIVE = 1440.0 / 2584.8  # 0.5571030...
LIST = 2.0 / 3.6  # 0.5555...
DOWN = (NOV + timedelta(hours=10), NOV + timedelta(hours=11))
SLOW = (NOV + timedelta(days=1), NOV + timedelta(days=1, hours=2))
JUDGED_OVER_SIX_HOURS = "alerts: {slowdown_trailing: 6h}"


def worked_example(session: Session) -> None:
    cfg = TargetConfig(
        name="runpod-a100-job",
        kind="heartbeat",
        interval=60,
        grace=120,
        provider="runpod",
        instance_type="A100-80G",
        hourly_price=2.0,
        gpus=1,
    )
    row = upsert_target(session, cfg, "config")
    row.created_at = NOV - timedelta(days=3)
    session.flush()
    session.add(ObservedWindow(target_id=row.id, start=NOV, end=DEC, source="probe"))
    for series in ("reachable", "usable"):  # down is not usable either, as the service records
        session.add(
            Outage(
                target_id=row.id, series=series, start=DOWN[0], end=DOWN[1], source="probe",
                detail={},
            )
        )  # fmt: skip
    beats = []
    at = NOV
    while at <= DEC:
        if not DOWN[0] < at < DOWN[1]:
            rate = 500.0 if SLOW[0] < at <= SLOW[1] else 1000.0
            beats.append({"target_id": row.id, "at": at, "throughput": rate, "payload": None})
        at += MINUTE
    session.execute(insert(Heartbeat), beats)
    session.flush()


def test_the_worked_example_by_hand(session: Session) -> None:
    worked_example(session)
    report = build_monthly(
        session, "2026-11", DEC + timedelta(days=1), parse_config(JUDGED_OVER_SIX_HOURS)
    )
    [target] = report.targets
    assert target.work_done == pytest.approx(WORK, rel=1e-12)
    assert target.work_unit == "samples"
    assert target.nominal_rate == 1000.0
    assert target.slow_s == 2 * 3600
    assert target.downtime_s == 3600
    assert target.effective_price_per_million == pytest.approx(EFFECTIVE, rel=1e-12)
    assert target.list_price_per_million == pytest.approx(LIST, rel=1e-12)
    [work] = report.work
    assert (work.provider, work.instance_type, work.work_unit) == ("runpod", "A100-80G", "samples")
    assert work.spend == pytest.approx(SPEND)
    assert work.effective_price_per_million == pytest.approx(EFFECTIVE, rel=1e-12)
    assert work.list_price_per_million == pytest.approx(LIST, rel=1e-12)
    assert (work.downtime_s, work.slow_s) == (3600, 7200)
    assert work.availability_pct == pytest.approx(100 * (1 - 1 / 720))
    [provider] = report.providers
    assert provider.effective_price_per_million == pytest.approx(EFFECTIVE, rel=1e-12)
    assert provider.work_done == pytest.approx(WORK, rel=1e-12)

    # the same figure in all four formats
    document = json.loads(render_json.render(report))
    assert document["work"][0]["effective_price_per_million"] == pytest.approx(EFFECTIVE)
    # the contract's names (docs/DESIGN.md): targets and providers carry the two work figures
    for row in (document["targets"][0], document["providers"][0]):
        assert row["work_done"] == pytest.approx(WORK)
        assert row["effective_price_per_million"] == pytest.approx(EFFECTIVE)
    assert document["targets"][0]["slow_s"] == 7200
    assert document["targets"][0]["usable_downtime_s"] == 3600
    assert render_csv.parse(render_csv.render(report)) == report
    html = render(report, "html").content.decode()
    assert "Price per unit of work" in html
    assert "0.5571" in html
    assert "0.5556" in html
    assert "0.5571" in rt.scorecard(report).rows[0][-1]
    pdf = render(report, "pdf").content
    assert pdf.startswith(b"%PDF")


def test_the_pdf_shows_the_effective_price(session: Session) -> None:
    import shutil
    import subprocess

    if shutil.which("pdftotext") is None:
        pytest.skip("poppler-utils (pdftotext) not installed")
    worked_example(session)
    report = build_monthly(
        session, "2026-11", DEC + timedelta(days=1), parse_config(JUDGED_OVER_SIX_HOURS)
    )
    text = subprocess.run(
        ["pdftotext", "-layout", "-", "-"],
        input=render(report, "pdf").content,
        capture_output=True,
        check=True,
    ).stdout.decode()
    assert "Price per unit of work" in text
    assert "0.5571" in text


def test_a_cheaper_but_flakier_provider_can_cost_more_per_unit_of_work() -> None:
    """The ranking's point: price per unit of work, not per hour."""
    span = Span(NOV, NOV + timedelta(hours=10))
    steady = [(NOV + i * MINUTE, 1000.0) for i in range(601)]
    flaky = [(NOV + i * MINUTE, 1000.0) for i in range(601) if i % 60 < 30]  # down half the time
    gap = timedelta(minutes=2)
    steady_price = 2.0 * 10 / work_done(steady, span, gap) * 1e6  # $2.00/h, always working
    flaky_price = 1.5 * 10 / work_done(flaky, span, gap) * 1e6  # $1.50/h, working half the time
    assert flaky_price > steady_price


def test_a_throughput_past_any_real_job_counts_no_work_and_the_sum_stays_finite() -> None:
    # schemathesis pushed 1.46e308 units a second: times 30 s it was inf, and the monthly
    # report's JSON refused it with a 500
    start = datetime(2026, 12, 6, 19, 0, tzinfo=UTC)
    samples = [
        (start, 100.0),
        (start + timedelta(seconds=30), 1.46e308),
        (start + timedelta(seconds=60), 100.0),
    ]
    span = Span(start, start + timedelta(minutes=5))
    done = work_done(samples, span, timedelta(minutes=2))
    assert done == 100.0 * 30  # the last interval's work only
    assert math.isfinite(done)
