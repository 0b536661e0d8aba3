"""The small report with the provider's record in it (issue 31): trainer-0's regional outage
has AWS's own issue event as its evidence and its last ten minutes were a restart the account's
record marks as the user's own doing, left out of SLA downtime; AWS's claim cites the issue."""

from __future__ import annotations

import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from monitor.reports.model import EvidenceRow, ExclusionRow, MonthlyReport
from tests.monitor.reports.conftest import at, small_report

ISSUE_ARN = (
    "arn:aws:health:us-east-1::event/EC2/AWS_EC2_OPERATIONAL_ISSUE/"
    "AWS_EC2_OPERATIONAL_ISSUE_7f3c2a1b"
)
RESTART_ID = "i-0abc:user-restart,=1"  # a comma and a formula sign: CSV must keep both
ISSUE = EvidenceRow(
    event_id=ISSUE_ARN,
    provider="aws",
    kind="issue",
    source="aws_health",
    title="Increased API error rates",
    detail='Instances in use1-az1 lost connectivity; "impaired" <b>status</b>\nsecond line',
    start=at("2025-06-03T13:55:00Z"),
    end=at("2025-06-03T15:25:00Z"),
)
RESTART = EvidenceRow(
    event_id=RESTART_ID,
    provider="aws",
    kind="user_initiated",
    source="agent",
    title="=Reboot requested by the user",
    detail="",
    start=at("2025-06-03T15:00:00Z"),
    end=None,
)
EXCLUDED = ExclusionRow(
    start=at("2025-06-03T15:00:00Z"),
    end=at("2025-06-03T15:10:00Z"),
    seconds=600.0,
    reason="user_initiated",
    event_id=RESTART_ID,
    provider_words="=Reboot requested by the user",
)


def recorded_report() -> MonthlyReport:
    report = small_report()
    trainer0 = report.targets[0]
    first, *rest = trainer0.outages
    first = replace(
        first, sla_counted_s=3473.0, evidence=(ISSUE, RESTART), excluded_by_events_s=600.0
    )
    trainer0 = replace(
        trainer0, sla_downtime_s=3473.0, outages=(first, *rest), exclusions=(EXCLUDED,)
    )
    aws = replace(report.providers[0], claim_event_ids=(ISSUE_ARN,))
    return replace(
        report,
        targets=(trainer0, *report.targets[1:]),
        providers=(aws, *report.providers[1:]),
    )


@pytest.fixture
def recorded() -> MonthlyReport:
    return recorded_report()


def wrapped_cells(pdf: bytes, tmp_path: Path, head: str) -> list[str]:
    """Each table cell of ``pdf`` starting with ``head``, its wrapped lines read down its column
    and joined (as ``pdftotext -layout`` places them), up to a blank or a line that runs into
    the column: an id wider than its column is drawn whole, over lines."""
    path = tmp_path / "layout.pdf"
    path.write_bytes(pdf)
    lines = (
        subprocess.run(
            ["pdftotext", "-layout", "-enc", "UTF-8", str(path), "-"],
            check=True,
            capture_output=True,
        )
        .stdout.decode()
        .splitlines()
    )
    cells = []
    for n, line in enumerate(lines):
        column = line.find(head)
        if column < 0:
            continue
        parts = [line[column:].split(" ")[0]]
        for below in lines[n + 1 :]:
            part = below[column:].split(" ")[0] if len(below) > column else ""
            if not part or below[column - 1 : column].strip():
                break
            parts.append(part)
        cells.append("".join(parts))
    return cells
