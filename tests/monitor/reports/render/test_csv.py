"""Tests for the CSV report renderer (monitor/reports/render/csv.py)."""

from __future__ import annotations

import csv
import io
from collections.abc import Callable
from dataclasses import replace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from monitor.reports.model import MonthlyReport
from monitor.reports.render import csv as render_csv

AWKWARD = [0.1 + 0.2, 99.99999, 1 / 3, 5e-324, 1.7976931348623157e308, 2.0**53 + 2, -0.0, 1e16]
SECTIONS = [
    "report", "provider", "target", "outage", "evidence", "exclusion", "pool", "incident", "note",
    "work", "ledger", "policy",
]  # fmt: skip


def rows(report: MonthlyReport) -> list[list[str]]:
    text = render_csv.render(report).decode("utf-8-sig")
    return list(csv.reader(io.StringIO(text)))


def section(report: MonthlyReport, name: str) -> list[dict[str, str]]:
    """The rows of one section as dicts, the way a spreadsheet filter on column A shows them."""
    header: list[str] = []
    found = []
    for row in rows(report):
        if row and row[0] == "section":
            header = row
        elif row and row[0] == name:
            found.append(dict(zip(header, row, strict=True)))
    return found


def test_the_report_round_trips_to_an_equal_report(report: MonthlyReport) -> None:
    assert render_csv.parse(render_csv.render(report)) == report


def test_sections_come_in_order_each_under_its_own_header_row(recorded: MonthlyReport) -> None:
    all_rows = rows(recorded)
    assert all_rows[0][:3] == ["section", "month", "period_start"]
    labels = [r[0] for r in all_rows if r and r[0] != "section"]
    assert list(dict.fromkeys(labels)) == SECTIONS
    headers = sum(1 for r in all_rows if r and r[0] == "section")
    assert headers == len(SECTIONS)


def test_the_file_starts_with_a_bom_so_spreadsheets_read_utf8(report: MonthlyReport) -> None:
    assert render_csv.render(report).startswith("\ufeffsection,".encode())


def test_targets_are_one_row_each_with_their_numbers(report: MonthlyReport) -> None:
    targets = section(report, "target")
    assert [t["name"] for t in targets] == [t.name for t in report.targets]
    trainer1 = targets[1]
    assert trainer1["hourly_price"] == "0.30000000000000004"
    assert trainer1["gpu_hours_lost"] == "0.3333333333333333"
    assert trainer1["cost_lost"] == "1234.5678901234567"
    assert "outages" not in trainer1


def test_a_target_without_data_has_an_empty_uptime_cell(report: MonthlyReport) -> None:
    nodata = next(t for t in section(report, "target") if t["name"] == "lambda-h100-1")
    assert nodata["uptime_pct"] == ""
    assert render_csv.parse(render_csv.render(report)).targets[3].uptime_pct is None


def test_outages_name_their_target_and_an_open_one_has_no_end(report: MonthlyReport) -> None:
    outages = section(report, "outage")
    assert [(o["target"], o["start"], o["end"]) for o in outages] == [
        ("trainer-0", "2025-06-03T14:02:07Z", "2025-06-03T15:10:00Z"),
        ("trainer-0", "2025-06-17T02:00:00.250000Z", "2025-06-17T02:03:34Z"),
        ("trainer-1", "2025-06-30T22:47:13Z", ""),
        ("lambda-a100-0", "2025-06-09T08:15:00Z", "2025-06-09T08:15:00.259200Z"),
    ]


def test_providers_carry_credit_and_claim_deadline(report: MonthlyReport) -> None:
    aws, lam = section(report, "provider")
    assert (aws["slug"], aws["credit_pct"], aws["credit_amount"]) == (
        "aws",
        "10.0",
        "0.30000000000000004",
    )
    assert aws["claim_deadline"] == "2025-08-31T23:59:59Z"
    assert (lam["uptime_pct"], lam["claim_deadline"]) == ("99.99999", "")


def test_incident_regions_are_joined_with_semicolons(report: MonthlyReport) -> None:
    two = replace(report.incidents[0], regions=("us-east-1", "us-west-2"))
    changed = replace(report, incidents=(two,))
    assert section(changed, "incident")[0]["regions"] == "us-east-1;us-west-2"
    assert render_csv.parse(render_csv.render(changed)).incidents[0].regions == (
        "us-east-1",
        "us-west-2",
    )


def test_policy_settings_are_one_row_each_as_json(report: MonthlyReport) -> None:
    policy = {r["key"]: r["value"] for r in section(report, "policy")}
    assert policy["currency"] == '"USD"'
    assert policy["vantage_quorum"] == "2"


@pytest.mark.parametrize(
    "name",
    ['=HYPERLINK("http://evil.example","x")', "+1+2", "-2+3", "@SUM(A1)", "'quoted", "\tcmd"],
)
def test_text_a_spreadsheet_would_run_is_defused_and_still_round_trips(
    report: MonthlyReport, name: str
) -> None:
    t0 = replace(report.targets[0], name=name)
    changed = replace(report, targets=(t0, *report.targets[1:]))
    assert section(changed, "target")[0]["name"] == "'" + name
    assert section(changed, "outage")[0]["target"] == "'" + name
    assert render_csv.parse(render_csv.render(changed)) == changed


def test_text_with_commas_quotes_and_newlines_round_trips(report: MonthlyReport) -> None:
    title = 'Degraded "launches", region\nus-tx-3'
    changed = replace(report, incidents=(replace(report.incidents[1], title=title),))
    assert render_csv.parse(render_csv.render(changed)).incidents[0].title == title


@pytest.mark.parametrize("value", AWKWARD, ids=repr)
def test_awkward_floats_round_trip_bit_for_bit(report: MonthlyReport, value: float) -> None:
    changed = replace(report, targets=(replace(report.targets[0], cost_lost=value),))
    back = render_csv.parse(render_csv.render(changed))
    assert repr(back.targets[0].cost_lost) == repr(value)


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])  # report is immutable
@given(value=st.floats(allow_nan=False))
def test_any_float_round_trips(report: MonthlyReport, value: float) -> None:
    changed = replace(report, providers=(replace(report.providers[0], spend=value),))
    back = render_csv.parse(render_csv.render(changed))
    assert repr(back.providers[0].spend) == repr(value)


def test_an_empty_report_round_trips(report: MonthlyReport) -> None:
    empty = replace(report, providers=(), targets=(), pools=(), incidents=(), notes=(), policy={})
    assert render_csv.parse(render_csv.render(empty)) == empty


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"\xff\xfe", "not a UTF-8 CSV report"),
        (b"a,b\n", "no 'section' header row"),
        (b"section,text\nnote,hello\n", "exactly one 'report' row"),
        (b"section,a,b\nx,1\n", "1 cells under 2 columns"),
    ],
    ids=["not-utf8", "no-header", "no-report-row", "ragged-row"],
)
def test_parse_names_what_is_wrong(data: bytes, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        render_csv.parse(data)


def test_an_outage_of_an_unknown_target_is_refused(report: MonthlyReport) -> None:
    text = render_csv.render(report).decode("utf-8-sig").replace("outage,trainer-1,", "outage,x,")
    with pytest.raises(ValueError, match="outages of unknown targets"):
        render_csv.parse(text.encode())


def test_a_thousand_targets_round_trip(make_report: Callable[[int], MonthlyReport]) -> None:
    big = make_report(1000)
    assert render_csv.parse(render_csv.render(big)) == big


def test_the_provider_s_record_round_trips(recorded: MonthlyReport) -> None:
    assert render_csv.parse(render_csv.render(recorded)) == recorded


def test_evidence_names_its_outage_and_keeps_the_provider_s_words(
    recorded: MonthlyReport,
) -> None:
    [issue, restart] = section(recorded, "evidence")
    assert (issue["target"], issue["outage"], issue["kind"]) == ("trainer-0", "1", "issue")
    assert issue["event_id"].endswith("AWS_EC2_OPERATIONAL_ISSUE_7f3c2a1b")
    assert issue["detail"].endswith('"impaired" <b>status</b>\nsecond line')
    assert (issue["start"], issue["end"]) == ("2025-06-03T13:55:00Z", "2025-06-03T15:25:00Z")
    assert restart["title"] == "'=Reboot requested by the user"  # no formula in a spreadsheet
    assert restart["end"] == ""  # still open
    [outage] = [o for o in section(recorded, "outage") if o["excluded_by_events_s"] != "0.0"]
    assert "evidence" not in outage


def test_exclusions_say_what_was_left_out_and_why(recorded: MonthlyReport) -> None:
    [row] = section(recorded, "exclusion")
    assert row == {
        "section": "exclusion",
        "target": "trainer-0",
        "start": "2025-06-03T15:00:00Z",
        "end": "2025-06-03T15:10:00Z",
        "seconds": "600.0",
        "reason": "user_initiated",
        "event_id": "i-0abc:user-restart,=1",
        "provider_words": "'=Reboot requested by the user",
    }
    [aws] = [p for p in section(recorded, "provider") if p["slug"] == "aws"]
    assert aws["claim_event_ids"].endswith("AWS_EC2_OPERATIONAL_ISSUE_7f3c2a1b")


def test_evidence_of_an_unknown_outage_is_refused(recorded: MonthlyReport) -> None:
    text = (
        render_csv.render(recorded)
        .decode("utf-8-sig")
        .replace("evidence,trainer-0,1,", "evidence,trainer-0,9,")
    )
    with pytest.raises(ValueError, match="evidence for unknown outages"):
        render_csv.parse(text.encode())
