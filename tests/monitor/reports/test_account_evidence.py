"""The monthly report's claims with the provider's record (issue 31): a worked example computed
by hand, on SQLite and PostgreSQL, in all four formats.

November 2026: 30 days = 2,592,000 s. Two instances, watched all month:

trainer-aws (EC2 i-0abc1234def567890, aws-ec2-instance: 99.5 %; credits 10 % below 99.5,
30 % below 99.0, 100 % below 95.0; continuous; $98.32/h), three outages:

  A1  Nov 5 10:00-15:00   5 h = 18,000 s. AWS Health scheduled its retirement for 10:00-12:00:
                          evidence, and still counted (AWS's doing): 18,000 s.
  A2  Nov 12 02:00-04:00  2 h = 7,200 s. EC2's system-maintenance event 02:30-03:30, which the
                          user accepted, and a configured maintenance window 03:00-03:45:
                          02:30-03:45 is left out once (4,500 s: 2,700 s by the window,
                          1,800 s = 02:30-03:00 by the accepted event); counted 2,700 s.
  A3  Nov 20 08:00-08:45  45 min = 2,700 s, nothing on record: counted 2,700 s.

  observed downtime 27,900 s; SLA downtime 18,000 + 2,700 + 2,700 = 23,400 s;
  uptime 100 x (1 - 23,400 / 2,592,000) = 99.0972222...% -> below 99.5, not below 99.0: 10 %,
  $7,079.04 (10 % of 720 h x $98.32). The claim cites the retirement and the maintenance event
  (A2 is counted in part), in that order.
  With exclude_maintenance false: 27,900 s counted, 98.9236111...% -> 30 %, nothing excluded.

trainer-azure (VM .../virtualMachines/trainer-azure-0, azure-vm-single-premium: 99.9 %; credits
10 % below 99.9; whole minutes), two outages:

  B1  Nov 8 14:00-15:00   1 h = 3,600 s. Resource Health: UserInitiated 14:00-14:40 (a reboot
                          the user asked for), and Planned maintenance 14:30-14:50 the user
                          accepted: 14:00-14:40 left out as user_initiated (2,400 s), 14:40-14:50
                          as accepted maintenance (600 s; 14:30-14:40 was already out); counted
                          14:50-15:00 = 10 min = 600 s.
  B2  Nov 25 09:00-09:20  20 min = 1,200 s, nothing on record: counted 1,200 s.

  observed downtime 4,800 s; SLA downtime 1,800 s; uptime 100 x (1 - 1,800 / 2,592,000) =
  99.9305555...% -> met, no credit, no claim. Counted as observed (4,800 s: 99.8148 %) it would
  have owed 10 % for downtime the user caused.
  With exclude_user_initiated false: 14:00-14:30 and 14:50-15:00 count (40 min) + 20 min =
  3,600 s: 99.8611111...% -> 10 %.

The account events are read in their providers' published shapes by the sources' own mapping
functions (the texts are illustrative) and stored with monitor.fleet.account_store.record.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy.orm import Session

from monitor.account.kinds import aws_health, azure_resource_health, ec2_events
from monitor.config import parse_config
from monitor.fleet.account_store import record
from monitor.reports.model import MonthlyReport, TargetReport
from monitor.reports.render import csv as render_csv
from monitor.reports.render import json as render_json
from monitor.reports.render import tables as rt
from monitor.reports.service import build_monthly, render
from monitor.sla.terms import BUILTIN_POLICIES
from tests.monitor.reports.render.conftest import wrapped_cells
from tests.monitor.reports.test_assemble import AFTER, MONTH_S, add, down, section

INSTANCE = "i-0abc1234def567890"
VM = (
    "/subscriptions/0f6c2a4e-5b1d-4c3e-9a8f-7d6e5c4b3a21/resourceGroups/gpu/providers/"
    "Microsoft.Compute/virtualMachines/trainer-azure-0"
)
RETIREMENT_ARN = (
    "arn:aws:health:us-east-1::event/EC2/AWS_EC2_INSTANCE_RETIREMENT_SCHEDULED/"
    "AWS_EC2_INSTANCE_RETIREMENT_SCHEDULED_4b2f8e1c"
)
MAINTENANCE_KEY = f"{INSTANCE}/instance-event-0a1b2c3d4e5f60789"
REBOOT_KEY = f"{VM}@2026-11-08T14:00:00+00:00"
PLANNED_KEY = f"{VM}@2026-11-08T14:30:00+00:00"
SEEN = datetime(2026, 11, 1, tzinfo=UTC)
CONFIG = """
maintenance:
  - {name: driver-upgrade, start: 2026-11-12T03:00:00Z, end: 2026-11-12T03:45:00Z,
     targets: [trainer-aws]}
"""


def nov(day: int, hour: int, minute: int = 0) -> datetime:
    return datetime(2026, 11, day, hour, minute, tzinfo=UTC)


def overridden(name: str, **settings: Any) -> str:
    """``CONFIG`` with the built-in policy ``name`` replaced by the user's own, changed."""
    policy = {**BUILTIN_POLICIES[name].to_json(), **settings}
    return CONFIG + f"sla_policies:\n  - {json.dumps(policy)}\n"


def month(session: Session) -> None:
    """The two instances, their outages and what their providers told the account."""
    aws = add(
        session,
        "trainer-aws",
        provider="aws",
        region="us-east-1",
        sla="aws-ec2-instance",
        instance_id=INSTANCE,
        gpus=8,
        hourly_price=98.32,
    )
    azure = add(
        session,
        "trainer-azure",
        provider="azure",
        region="eastus",
        sla="azure-vm-single-premium",
        instance_id=VM,
        gpus=8,
        hourly_price=27.20,
    )
    for target, start, end in (
        (aws, nov(5, 10), nov(5, 15)),
        (aws, nov(12, 2), nov(12, 4)),
        (aws, nov(20, 8), nov(20, 8, 45)),
        (azure, nov(8, 14), nov(8, 15)),
        (azure, nov(25, 9), nov(25, 9, 20)),
    ):
        down(session, target, start, end)
    # AWS Health's DescribeEvents entry for the retirement, with its description and entity
    retirement = aws_health.event(
        {
            "arn": RETIREMENT_ARN,
            "service": "EC2",
            "eventTypeCode": "AWS_EC2_INSTANCE_RETIREMENT_SCHEDULED",
            "eventTypeCategory": "scheduledChange",
            "region": "us-east-1",
            "startTime": nov(5, 10),
            "endTime": nov(5, 12),
            "lastUpdatedTime": nov(5, 12),
            "statusCode": "closed",
        },
        "EC2 has detected degradation of the underlying hardware hosting your instance.",
        (INSTANCE,),
    )
    # EC2 DescribeInstanceStatus' event of the same instance, completed
    maintenance = ec2_events.event(
        {
            "Code": "system-maintenance",
            "Description": "[Completed] Scheduled system maintenance: network",
            "InstanceEventId": "instance-event-0a1b2c3d4e5f60789",
            "NotBefore": nov(12, 2, 30),
            "NotAfter": nov(12, 3, 30),
        },
        INSTANCE,
        "us-east-1",
        nov(13, 0),
    )
    # Resource Health availability statuses of the VM, once it was available again
    reboot, planned = (
        azure_resource_health.availability_event(
            {
                "id": f"{VM}/providers/Microsoft.ResourceHealth/availabilityStatuses/{name}",
                "location": "eastus",
                "properties": {
                    "availabilityState": "Available",
                    "title": title,
                    "summary": summary,
                    "reasonType": reason,
                    "occuredTime": start.isoformat(),
                    "reportedTime": end.isoformat(),
                },
            }
        )
        for name, title, summary, reason, start, end in (
            (
                "reboot",
                "Rebooted by user",
                "The virtual machine rebooted as requested by an authorized user or process.",
                "UserInitiated",
                nov(8, 14),
                nov(8, 14, 40),
            ),
            (
                "planned",
                "Planned maintenance",
                "The virtual machine was redeployed for planned host maintenance.",
                "Planned",
                nov(8, 14, 30),
                nov(8, 14, 50),
            ),
        )
    )
    assert reboot is not None
    assert planned is not None
    assert (retirement.kind, maintenance.kind) == ("retirement", "scheduled_maintenance")
    assert (reboot.kind, planned.kind) == ("user_initiated", "scheduled_maintenance")
    record(session, [retirement, reboot], SEEN)
    record(session, [maintenance, planned], SEEN, accepted=True)  # the user accepted both
    session.flush()


def build(session: Session, config: str = CONFIG) -> MonthlyReport:
    return build_monthly(session, "2026-11", AFTER, parse_config(config))


def target(report: MonthlyReport, name: str) -> TargetReport:
    return next(t for t in report.targets if t.name == name)


# --------------------------------------------------------------------------- the numbers


def test_the_retirement_is_evidence_and_accepted_maintenance_is_left_out_once(
    session: Session,
) -> None:
    month(session)
    rep = build(session)
    a = target(rep, "trainer-aws")
    assert MONTH_S == 2_592_000
    assert a.downtime_s == 27_900  # observed, unchanged
    assert a.sla_downtime_s == 23_400
    assert a.uptime_pct == pytest.approx(99.0972222222, abs=1e-9)
    assert a.credit_pct == 10.0
    assert a.credit_amount == pytest.approx(7_079.04)
    a1, a2, a3 = a.outages
    assert [e.event_id for e in a1.evidence] == [RETIREMENT_ARN]
    assert (a1.sla_counted_s, a1.excluded_by_events_s) == (18_000, 0)  # evidence, still counted
    [evidence] = a1.evidence
    assert (evidence.kind, evidence.source, evidence.provider) == (
        "retirement",
        "aws_health",
        "aws",
    )
    assert evidence.title == "EC2 instance retirement scheduled"
    assert evidence.detail.startswith("EC2 has detected degradation")
    assert (evidence.start, evidence.end) == (nov(5, 10), nov(5, 12))
    assert [e.event_id for e in a2.evidence] == [MAINTENANCE_KEY]
    assert (a2.sla_counted_s, a2.excluded_by_maintenance_s, a2.excluded_by_events_s) == (
        2_700,
        2_700,
        1_800,
    )
    assert (a3.sla_counted_s, a3.evidence) == (2_700, ())
    [excluded] = a.exclusions
    assert (excluded.start, excluded.end, excluded.seconds) == (nov(12, 2, 30), nov(12, 3), 1_800)
    assert (excluded.reason, excluded.event_id) == ("accepted_maintenance", MAINTENANCE_KEY)
    assert excluded.provider_words == (
        f"system-maintenance of {INSTANCE}; [Completed] Scheduled system maintenance: network"
    )


def test_the_user_s_own_reboot_is_left_out_and_no_credit_is_owed_for_it(session: Session) -> None:
    month(session)
    b = target(build(session), "trainer-azure")
    assert b.downtime_s == 4_800
    assert b.sla_downtime_s == 1_800
    assert b.uptime_pct == pytest.approx(99.9305555556, abs=1e-9)
    assert (b.credit_pct, b.credit_amount) == (0.0, 0.0)
    b1, b2 = b.outages
    assert [e.event_id for e in b1.evidence] == [REBOOT_KEY, PLANNED_KEY]
    assert [e.kind for e in b1.evidence] == ["user_initiated", "scheduled_maintenance"]
    assert (b1.sla_counted_s, b1.excluded_by_events_s) == (600, 3_000)
    assert (b2.sla_counted_s, b2.evidence) == (1_200, ())
    assert [(x.start, x.end, x.seconds, x.reason, x.event_id) for x in b.exclusions] == [
        (nov(8, 14), nov(8, 14, 40), 2_400, "user_initiated", REBOOT_KEY),
        (nov(8, 14, 40), nov(8, 14, 50), 600, "accepted_maintenance", PLANNED_KEY),
    ]
    assert b.exclusions[0].provider_words == (
        "Rebooted by user; The virtual machine rebooted as requested by an authorized user or "
        "process."
    )


def test_the_claim_cites_the_provider_s_event_ids(session: Session) -> None:
    month(session)
    rep = build(session)
    aws, azure = rep.providers
    assert aws.slug == "aws"
    assert aws.credit_pct == pytest.approx(10.0)  # its targets' credits over its spend
    assert aws.claim_deadline == datetime(2027, 2, 1, tzinfo=UTC)  # end of January
    assert aws.claim_event_ids == (RETIREMENT_ARN, MAINTENANCE_KEY)
    assert (azure.slug, azure.credit_pct, azure.claim_event_ids) == ("azure", 0.0, ())


def test_accepted_maintenance_counts_under_a_policy_that_does_not_exclude_maintenance(
    session: Session,
) -> None:
    month(session)
    rep = build(session, overridden("aws-ec2-instance", exclude_maintenance=False))
    a = target(rep, "trainer-aws")
    assert (a.downtime_s, a.sla_downtime_s) == (27_900, 27_900)
    assert a.uptime_pct == pytest.approx(98.9236111111, abs=1e-9)
    assert a.credit_pct == 30.0
    assert a.exclusions == ()
    a2 = a.outages[1]
    assert (a2.sla_counted_s, a2.excluded_by_events_s) == (7_200, 0)
    assert [e.event_id for e in a2.evidence] == [MAINTENANCE_KEY]  # still its evidence
    assert target(rep, "trainer-azure").sla_downtime_s == 1_800  # its own policy unchanged


def test_the_user_s_own_doing_counts_under_a_policy_that_does_not_exclude_it(
    session: Session,
) -> None:
    month(session)
    rep = build(session, overridden("azure-vm-single-premium", exclude_user_initiated=False))
    b = target(rep, "trainer-azure")
    assert b.sla_downtime_s == 3_600
    assert b.uptime_pct == pytest.approx(99.8611111111, abs=1e-9)
    assert b.credit_pct == 10.0
    assert [(x.reason, x.seconds) for x in b.exclusions] == [("accepted_maintenance", 1_200)]
    assert rep.providers[1].claim_event_ids == (REBOOT_KEY, PLANNED_KEY)


# --------------------------------------------------------------------------- the four formats


def test_the_json_carries_evidence_exclusions_and_the_claim_s_ids(session: Session) -> None:
    month(session)
    rep = build(session)
    doc = json.loads(render(rep, "json").content)
    a, b = (
        next(t for t in doc["targets"] if t["name"] == n) for n in ("trainer-aws", "trainer-azure")
    )
    assert (a["downtime_s"], a["sla_downtime_s"], a["credit_pct"]) == (27_900.0, 23_400.0, 10.0)
    assert a["outages"][0]["evidence"] == [
        {
            "event_id": RETIREMENT_ARN,
            "provider": "aws",
            "kind": "retirement",
            "source": "aws_health",
            "title": "EC2 instance retirement scheduled",
            "detail": (
                "EC2 has detected degradation of the underlying hardware hosting your instance."
            ),
            "start": "2026-11-05T10:00:00Z",
            "end": "2026-11-05T12:00:00Z",
        }
    ]
    assert a["exclusions"] == [
        {
            "start": "2026-11-12T02:30:00Z",
            "end": "2026-11-12T03:00:00Z",
            "seconds": 1800.0,
            "reason": "accepted_maintenance",
            "event_id": MAINTENANCE_KEY,
            "provider_words": (
                f"system-maintenance of {INSTANCE}; "
                "[Completed] Scheduled system maintenance: network"
            ),
        }
    ]
    assert [(x["reason"], x["seconds"]) for x in b["exclusions"]] == [
        ("user_initiated", 2400.0),
        ("accepted_maintenance", 600.0),
    ]
    assert (b["sla_downtime_s"], b["credit_pct"]) == (1800.0, 0.0)
    assert doc["providers"][0]["claim_event_ids"] == [RETIREMENT_ARN, MAINTENANCE_KEY]
    assert "exclude_user_initiated" in doc["policy"]["policies"]["aws-ec2-instance"]
    assert render_json.parse(render(rep, "json").content) == rep


def test_the_csv_carries_evidence_exclusions_and_the_claim_s_ids(session: Session) -> None:
    accepted, user = "accepted_maintenance", "user_initiated"
    month(session)
    rep = build(session)
    data = render(rep, "csv").content
    assert render_csv.parse(data) == rep
    text = data.decode("utf-8-sig")
    evidence = [line for line in text.splitlines() if line.startswith("evidence,")]
    assert [line.split(",")[1:4] for line in evidence] == [
        ["trainer-aws", "1", RETIREMENT_ARN],
        ["trainer-aws", "2", MAINTENANCE_KEY],
        ["trainer-azure", "1", REBOOT_KEY],
        ["trainer-azure", "1", PLANNED_KEY],
    ]
    exclusions = [line for line in text.splitlines() if line.startswith("exclusion,")]
    assert [line.split(",")[1:6] for line in exclusions] == [
        ["trainer-aws", "2026-11-12T02:30:00Z", "2026-11-12T03:00:00Z", "1800.0", accepted],
        ["trainer-azure", "2026-11-08T14:00:00Z", "2026-11-08T14:40:00Z", "2400.0", user],
        ["trainer-azure", "2026-11-08T14:40:00Z", "2026-11-08T14:50:00Z", "600.0", accepted],
    ]
    assert f"{RETIREMENT_ARN};{MAINTENANCE_KEY}" in text  # the aws provider row's claim ids


def test_the_html_shows_evidence_exclusions_and_the_claim_s_ids(session: Session) -> None:
    month(session)
    page = render(build(session), "html").content.decode()
    claims = section(page, "sla")
    assert f"{RETIREMENT_ARN}, {MAINTENANCE_KEY}" in claims
    assert "99.097%" in section(page, "targets")  # 99.0972…, truncated
    assert "99.930%" in section(page, "targets")
    evidence = section(page, "evidence")
    for text in (RETIREMENT_ARN, MAINTENANCE_KEY, REBOOT_KEY, PLANNED_KEY):
        assert text in evidence, text
    assert "EC2 instance retirement scheduled; EC2 has detected degradation" in evidence
    excluded = section(page, "exclusions")
    assert "user-initiated (exclude_user_initiated)" in excluded
    assert "maintenance the user accepted (exclude_maintenance)" in excluded
    for shown in ("30m 00s", "40m 00s", "10m 00s"):
        assert shown in excluded, shown
    assert "Rebooted by user; The virtual machine rebooted as requested" in excluded


@pytest.mark.skipif(not shutil.which("pdftotext"), reason="needs pdftotext (poppler-utils)")
def test_the_pdf_shows_evidence_exclusions_and_the_claim_s_ids(
    session: Session, tmp_path: Path
) -> None:
    month(session)
    pdf = render(build(session), "pdf").content
    path = tmp_path / "report.pdf"
    path.write_bytes(pdf)
    raw = subprocess.run(
        ["pdftotext", "-enc", "UTF-8", str(path), "-"], check=True, capture_output=True
    ).stdout.decode()
    text = " ".join(raw.split())
    for expected in (
        "99.097%",
        "99.930%",
        rt.money(7_079.04),
        "The provider's record",
        "EC2 instance retirement scheduled",
        "Excluded on the provider's record",
        "user-initiated (exclude_user_initiated)",
        "maintenance the user accepted (exclude_maintenance)",
        "Rebooted by user",
        "40m 00s",
    ):
        assert expected in text, expected
    # the ARN, wider than its column, is drawn whole over lines: in the claim, in the evidence
    cells = wrapped_cells(pdf, tmp_path, "arn:aws:health:")
    assert len(cells) == 2
    assert all(cell.startswith(RETIREMENT_ARN) for cell in cells), cells
