"""What each panel shows: its unit, one value per provider where it charts providers, SLA
thresholds that match the SLA targets, and a grid that neither overlaps nor overflows."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import Connection

from monitor.sla.policy import BUILTIN_POLICIES
from tests.dashboards.test_dashboards import FILES, load, panels, run_panel
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
    ("slamon-gpu-fleet", "Targets by state (quorum)"): None,
    ("slamon-gpu-fleet", "Current state per target"): None,
    ("slamon-gpu-fleet", "Up/down per target"): None,
    ("slamon-gpu-fleet", "Share of targets up per pool"): "percentunit",
    ("slamon-gpu-fleet", "Probe latency p95"): "ms",
    ("slamon-gpu-fleet", "Probe failure ratio per pool"): "percentunit",
    ("slamon-gpu-fleet", "GPU usable per target"): None,
    ("slamon-gpu-fleet", "Outages in range"): None,
    ("slamon-provider-health", "Open incidents"): None,
    ("slamon-provider-health", "Open incidents by provider"): None,
    ("slamon-provider-health", "Incidents started"): None,
    ("slamon-provider-health", "Incident timeline"): None,
    ("slamon-provider-health", "Time to acknowledge / resolve"): None,
    ("slamon-provider-health", "Time to resolve"): "m",
    ("slamon-provider-health", "Status-page lag (our first outage → provider's incident)"): None,
    ("slamon-provider-health", "Status feeds"): None,
    ("slamon-sla-compliance", "Month-to-date uptime per target"): None,
    ("slamon-sla-compliance", "Month-to-date uptime per provider"): "percent",
    ("slamon-sla-compliance", "Uptime vs target per provider and pool"): None,
    ("slamon-sla-compliance", "Error budget burned (month to date)"): "percent",
    ("slamon-sla-compliance", "Downtime per interval"): "m",
    ("slamon-sla-compliance", "Service credits owed"): None,
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
