"""What each panel shows: its unit, one value per provider where it charts providers, SLA
thresholds that match the SLA targets, and a grid that neither overlaps nor overflows."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy import Connection

from monitor.sla.terms import BUILTIN_POLICIES
from tests.dashboards.test_dashboards import FILES, TABLE_COLUMNS, load, panels, run_panel
from tests.dashboards.test_dashboards import seeded as seeded  # the fixture

# The unit every panel shows, by (dashboard uid, panel title); None where it shows counts or
# states (or is a table of mixed columns).
UNITS: dict[tuple[str, str], str | None] = {
    ("slamon-alerts", "Alerts firing and silenced"): None,
    ("slamon-alerts", "Firing alerts"): None,
    ("slamon-alerts", "Alerts started by severity"): None,
    ("slamon-alerts", "Deliveries by status over time"): None,
    ("slamon-alerts", "Deliveries by status in range"): None,
    ("slamon-alerts", "Delivery failures"): None,
    ("slamon-alerts", "slamon's own Celery tasks"): None,
    ("slamon-gpu-fleet", "Targets by state (quorum): reachable and usable"): None,
    ("slamon-gpu-fleet", "Current state per target"): None,
    ("slamon-gpu-fleet", "Reachable: the 20 targets down longest in range"): None,
    ("slamon-gpu-fleet", "GPU usable: the 20 targets unusable longest in range"): None,
    ("slamon-gpu-fleet", "Share of observed targets up: reachable and usable"): "percentunit",
    ("slamon-gpu-fleet", "Probe latency p95, worst target per provider"): "ms",
    ("slamon-gpu-fleet", "Probe failure ratio per provider"): "percentunit",
    ("slamon-gpu-fleet", "Outages in range"): None,
    ("slamon-provider-health", "Open incidents"): None,
    ("slamon-provider-health", "Open incidents by provider"): None,
    ("slamon-provider-health", "Incidents started"): None,
    ("slamon-provider-health", "Incident timeline"): None,
    ("slamon-provider-health", "Time to acknowledge / resolve"): None,
    ("slamon-provider-health", "Time to resolve"): "m",
    ("slamon-provider-health", "Status-page lag (our first outage → provider's incident)"): None,
    ("slamon-provider-health", "Status feeds"): None,
    ("slamon-provider-health", "Provider state now, as the status page shows it"): None,
    (
        "slamon-provider-health",
        "Fleet time in range per provider: up, down, unusable, unknown",
    ): None,
    ("slamon-sla-compliance", "Month-to-date uptime per target"): None,
    ("slamon-sla-compliance", "Month-to-date uptime per provider"): "percent",
    ("slamon-sla-compliance", "Uptime vs target per provider and pool"): None,
    ("slamon-sla-compliance", "Error budget burned (month to date)"): "percent",
    ("slamon-sla-compliance", "Downtime per interval"): "m",
    ("slamon-sla-compliance", "Service credits owed"): None,
    ("slamon-sla-compliance", "Price per unit of training work (month to date)"): None,
    ("slamon-sla-compliance", "Interruption ledger (month to date)"): None,
}
# Units that say what a quantity is: time, a share, or money; never the unitless "short".
QUANTITY_UNITS = {"percent", "percentunit", "ms", "s", "m", "h", "currencyUSD", "currencyEUR"}
UPTIME_WORDS = ("uptime", "availability", "share of targets up")
# Panels charting one value per provider: (dashboard uid, panel id).
PER_PROVIDER = [("slamon-sla-compliance", 2)]
SEEDED_PROVIDERS = 2  # lambda and runpod, in test_dashboards.seed
SLA_TARGETS = {policy.target_pct for policy in BUILTIN_POLICIES.values()}
DEFAULT_TARGET = 99.9  # what the SLA panels' SQL assumes for a target without a policy


def unit(panel: dict[str, Any]) -> str | None:
    return panel.get("fieldConfig", {}).get("defaults", {}).get("unit")  # type: ignore[no-any-return]


def find(uid: str, panel_id: int) -> tuple[dict[str, Any], dict[str, Any]]:
    ((dashboard, panel),) = [
        (d, p) for _, d, p in panels() if (d["uid"], p["id"]) == (uid, panel_id)
    ]
    return dashboard, panel


def test_every_panel_has_its_unit_listed_here() -> None:
    assert {(d["uid"], p["title"]): unit(p) for _, d, p in panels()} == UNITS


@pytest.mark.parametrize("key", [k for k, v in UNITS.items() if v is not None])
def test_a_panel_showing_a_quantity_has_a_unit_that_names_it(key: tuple[str, str]) -> None:
    assert UNITS[key] in QUANTITY_UNITS
    title = key[1].lower()
    if any(word in title for word in UPTIME_WORDS):
        assert UNITS[key] in {"percent", "percentunit"}, key
    if "latency" in title:
        assert UNITS[key] in {"ms", "s"}, key
    if "time to" in title or "downtime" in title:
        assert UNITS[key] in {"s", "m", "h"}, key


def test_every_graphed_percent_panel_is_percent() -> None:
    # Timeseries and bar gauges graph a single value: one that is a percentage says so.
    for _, d, p in panels():
        if p["type"] in {"timeseries", "bargauge"} and any(
            w in p["title"].lower() for w in ("uptime", "ratio", "share", "budget")
        ):
            assert unit(p) in {"percent", "percentunit"}, (d["uid"], p["title"])


@pytest.mark.parametrize(("uid", "panel_id"), PER_PROVIDER)
def test_a_per_provider_panel_shows_every_row(uid: str, panel_id: int) -> None:
    _, panel = find(uid, panel_id)
    assert panel["type"] in {"bargauge", "piechart"}
    assert panel["options"]["reduceOptions"]["values"] is True


def test_every_bargauge_and_piechart_shows_every_row() -> None:
    charts = [p for _, _, p in panels() if p["type"] in {"bargauge", "piechart"}]
    assert len(charts) == 2
    for panel in charts:
        assert panel["options"]["reduceOptions"]["values"] is True, panel["title"]


@pytest.mark.postgres
@pytest.mark.parametrize(("uid", "panel_id"), PER_PROVIDER)
def test_a_per_provider_panel_shows_one_value_per_seeded_provider(
    seeded: Connection, uid: str, panel_id: int
) -> None:
    dashboard, panel = find(uid, panel_id)
    ((_, rows),) = run_panel(seeded, dashboard, panel)
    assert len(rows) == SEEDED_PROVIDERS
    assert sorted(row[0] for row in rows) == ["lambda", "runpod"]
    assert all(0 <= row[-1] <= 100 for row in rows), rows


@pytest.mark.postgres
def test_the_delivery_piechart_shows_one_slice_per_seeded_status(seeded: Connection) -> None:
    dashboard, panel = find("slamon-alerts", 5)
    ((_, rows),) = run_panel(seeded, dashboard, panel)
    assert sorted(row[0] for row in rows) == ["delivered", "failed"]


def test_the_uptime_bargauge_thresholds_step_at_sla_targets() -> None:
    _, panel = find("slamon-sla-compliance", 2)
    steps = panel["fieldConfig"]["defaults"]["thresholds"]["steps"]
    assert panel["fieldConfig"]["defaults"]["thresholds"]["mode"] == "absolute"
    assert steps[0] == {"value": None, "color": "red"}
    values = [step["value"] for step in steps[1:]]
    assert values == sorted(values)
    assert set(values) <= SLA_TARGETS | {DEFAULT_TARGET}
    assert min(values) == min(SLA_TARGETS)  # red only below every built-in target
    assert steps[-1] == {"value": DEFAULT_TARGET, "color": "green"}


def test_the_default_target_in_the_sla_sql_is_a_builtin_target() -> None:
    assert DEFAULT_TARGET in SLA_TARGETS
    sql = " ".join(t["rawSql"] for t in find("slamon-sla-compliance", 2)[1]["targets"])
    assert f"::float, {DEFAULT_TARGET})" in sql


@pytest.mark.parametrize("name", FILES)
def test_panels_fit_the_grid_and_do_not_overlap(name: str) -> None:
    cells: dict[tuple[int, int], str] = {}
    for panel in load(name)["panels"]:
        grid = panel["gridPos"]
        assert min(grid["x"], grid["y"]) >= 0, panel["title"]
        assert min(grid["w"], grid["h"]) > 0, panel["title"]
        assert grid["x"] + grid["w"] <= 24, panel["title"]
        for x in range(grid["x"], grid["x"] + grid["w"]):
            for y in range(grid["y"], grid["y"] + grid["h"]):
                assert (x, y) not in cells, (panel["title"], cells.get((x, y)))
                cells[(x, y)] = panel["title"]


@pytest.mark.parametrize("name", FILES)
def test_every_row_of_the_grid_is_filled_edge_to_edge(name: str) -> None:
    # No gaps: each band of rows that panels start on spans the full 24 columns.
    by_y: dict[int, int] = {}
    for panel in load(name)["panels"]:
        grid = panel["gridPos"]
        by_y[grid["y"]] = by_y.get(grid["y"], 0) + grid["w"]
    assert set(by_y.values()) == {24}, by_y


# A table column's unit follows from its name: Grafana shows "42 min" and "99.95%", not 42.
COLUMN_UNITS = {
    "_minutes": "m", "_seconds": "s", "seconds_": "s", "_pct": "percent", "_ms": "ms",
    "_per_million": "currencyUSD",
}  # fmt: skip


def column_units(panel: dict[str, Any]) -> dict[str, str]:
    return {
        o["matcher"]["options"]: prop["value"]
        for o in panel.get("fieldConfig", {}).get("overrides", [])
        if o["matcher"]["id"] == "byName"
        for prop in o["properties"]
        if prop["id"] == "unit"
    }


def expected_unit(column: str) -> str | None:
    for part, unit_ in COLUMN_UNITS.items():
        if column.endswith(part) or column.startswith(part):
            return unit_
    return None


@pytest.mark.parametrize(
    ("uid", "panel_id"),
    [(uid, pid) for (uid, pid) in TABLE_COLUMNS if find(uid, pid)[1]["type"] == "table"],
)
def test_every_table_column_of_a_quantity_has_its_unit(uid: str, panel_id: int) -> None:
    _, panel = find(uid, panel_id)
    wanted = {c: u for c in TABLE_COLUMNS[(uid, panel_id)] if (u := expected_unit(c))}
    assert column_units(panel) == wanted


def timeline_by_metric(rows: list[Any]) -> dict[str, list[tuple[Any, float]]]:
    series: dict[str, list[tuple[Any, float]]] = {}
    for at, metric, value in rows:
        series.setdefault(metric, []).append((at, float(value)))
    return series


@pytest.mark.postgres
def test_the_reachable_timeline_shows_unobserved_time_as_unknown_and_outages_as_down(
    seeded: Connection,
) -> None:
    dashboard, panel = find("slamon-gpu-fleet", 3)
    ((_, rows),) = run_panel(seeded, dashboard, panel)
    series = timeline_by_metric(rows)
    assert set(series) == {"gpu-a", "gpu-b"}  # the targets down in range, worst first
    gpu_b = series["gpu-b"]
    assert gpu_b[-1][1] == 0  # its outage is still open
    assert {v for _, v in gpu_b} == {0, 0.5, 1}  # down, never observed (> 48 h ago), up
    first_observed = min(at for at, v in gpu_b if v != 0.5)
    assert all(v == 0.5 for at, v in gpu_b if at < first_observed)


@pytest.mark.postgres
def test_the_usable_timeline_lists_only_gpu_targets_unusable_in_range(seeded: Connection) -> None:
    dashboard, panel = find("slamon-gpu-fleet", 7)
    ((_, rows),) = run_panel(seeded, dashboard, panel)
    series = timeline_by_metric(rows)
    assert set(series) == {"gpu-a"}
    assert 0 in {v for _, v in series["gpu-a"]}


@pytest.mark.postgres
def test_the_fleet_share_counts_only_observed_targets_and_both_series(seeded: Connection) -> None:
    dashboard, panel = find("slamon-gpu-fleet", 4)
    ((_, rows),) = run_panel(seeded, dashboard, panel)
    series = timeline_by_metric(rows)
    assert set(series) == {"reachable", "usable"}
    assert all(0 <= v <= 1 for values in series.values() for _, v in values)
    # gpu-b's open outage: at most two of three targets reachable at the end
    assert series["reachable"][-1][1] == pytest.approx(2 / 3)
    # nothing observed more than 48 h ago: no point there (unknown is not up)
    assert min(at for at, _ in series["reachable"]) >= seeded_now(seeded) - timedelta(hours=49)


def seeded_now(connection: Connection) -> Any:
    return connection.execute(sa.text('SELECT max("end") FROM observed_windows')).scalar_one()


@pytest.mark.postgres
def test_the_provider_state_panel_judges_as_the_status_page_does(seeded: Connection) -> None:
    dashboard, panel = find("slamon-provider-health", 9)
    ((columns, rows),) = run_panel(seeded, dashboard, panel)
    by_provider = {row[0]: dict(zip(columns, row, strict=True)) for row in rows}
    # lambda: a fresh feed and an open incident; runpod: no feed at all, so unknown, not up
    assert by_provider["lambda"]["state"] == "incident"
    assert by_provider["lambda"]["feed_state"] == "fresh"
    assert (by_provider["runpod"]["state"], by_provider["runpod"]["feed_state"]) == (
        "unknown", "none",
    )  # fmt: skip


@pytest.mark.postgres
def test_the_fleet_time_panel_shows_unobserved_time_as_unknown(seeded: Connection) -> None:
    dashboard, panel = find("slamon-provider-health", 10)
    ((columns, rows),) = run_panel(seeded, dashboard, panel)
    by_provider = {row[0]: dict(zip(columns, row, strict=True)) for row in rows}
    runpod = by_provider["runpod"]  # gpu-c: created 24 h ago, observed for the last 2 h
    assert float(runpod["unknown_pct"]) == pytest.approx(100 * 22 / 24, abs=0.1)
    assert float(runpod["reachable_pct"]) == 100
    lambda_ = by_provider["lambda"]  # gpu-b down since 3 h, gpu-a 30 min down, 10 min unusable
    assert float(lambda_["down_minutes"]) > 0
    assert float(lambda_["reachable_pct"]) < 100
    assert float(lambda_["unusable_minutes"]) == pytest.approx(10, abs=0.1)
    assert float(lambda_["unknown_pct"]) == 0


@pytest.mark.postgres
def test_the_work_price_panel_counts_work_between_heartbeats_and_not_across_a_silence(
    seeded: Connection,
) -> None:
    """gpu-a's job: 1,000 tokens/s every minute for two hours, silent for ten minutes: 109
    one-minute intervals of work (the 11-minute gap is longer than its grace) = 6.54 M tokens,
    unless the month began less than two hours ago (then fewer, never more)."""
    dashboard, panel = find("slamon-sla-compliance", 7)
    ((columns, rows),) = run_panel(seeded, dashboard, panel)
    [row] = [dict(zip(columns, r, strict=True)) for r in rows]
    assert (row["provider"], row["instance_type"], row["unit"]) == ("lambda", "8xH100", "tokens")
    assert 0 < float(row["work_millions"]) <= 6.6
    if seeded_now(seeded).day > 1:
        assert float(row["work_millions"]) == 6.5
    assert float(row["effective_price_per_million"]) > float(row["list_price_per_million"]) > 0


@pytest.mark.postgres
def test_the_ledger_panel_counts_instance_hours_and_interruptions_as_the_report_does(
    seeded: Connection,
) -> None:
    """Four runpod A100 spot instances: one whole month so far, one preempted halfway, one
    born a tenth in and ended by the provider nine tenths in, one preempted last month (not in
    this one): (1 + 0.5 + 0.8) x the month so far, 2 interruptions."""
    from sqlalchemy.orm import Session

    from monitor.db import models as m
    from tests.dashboards.test_dashboards import TO

    month0 = TO.replace(day=1, hour=0, minute=0, second=0)
    so_far = TO - month0
    spot = {"kind": "tcp", "provider": "runpod", "instance_type": "A100", "capacity": "spot"}
    savepoint = seeded.begin_nested()
    session = Session(bind=seeded, join_transaction_mode="create_savepoint")
    try:
        session.add_all(
            [
                m.Target(name="spot-whole", created_at=month0 - timedelta(days=5), **spot),
                m.Target(name="spot-half", created_at=month0 - timedelta(days=5),
                         retired_at=month0 + so_far / 2, ended_by="preempted", **spot),
                m.Target(name="spot-host", created_at=month0 + so_far / 10,
                         retired_at=month0 + so_far * 9 / 10, ended_by="provider", **spot),
                m.Target(name="spot-gone", created_at=month0 - timedelta(days=9),
                         retired_at=month0 - timedelta(days=1), ended_by="preempted", **spot),
            ]
        )  # fmt: skip
        session.flush()
        dashboard, panel = find("slamon-sla-compliance", 8)
        ((columns, rows),) = run_panel(seeded, dashboard, panel)
    finally:
        session.close()
        savepoint.rollback()
    found = [dict(zip(columns, r, strict=True)) for r in rows]
    by_key = {(d["provider"], d["instance_type"], d["capacity"]): d for d in found}
    row = by_key[("runpod", "A100", "spot")]
    hours = 2.3 * so_far.total_seconds() / 3600
    assert row["instances"] == 3
    assert float(row["instance_hours"]) == pytest.approx(hours, abs=0.06)
    assert (row["preemptions"], row["provider_ends"]) == (1, 1)
    assert float(row["interruptions_per_1000h"]) == pytest.approx(2000 / hours, rel=1e-3)
    assert ("lambda", "8xH100", "unknown") in by_key  # a target with an instance type counts
