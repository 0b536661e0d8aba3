"""Tests for the JSON report renderer (monitor/reports/render/json.py)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from monitor.reports.model import MonthlyReport
from monitor.reports.render import json as render_json

AWKWARD = [0.1 + 0.2, 99.99999, 1 / 3, 5e-324, 1.7976931348623157e308, 2.0**53 + 2, -0.0, 1e16]


def doc(report: MonthlyReport) -> dict[str, Any]:
    result: dict[str, Any] = json.loads(render_json.render(report))
    return result


def test_the_report_round_trips_to_an_equal_report(report: MonthlyReport) -> None:
    assert render_json.parse(render_json.render(report)) == report


def test_the_document_holds_the_keys_design_md_promises(report: MonthlyReport) -> None:
    d = doc(report)
    assert {"month", "generated_at", "providers", "targets", "pools"} <= d.keys()
    assert {"policy", "policy_hash", "incidents", "notes"} <= d.keys()
    assert {"slug", "uptime_pct", "target_pct", "credit_pct", "incidents"} <= d["providers"][
        0
    ].keys()
    target_keys = {
        "name", "provider", "pool", "sla", "uptime_pct", "downtime_s", "sla_downtime_s",
        "unknown_s", "credit_pct", "gpu_hours_lost", "cost_lost", "outages",
    }  # fmt: skip
    assert target_keys <= d["targets"][0].keys()
    assert {"start", "end", "duration_s", "sla_counted_s", "cause"} <= d["targets"][0]["outages"][
        0
    ].keys()


def test_times_are_iso_utc_with_z_and_keep_their_fractions(report: MonthlyReport) -> None:
    d = doc(report)
    assert d["generated_at"] == "2025-07-01T00:05:12.345678Z"
    assert d["period_start"] == "2025-06-01T00:00:00Z"
    assert d["targets"][0]["outages"][1]["start"] == "2025-06-17T02:00:00.250000Z"


def test_a_target_without_data_has_null_uptime_never_100(report: MonthlyReport) -> None:
    nodata = next(t for t in doc(report)["targets"] if t["name"] == "lambda-h100-1")
    assert nodata["uptime_pct"] is None
    assert nodata["unknown_s"] == 2592000.0


def test_an_open_outage_has_a_null_end(report: MonthlyReport) -> None:
    trainer1 = next(t for t in doc(report)["targets"] if t["name"] == "trainer-1")
    assert trainer1["outages"] == [
        {
            "start": "2025-06-30T22:47:13Z",
            "end": None,
            "duration_s": 4367.0,
            "sla_counted_s": 4367.0,
            "cause": "gpu_hardware",
            "series": "usable",
            "excluded_by_maintenance_s": 0.0,
            "evidence": [],
            "excluded_by_events_s": 0.0,
        }
    ]


def test_awkward_floats_are_written_in_their_exact_shortest_form(report: MonthlyReport) -> None:
    text = render_json.render(report).decode()
    assert '"credit_amount": 0.30000000000000004' in text
    assert '"uptime_pct": 99.99999' in text
    assert '"gpu_hours_lost": 0.3333333333333333' in text


@pytest.mark.parametrize("value", AWKWARD, ids=repr)
def test_awkward_floats_round_trip_bit_for_bit(report: MonthlyReport, value: float) -> None:
    changed = replace(report, targets=(replace(report.targets[0], cost_lost=value),))
    back = render_json.parse(render_json.render(changed))
    assert repr(back.targets[0].cost_lost) == repr(value)


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])  # report is immutable
@given(value=st.floats(allow_nan=False, allow_infinity=False))
def test_any_finite_float_round_trips(report: MonthlyReport, value: float) -> None:
    changed = replace(report, providers=(replace(report.providers[0], spend=value),))
    back = render_json.parse(render_json.render(changed))
    assert repr(back.providers[0].spend) == repr(value)


def test_an_int_in_a_float_field_comes_back_as_that_float(report: MonthlyReport) -> None:
    d = doc(report)
    d["targets"][0]["hourly_price"] = 98
    back = render_json.parse(json.dumps(d).encode())
    assert isinstance(back.targets[0].hourly_price, float)
    assert back.targets[0].hourly_price == 98.0


def test_nan_is_refused_rather_than_written_as_invalid_json(report: MonthlyReport) -> None:
    bad = replace(report, targets=(replace(report.targets[0], cost_lost=float("nan")),))
    with pytest.raises(ValueError, match="JSON compliant"):
        render_json.render(bad)


def test_a_naive_time_is_refused(report: MonthlyReport) -> None:
    with pytest.raises(ValueError, match="naive datetime"):
        render_json.render(replace(report, generated_at=datetime(2025, 7, 1)))


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"not json", "not a JSON report"),
        (b"[]", "not a slamon monthly report"),
        (b'{"format": "slamon.monthly-report", "version": 99}', "unsupported report version"),
        (b'{"format": "slamon.monthly-report", "version": 1, "month": "2025-06"}', "missing"),
    ],
    ids=["garbage", "not-an-object", "future-version", "missing-fields"],
)
def test_parse_names_what_is_wrong(data: bytes, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        render_json.parse(data)


def test_a_wrongly_typed_field_is_refused(report: MonthlyReport) -> None:
    d = doc(report)
    d["targets"][0]["gpus"] = "eight"
    with pytest.raises(ValueError, match="expected int"):
        render_json.parse(json.dumps(d).encode())


def test_a_thousand_targets_round_trip(make_report: Callable[[int], MonthlyReport]) -> None:
    big = make_report(1000)
    assert render_json.parse(render_json.render(big)) == big


def test_the_provider_s_record_round_trips(recorded: MonthlyReport) -> None:
    assert render_json.parse(render_json.render(recorded)) == recorded


def test_outages_carry_their_evidence_and_targets_their_exclusions(
    recorded: MonthlyReport,
) -> None:
    d = doc(recorded)
    trainer0 = d["targets"][0]
    issue, restart = trainer0["outages"][0]["evidence"]
    assert set(issue) == {
        "event_id", "provider", "kind", "source", "title", "detail", "start", "end"
    }  # fmt: skip
    assert (issue["kind"], issue["source"], issue["start"]) == (
        "issue",
        "aws_health",
        "2025-06-03T13:55:00Z",
    )
    assert (restart["kind"], restart["end"]) == ("user_initiated", None)
    assert trainer0["outages"][0]["excluded_by_events_s"] == 600.0
    assert trainer0["outages"][1]["evidence"] == []
    assert trainer0["exclusions"] == [
        {
            "start": "2025-06-03T15:00:00Z",
            "end": "2025-06-03T15:10:00Z",
            "seconds": 600.0,
            "reason": "user_initiated",
            "event_id": "i-0abc:user-restart,=1",
            "provider_words": "=Reboot requested by the user",
        }
    ]
    assert d["providers"][0]["claim_event_ids"] == [issue["event_id"]]
    assert d["providers"][1]["claim_event_ids"] == []
