"""Every panel on a populated database: 300 targets with a month of history written the way the
service writes it (dashboards/fleet_history.py), over each dashboard's own range and the last
30 days, as Grafana's read-only role. bench/dashboard_panels.py times the same at 1,000 targets."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy import Connection, Engine

from dashboards.fleet_history import PROVIDERS, FleetShape, fill
from dashboards.grafana_vars import (
    ALL,
    Selection,
    TimeRange,
    dashboard_start,
    expand,
    time_range,
)
from tests.dashboards.test_dashboards import FILES, GRAFANA_ROLE, load

NOW = datetime.now(UTC).replace(second=0, microsecond=0)
TARGETS = 300


@pytest.fixture(scope="module")
def fleet(postgresql_engine: Engine) -> Iterator[Connection]:
    """The fleet inside a transaction that is rolled back at the end."""
    connection = postgresql_engine.connect()
    outer = connection.begin()
    try:
        fill(connection, FleetShape(targets=TARGETS, now=NOW, minute_hours=6, raw_hours=6))
        # statistics for the planner, as autovacuum would gather them (this transaction's rows
        # count as live; the statistics roll back with them)
        connection.execute(sa.text("ANALYZE"))
        yield connection
    finally:
        outer.rollback()
        connection.close()


def as_grafana(connection: Connection, sql: str) -> tuple[list[str], list[Any]]:
    savepoint = connection.begin_nested()
    try:
        connection.execute(sa.text(f"SET LOCAL ROLE {GRAFANA_ROLE}"))
        result = connection.execute(sa.text(sql))
        return list(result.keys()), result.all()
    finally:
        savepoint.rollback()


def ranges(dashboard: dict[str, Any]) -> dict[str, TimeRange]:
    own = dashboard["time"]["from"]
    return {
        own: time_range(dashboard_start(own, NOW), NOW),
        "now-30d": time_range(NOW - timedelta(days=30), NOW),
    }


def run_all(
    connection: Connection, dashboard: dict[str, Any], window: TimeRange
) -> dict[str, tuple[list[str], list[Any]]]:
    chosen: dict[str, Selection] = {}
    for variable in dashboard["templating"]["list"]:
        _, rows = as_grafana(connection, expand(variable["query"], chosen, window))
        chosen[variable["name"]] = Selection(variable, [str(r[0]) for r in rows], [ALL])
    results = {}
    for panel in dashboard["panels"]:
        points = panel.get("maxDataPoints")
        panel_window = time_range(window.start, window.end, points) if points else window
        results[panel["title"]] = as_grafana(
            connection, expand(panel["targets"][0]["rawSql"], chosen, panel_window)
        )
    return results


@pytest.mark.postgres
@pytest.mark.parametrize("name", FILES)
def test_every_panel_runs_on_a_month_of_fleet_history(fleet: Connection, name: str) -> None:
    dashboard = load(name)
    for label, window in ranges(dashboard).items():
        for title, (columns, rows) in run_all(fleet, dashboard, window).items():
            if title != "slamon's own Celery tasks":  # the fill writes no task stats
                assert rows, (label, title)
            if columns[0] == "time" and len(columns) == 3:
                times = [row[0] for row in rows]
                assert times == sorted(times), (label, title)


@pytest.mark.postgres
def test_the_month_panels_count_every_provider_and_the_worst_targets(fleet: Connection) -> None:
    sla = run_all(fleet, load("sla-compliance.json"), ranges(load("sla-compliance.json"))["now/M"])
    _, per_provider = sla["Month-to-date uptime per provider"]
    assert sorted(row[0] for row in per_provider) == sorted(PROVIDERS)
    _, per_target = sla["Month-to-date uptime per target"]
    assert len(per_target) == TARGETS
    fleet_board = load("gpu-fleet.json")
    panels = run_all(fleet, fleet_board, ranges(fleet_board)["now-30d"])
    _, timeline = panels["Reachable: the 20 targets down longest in range"]
    assert len({row[1] for row in timeline}) == 20
    _, share = panels["Share of observed targets up: reachable and usable"]
    assert {row[1] for row in share} == {"reachable", "usable"}
    # the 30-minute monitor gap 11 days in: no target observed, so no point there (not "up")
    gap = FleetShape(TARGETS, NOW).start + timedelta(days=11)
    around = TimeRange(gap - timedelta(hours=1), gap + timedelta(hours=1, minutes=30))
    _, share = run_all(fleet, fleet_board, around)[
        "Share of observed targets up: reachable and usable"
    ]
    inside = [r for r in share if gap + timedelta(minutes=1) <= r[0] < gap + timedelta(minutes=29)]
    assert share
    assert not inside
