"""Tests for the shared display tables of the HTML and PDF reports (render_tables.py)."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

import pytest

from monitor.reports.model import MonthlyReport
from monitor.reports.render import tables as rt


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (99.99999, "99.999%"),
        (99.9995, "99.999%"),
        (99.99, "99.990%"),
        (100.0, "100.000%"),
        (0.1 + 0.2, "0.300%"),
        (0.0, "0.000%"),
        (None, "no data"),
    ],
    ids=["never-rounds-up-to-100", "truncates", "float-noise", "full", "tiny", "zero", "none"],
)
def test_uptime_percentages_are_truncated_never_rounded_up(value: float | None, shown: str) -> None:
    assert rt.pct(value) == shown


@pytest.mark.parametrize(
    ("seconds", "shown"),
    [
        (0.0, "0s"),
        (0.2592, "0.259s"),
        (42.5, "42.5s"),
        (59.9996, "1m 00s"),
        (213.75, "3m 34s"),
        (4073.0, "1h 07m 53s"),
        (2592000.0, "30d 00h 00m 00s"),
        (None, "—"),
    ],
    ids=["zero", "sub-second", "seconds", "rounds-to-minute", "minutes", "hours", "days", "none"],
)
def test_durations_read_as_days_hours_minutes_seconds(seconds: float | None, shown: str) -> None:
    assert rt.duration(seconds) == shown


@pytest.mark.parametrize(
    ("at", "shown"),
    [
        (datetime(2025, 6, 3, 14, 2, 7, tzinfo=UTC), "2025-06-03 14:02:07"),
        (datetime(2025, 6, 3, 14, 2, 7, 250000, tzinfo=UTC), "2025-06-03 14:02:07.25"),
        (datetime.fromisoformat("2025-06-03T16:02:07+02:00"), "2025-06-03 14:02:07"),
    ],
    ids=["whole-seconds", "fraction-kept", "converted-to-utc"],
)
def test_times_are_exact_utc(at: datetime, shown: str) -> None:
    assert rt.when(at) == shown


@pytest.mark.parametrize(
    ("url", "linked"),
    [
        ("https://status.example.com/incidents/1", True),
        ("http://status.example.com/incidents/1", True),
        ("javascript:alert(1)", False),
        ("data:text/html,<script>", False),
        (None, False),
    ],
    ids=["https", "http", "javascript", "data", "none"],
)
def test_only_http_urls_become_links(url: str | None, linked: bool) -> None:
    assert isinstance(rt.link("title", url), rt.Link) is linked


def test_the_scorecard_follows_the_engines_rank(report: MonthlyReport) -> None:
    table = rt.scorecard(report)
    assert [r[:2] for r in table.rows] == [("1", "Lambda"), ("2", "Amazon Web Services")]
    assert table.flags == ("", "bad")


def test_without_ranks_the_scorecard_orders_by_uptime_with_no_data_last(
    report: MonthlyReport,
) -> None:
    aws, lam = report.providers
    unranked = (
        replace(aws, rank=None),
        replace(lam, rank=None, uptime_pct=None),
        replace(aws, slug="gcp", name="Google Cloud", rank=None, uptime_pct=99.95),
    )
    rows = rt.scorecard(replace(report, providers=unranked)).rows
    assert [r[1] for r in rows] == ["Google Cloud", "Amazon Web Services", "Lambda"]


def test_money_columns_name_the_policys_currency(report: MonthlyReport) -> None:
    titles = [c.title for c in rt.targets(report).columns]
    assert "Money lost (USD)" in titles
    no_currency = replace(report, policy={})
    assert "Money lost" in [c.title for c in rt.targets(no_currency).columns]


def test_training_impact_sums_money_lost_per_provider(report: MonthlyReport) -> None:
    rows = {r[0]: r for r in rt.training_impact(report).rows}
    assert rows["Amazon Web Services"][4] == "2,171.18"  # 936.61 + 1,234.57
    assert rows["Lambda"][4] == "0.00"


def test_the_summary_counts_breaches_missing_data_and_open_outages(report: MonthlyReport) -> None:
    shown = dict(rt.summary(report))
    assert shown["Targets without data"] == "1"
    assert shown["Outages"] == "4 (1 open)"
    assert shown["Credit owed (USD)"] == "0.30"


def test_nested_policy_settings_flatten_to_dotted_keys(report: MonthlyReport) -> None:
    settings = {str(row[0]): str(row[1]) for row in rt.policy(report).rows}
    assert settings["policies.aws-ec2-instance.tiers"] == "[[99.5, 10], [99.0, 30], [95.0, 100]]"
    assert settings["currency"] == "USD"
    assert settings["maintenance_windows"] == "[]"


def test_every_table_has_one_cell_per_column(report: MonthlyReport) -> None:
    for table in rt.all_tables(report):
        assert all(len(row) == len(table.columns) for row in table.rows), table.key
        assert not table.flags or len(table.flags) == len(table.rows), table.key
