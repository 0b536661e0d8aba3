"""The interruption ledger in the monthly report: instances with known lives in the database,
through gather and assemble, with every figure computed by hand here, in all four formats."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy.orm import Session

from monitor.config import parse_config
from monitor.config.models import TargetConfig
from monitor.reports.model import LedgerRow, MonthlyReport
from monitor.reports.render import csv as render_csv
from monitor.reports.render import json as render_json
from monitor.reports.render import tables as rt
from monitor.reports.service import build_monthly, render
from monitor.targets import upsert_target

NOV = datetime(2026, 11, 1, tzinfo=UTC)
DEC = datetime(2026, 12, 1, tzinfo=UTC)
DAY = timedelta(days=1)

# November 2026: 30 days, 720 h. Garwood's 95% interval in events (the published tables):
# k=0 [0, 3.688879], k=2 [0.242209, 7.224688], k=3 [0.618672, 8.767273].
#
# aws p5.48xlarge spot, 1,020 instance-hours, 2 interruptions:
#   spot-a  whole month                                  720 h
#   spot-b  born Oct 22, preempted Nov 6 00:00           120 h in Nov, lived 15 d = 360 h
#   spot-c  born Nov 11, ended by the provider Nov 13 12:00   60 h, lived 60 h
#   spot-d  born Nov 21, stopped by the user Nov 26      120 h, lived 120 h (a life, not an
#           interruption)
#   spot-e  preempted Oct 31: not in November
#   2 / 1,020 h = 1.960784 per 1,000 h; [0.242209, 7.224688] / 1.02 = [0.237460, 7.083027]
#   small sample (2 interruptions < 3); median lifetime of 360, 60, 120 = 120 h
# aws p5.48xlarge on-demand, 2 x 720 = 1,440 h, no interruption: 0, [0, 3.688879 / 1.44 =
#   2.561722], small sample (0 < 3), no median (no life ended)
# gcp a3-highgpu-8g spot, all born Oct 2 (30 days before November), 3 preempted:
#   Nov 11 (240 h, lived 40 d = 960 h), Nov 21 (480 h, 50 d = 1,200 h), Nov 30 12:00
#   (708 h, 59.5 d = 1,428 h), two whole month (1,440 h): 2,868 h in all;
#   3 / 2,868 h = 1.046025 per 1,000 h; [0.618672, 8.767273] / 2.868 = [0.215716, 3.056929];
#   no small sample (2,868 h >= 1,000 h, 3 interruptions >= 3); median lifetime 1,200 h
# a heartbeat job with no instance type, found by no source: no instance, not in the ledger
# Scorecard, spot interruptions per 1,000 h: aws 1.960784 (its spot row), gcp 1.046025.
AWS_SPOT = LedgerRow(
    "aws", "p5.48xlarge", "spot", 4, 1020.0, 1, 1, 3, 120.0, 2 / 1.02, 0.242209 / 1.02,
    7.224688 / 1.02, True,
)  # fmt: skip
AWS_ON_DEMAND = LedgerRow(
    "aws", "p5.48xlarge", "on-demand", 2, 1440.0, 0, 0, 0, None, 0.0, 0.0, 3.688879 / 1.44, True
)  # fmt: skip
GCP_SPOT = LedgerRow(
    "gcp", "a3-highgpu-8g", "spot", 5, 2868.0, 3, 0, 3, 1200.0, 3 / 2.868, 0.618672 / 2.868,
    8.767273 / 2.868, False,
)  # fmt: skip


def instance(
    session: Session,
    name: str,
    provider: str,
    instance_type: str | None,
    capacity: str,
    born: datetime,
    ended: tuple[datetime, str] | None = None,
) -> None:
    cfg = TargetConfig.model_validate(
        {"name": name, "kind": "tcp", "url": "tcp://h:22", "provider": provider}
        | ({"instance_type": instance_type} if instance_type else {})
    )
    row = upsert_target(session, cfg, "config")
    row.created_at, row.capacity = born, capacity
    row.discovered_by = "fleet" if instance_type else None
    if ended:
        row.retired_at, row.ended_by = ended
    session.flush()


def known_lives(session: Session) -> None:
    p5, a3 = "p5.48xlarge", "a3-highgpu-8g"
    instance(session, "spot-a", "aws", p5, "spot", NOV - 31 * DAY)
    instance(session, "spot-b", "aws", p5, "spot", NOV - 10 * DAY, (NOV + 5 * DAY, "preempted"))
    instance(session, "spot-c", "aws", p5, "spot", NOV + 10 * DAY, (NOV + 12.5 * DAY, "provider"))
    instance(session, "spot-d", "aws", p5, "spot", NOV + 20 * DAY, (NOV + 25 * DAY, "user"))
    instance(session, "spot-e", "aws", p5, "spot", NOV - 60 * DAY, (NOV - DAY, "preempted"))
    instance(session, "od-a", "aws", p5, "on-demand", NOV - 90 * DAY)
    instance(session, "od-b", "aws", p5, "on-demand", NOV - 5 * DAY)
    for n, days in enumerate((10, 20, 29.5, None, None)):
        end = (NOV + days * DAY, "preempted") if days is not None else None
        instance(session, f"gcp-{n}", "gcp", a3, "spot", NOV - 30 * DAY, end)
    instance(session, "a-job", "aws", None, "unknown", NOV - 30 * DAY)


def built(session: Session) -> MonthlyReport:
    known_lives(session)
    return build_monthly(session, "2026-11", DEC + DAY, parse_config(""))


def assert_rows(found: LedgerRow, expected: LedgerRow) -> None:
    exact = ("provider", "instance_type", "capacity", "instances", "preemptions")
    for name in (*exact, "provider_ends", "ended", "small_sample"):
        assert getattr(found, name) == getattr(expected, name), name
    for name in ("instance_hours", "median_lifetime_h", "per_1000h", "low", "high"):
        value = getattr(expected, name)
        assert getattr(found, name) == (value if value is None else pytest.approx(value, abs=1e-5))


def test_the_ledger_by_hand(session: Session) -> None:
    report = built(session)
    assert len(report.ledger) == 3
    for found, expected in zip(report.ledger, (AWS_ON_DEMAND, AWS_SPOT, GCP_SPOT), strict=True):
        assert_rows(found, expected)
    spot = {p.slug: p.spot_interruptions_per_1000h for p in report.providers}
    assert spot == {"aws": pytest.approx(2 / 1.02), "gcp": pytest.approx(3 / 2.868)}


def test_a_provider_without_spot_capacity_has_no_spot_rate(session: Session) -> None:
    instance(session, "od", "lambda", "gpu_8x_h100", "on-demand", NOV - DAY)
    report = build_monthly(session, "2026-11", DEC + DAY, parse_config(""))
    assert [p.spot_interruptions_per_1000h for p in report.providers] == [None]
    assert [row.capacity for row in report.ledger] == ["on-demand"]


def test_the_ledger_in_all_four_formats(session: Session) -> None:
    report = built(session)
    document = json.loads(render_json.render(report))
    aws_spot = document["ledger"][1]
    assert aws_spot["per_1000h"] == pytest.approx(2 / 1.02)
    assert (aws_spot["capacity"], aws_spot["small_sample"]) == ("spot", True)
    assert {p["slug"]: p["spot_interruptions_per_1000h"] for p in document["providers"]} == {
        "aws": pytest.approx(1.960784, abs=1e-6),
        "gcp": pytest.approx(1.046025, abs=1e-6),
    }
    assert render_json.parse(render_json.render(report)) == report
    assert render_csv.parse(render_csv.render(report)) == report
    text = render_csv.render(report).decode("utf-8-sig")
    assert "section,provider,instance_type,capacity,instances,instance_hours" in text
    assert "ledger,gcp,a3-highgpu-8g,spot,5,2868.0,3,0,3,1200.0," in text
    table = rt.ledger(report)
    assert table.rows[1] == (
        "aws", "p5.48xlarge", "spot", "4", "1,020.00", "1", "1", "5d 00h 00m 00s", "1.961",
        "0.237 – 7.083", "small sample",
    )  # fmt: skip
    assert table.flags == ("muted", "muted", "")
    assert rt.scorecard(report).rows[0][9] in ("1.961", "1.046")
    html = render(report, "html").content.decode()
    assert "Interruption ledger" in html
    assert "0.216 – 3.057" in html
    assert render(report, "pdf").content.startswith(b"%PDF")


def test_the_pdf_shows_the_ledger(session: Session) -> None:
    import shutil
    import subprocess

    if shutil.which("pdftotext") is None:
        pytest.skip("poppler-utils (pdftotext) not installed")
    text = subprocess.run(
        ["pdftotext", "-layout", "-", "-"],
        input=render(built(session), "pdf").content,
        capture_output=True,
        check=True,
    ).stdout.decode()
    assert "Interruption ledger" in text
    assert "2,868.00" in text
