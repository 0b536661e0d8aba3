"""slamon's Grafana dashboards as code, built with Grafana's Foundation SDK.

``python -m dashboards.build`` writes ``dashboards/*.json`` from the builder functions below;
``python -m dashboards.build --check`` writes nothing and exits 1 naming every file that differs
from what the code generates (tests/dashboards/test_generated.py runs it). Edit this module, never
the JSON: docker-compose provisions the JSON read-only and ``slamon grafana push`` uploads it.

The helpers make the right thing the default: every variable is multi-value with "All" and the
custom allValue ``'__all__'`` the SQL tests for (without it, "All" over an empty option list is
``IN ()``, a syntax error); a bar gauge or pie chart of rows shows every row, not one value
reduced from them; a panel's query format follows from its kind. The SQL is kept exactly as
Grafana sends it; tests/dashboards/test_dashboards.py runs every query on PostgreSQL.
"""

from __future__ import annotations

import argparse
import json
import sys
import textwrap
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal

from grafana_foundation_sdk.builders import (
    bargauge,
    piechart,
    stat,
    statetimeline,
    table,
    timeseries,
)
from grafana_foundation_sdk.builders import common as common_builders
from grafana_foundation_sdk.builders import dashboard as builders
from grafana_foundation_sdk.cog import builder as cogbuilder
from grafana_foundation_sdk.cog import variants as cogvariants
from grafana_foundation_sdk.cog.encoder import JSONEncoder
from grafana_foundation_sdk.models import common
from grafana_foundation_sdk.models import dashboard as model

DIRECTORY = Path(__file__).resolve().parent
DATASOURCE = model.DataSourceRef(type_val="grafana-postgresql-datasource", uid="slamon-postgres")
# What a variable's "All" puts in the SQL, verbatim: `'__all__' IN ($provider)` is then true.
ALL_VALUE = "'__all__'"

Format = Literal["table", "time_series"]


def sql(text: str) -> str:
    """A query written indented in this module, as Grafana will send it."""
    return textwrap.dedent(text).strip()


# The SLA panels' shared start: the selected live fleet with its SLA target, and each
# target's reachable downtime this month up to the end of the time range.
# The selected fleet live this month with each target's SLA target (its own policy, else its
# provider's, else 99.9): what every SLA panel counts.
SLA_FLEET = """fleet AS (
  SELECT t.id, t.name, t.provider, t.pool,
    COALESCE((sp.definition->>'target_pct')::float, 99.9) AS target_pct
  FROM targets t LEFT JOIN sla_policies sp ON sp.name = COALESCE(t.sla_policy, (
    SELECT pr.sla_policy FROM providers pr WHERE pr.slug = t.provider))
  WHERE (t.retired_at IS NULL OR t.retired_at > date_trunc('month', $__timeTo()::timestamptz)) AND ('__all__' IN ($provider) OR t.provider IN ($provider)) AND ('__all__' IN ($region) OR COALESCE(t.region, 'none') IN ($region)) AND ('__all__' IN ($pool) OR COALESCE(t.pool, 'none') IN ($pool))
)"""

# The SLA panels' shared start: the fleet, and each target's reachable downtime this month up
# to the end of the time range.
MONTH_TO_DATE_DOWNTIME = f"""
WITH {SLA_FLEET}, down AS (
  SELECT f.id, COALESCE(sum(extract(epoch FROM
      LEAST(COALESCE(o."end", $__timeTo()::timestamptz), $__timeTo()::timestamptz)
      - GREATEST(o.start, date_trunc('month', $__timeTo()::timestamptz)))), 0) AS down_s
  FROM fleet f LEFT JOIN outages o ON o.target_id = f.id AND o.series = 'reachable'
    AND o.start < $__timeTo()::timestamptz
    AND COALESCE(o."end", $__timeTo()::timestamptz) > date_trunc('month', $__timeTo()::timestamptz)
  GROUP BY f.id
)
"""


# Each working target's month to date: the work its heartbeats report (each one's throughput
# times the time since the previous one, not across a silence longer than the target's grace,
# clipped to the month), its median throughput, and what it cost since it appeared.
WORK_MONTH_TO_DATE = """beats AS (
  SELECT h.target_id, h.at, h.throughput, COALESCE(h.payload->>'unit', 'samples') AS unit,
    lag(h.at) OVER (PARTITION BY h.target_id ORDER BY h.at) AS prev_at
  FROM heartbeats h
  WHERE h.throughput IS NOT NULL AND h.at <= $__timeTo()::timestamptz
    AND h.at > date_trunc('month', $__timeTo()::timestamptz) - interval '1 hour'
), work AS (
  SELECT b.target_id, min(b.unit) AS unit,
    sum(CASE WHEN extract(epoch FROM b.at - b.prev_at) <= COALESCE((t.settings->>'grace_s')::float, 2 * t.interval_s)
      THEN b.throughput * GREATEST(0, extract(epoch FROM b.at - GREATEST(b.prev_at, date_trunc('month', $__timeTo()::timestamptz))))
      ELSE 0 END) AS work,
    percentile_cont(0.5) WITHIN GROUP (ORDER BY b.throughput) AS nominal,
    GREATEST(0, extract(epoch FROM $__timeTo()::timestamptz - GREATEST(date_trunc('month', $__timeTo()::timestamptz), min(t.created_at)))) AS seconds,
    min(t.hourly_price) * GREATEST(0, extract(epoch FROM $__timeTo()::timestamptz - GREATEST(date_trunc('month', $__timeTo()::timestamptz), min(t.created_at)))) / 3600 AS spend
  FROM beats b JOIN targets t ON t.id = b.target_id
  WHERE b.prev_at IS NOT NULL AND b.at > date_trunc('month', $__timeTo()::timestamptz)
  GROUP BY b.target_id
)"""


def month_to_date(select: str) -> str:
    """A query over ``fleet`` and ``down`` (``MONTH_TO_DATE_DOWNTIME``)."""
    return MONTH_TO_DATE_DOWNTIME.strip() + "\n" + sql(select)


class SqlQuery(cogvariants.Dataquery):
    """A raw SQL target of the PostgreSQL datasource (the SDK has no model for it)."""

    def __init__(self, raw_sql: str, format_val: Format, ref_id: str = "A") -> None:
        self.raw_sql = raw_sql
        self.format_val = format_val
        self.ref_id = ref_id

    def to_json(self) -> dict[str, object]:
        return {
            "refId": self.ref_id,
            "datasource": DATASOURCE.to_json(),
            "editorMode": "code",
            "format": self.format_val,
            "rawQuery": True,
            "rawSql": self.raw_sql,
        }


class SqlTarget(cogbuilder.Builder[SqlQuery]):
    def __init__(self, raw_sql: str, format_val: Format) -> None:
        self._internal = SqlQuery(raw_sql, format_val)

    def build(self) -> SqlQuery:
        return self._internal


def variable(name: str, label: str, query: str) -> builders.QueryVariable:
    """A multi-value variable on the slamon datasource, "All" by default with ALL_VALUE."""
    return (
        builders.QueryVariable(name)
        .label(label)
        .datasource(DATASOURCE)
        .query(query)
        .refresh(model.VariableRefresh.ON_DASHBOARD_LOAD)
        .sort(model.VariableSort.ALPHABETICAL_ASC)
        .multi(True)
        .include_all(True)
        .all_value(ALL_VALUE)
        .current(model.VariableOption(selected=True, text=["All"], value=["$__all"]))
    )


def variables() -> list[builders.QueryVariable]:
    """Provider, region and pool: each narrows to the selections before it."""
    return [
        variable(
            "provider",
            "Provider",
            "SELECT DISTINCT provider AS __text FROM targets WHERE provider IS NOT NULL "
            "UNION SELECT slug FROM providers ORDER BY 1",
        ),
        variable(
            "region",
            "Region",
            "SELECT DISTINCT COALESCE(region, 'none') AS __text FROM targets "
            "WHERE ('__all__' IN ($provider) OR provider IN ($provider)) ORDER BY 1",
        ),
        variable(
            "pool",
            "Pool",
            "SELECT DISTINCT COALESCE(pool, 'none') AS __text FROM targets "
            "WHERE ('__all__' IN ($provider) OR provider IN ($provider)) "
            "AND ('__all__' IN ($region) OR COALESCE(region, 'none') IN ($region)) ORDER BY 1",
        ),
    ]


class Grid(model.GridPos):
    """Where a panel sits: x and y from the top left, w of 24 columns, h in rows."""

    def __init__(self, x: int, y: int, w: int, h: int) -> None:
        super().__init__(h=h, w=w, x=x, y=y)


Panel = Any  # the SDK's panel builders share no typed base with these methods


def place(
    panel: Panel,
    panel_id: int,
    title: str,
    grid: Grid,
    query: str,
    format_val: Format,
    description: str | None = None,
) -> cogbuilder.Builder[model.Panel]:
    panel = (
        panel.id(panel_id)
        .title(title)
        .datasource(DATASOURCE)
        .grid_pos(grid)
        .with_target(SqlTarget(query, format_val))
    )
    if description:
        panel = panel.description(description)
    return panel  # type: ignore[no-any-return]


def stat_panel(
    panel_id: int, title: str, grid: Grid, query: str
) -> cogbuilder.Builder[model.Panel]:
    return place(stat.Panel(), panel_id, title, grid, query, "table")


def table_panel(
    panel_id: int,
    title: str,
    grid: Grid,
    query: str,
    description: str | None = None,
    units: dict[str, str] | None = None,
) -> cogbuilder.Builder[model.Panel]:
    """A table; ``units`` maps a column to its Grafana unit (``percent``, ``s``, ``m``,
    ``currencyUSD``) so the cell reads ``99.95%`` or ``42 min``, not a bare number."""
    panel = table.Panel()
    for column, unit in (units or {}).items():
        panel = panel.override_by_name(
            column, [model.DynamicConfigValue(id_val="unit", value=unit)]
        )
    return place(panel, panel_id, title, grid, query, "table", description)


def timeseries_panel(
    panel_id: int,
    title: str,
    grid: Grid,
    query: str,
    unit: str | None = None,
    max_data_points: int | None = None,
) -> cogbuilder.Builder[model.Panel]:
    """A time series; ``max_data_points`` caps the points per series (and so widens
    ``$__interval``) where a finer one would cost more than it shows."""
    panel = timeseries.Panel()
    if unit:
        panel = panel.unit(unit)
    if max_data_points:
        panel = panel.max_data_points(max_data_points)
    return place(panel, panel_id, title, grid, query, "time_series")


def state_timeline(
    panel_id: int, title: str, grid: Grid, query: str
) -> cogbuilder.Builder[model.Panel]:
    """A state timeline of 1 (up, green), 0 (down, red) and 0.5 (unknown, grey: never shown as
    up) per series."""
    panel = (
        statetimeline.Panel()
        .mappings(
            [
                model.ValueMap(
                    options={
                        "0": model.ValueMappingResult(text="down", color="red"),
                        "0.5": model.ValueMappingResult(text="unknown", color="text"),
                        "1": model.ValueMappingResult(text="up", color="green"),
                    }
                )
            ]
        )
        .thresholds(
            builders.ThresholdsConfig()
            .mode(model.ThresholdsMode.ABSOLUTE)
            .steps(
                [
                    model.Threshold(value=None, color="red"),
                    model.Threshold(value=0.5, color="text"),
                    model.Threshold(value=1, color="green"),
                ]
            )
        )
    )
    return place(panel, panel_id, title, grid, query, "time_series")


def every_row() -> common_builders.ReduceDataOptions:
    # Grafana's default reduces each column to its last value: one bar or slice, not one per row.
    return common_builders.ReduceDataOptions().values(True).calcs([]).fields("")


def rows_bargauge(
    panel_id: int,
    title: str,
    grid: Grid,
    query: str,
    unit: str | None = None,
    steps: list[tuple[float | None, str]] | None = None,
) -> cogbuilder.Builder[model.Panel]:
    """A bar per row of the query's result, coloured by ``steps`` (value, colour) if given."""
    panel = bargauge.Panel().reduce_options(every_row())
    if unit:
        panel = panel.unit(unit)
    if steps:
        panel = panel.thresholds(
            builders.ThresholdsConfig()
            .mode(model.ThresholdsMode.ABSOLUTE)
            .steps([model.Threshold(value=value, color=color) for value, color in steps])
        )
    return place(panel, panel_id, title, grid, query, "table")


def rows_piechart(
    panel_id: int, title: str, grid: Grid, query: str
) -> cogbuilder.Builder[model.Panel]:
    """A slice per row of the query's result."""
    # The SDK's default legend is hidden; Grafana's (and this panel's) names each slice.
    legend = (
        piechart.PieChartLegendOptions()
        .show_legend(True)
        .display_mode(common.LegendDisplayMode.LIST)
        .placement(common.LegendPlacement.RIGHT)
        .values([])
    )
    panel = piechart.Panel().reduce_options(every_row()).legend(legend)
    return place(panel, panel_id, title, grid, query, "table")


def board(
    uid: str,
    title: str,
    tags: list[str],
    time_from: str,
    panels: Sequence[cogbuilder.Builder[model.Panel]],
) -> builders.Dashboard:
    """A read-only slamon dashboard in UTC with the provider/region/pool variables."""
    dashboard = (
        builders.Dashboard(title)
        .uid(uid)
        .tags(tags)
        .timezone("utc")
        .readonly()  # provisioned: saving from the UI would only invite lost edits
        .tooltip(model.DashboardCursorSync.CROSSHAIR)
        .time(time_from, "now")
        .refresh("1m")
        .version(1)
        .variables(list(variables()))
    )
    for panel in panels:
        dashboard = dashboard.with_panel(panel)
    return dashboard


def alerts() -> builders.Dashboard:
    """Alerts."""
    return board(
        "slamon-alerts",
        "slamon · Alerts",
        ["slamon", "alerts"],
        "now-7d",
        [
            stat_panel(
                1,
                "Alerts firing and silenced",
                Grid(0, 0, 6, 5),
                sql(
                    """
                        SELECT count(*) FILTER (WHERE NOT a.suppressed) AS firing,
                          count(*) FILTER (WHERE a.suppressed) AS silenced
                        FROM alerts a
                        WHERE a.state = 'firing' AND (a.labels->>'provider' IS NULL OR '__all__' IN ($provider) OR a.labels->>'provider' IN ($provider)) AND (a.labels->>'region' IS NULL OR '__all__' IN ($region) OR string_to_array(a.labels->>'region', ',') && ARRAY[$region]) AND (a.labels->>'pool' IS NULL OR '__all__' IN ($pool) OR a.labels->>'pool' IN ($pool))
                    """
                ),
            ),
            table_panel(
                2,
                "Firing alerts",
                Grid(6, 0, 18, 5),
                sql(
                    """
                        SELECT a.started_at AS "time", a.severity, a.rule, a.summary,
                          a.labels->>'provider' AS provider, a.labels->>'target' AS target,
                          a.last_notified_at, a.suppressed
                        FROM alerts a
                        WHERE a.state = 'firing' AND (a.labels->>'provider' IS NULL OR '__all__' IN ($provider) OR a.labels->>'provider' IN ($provider)) AND (a.labels->>'region' IS NULL OR '__all__' IN ($region) OR string_to_array(a.labels->>'region', ',') && ARRAY[$region]) AND (a.labels->>'pool' IS NULL OR '__all__' IN ($pool) OR a.labels->>'pool' IN ($pool))
                        ORDER BY a.started_at DESC
                    """
                ),
            ),
            timeseries_panel(
                3,
                "Alerts started by severity",
                Grid(0, 5, 12, 8),
                sql(
                    """
                        SELECT $__timeGroupAlias(a.started_at, $__interval), a.severity AS metric, count(*) AS alerts
                        FROM alerts a
                        WHERE $__timeFilter(a.started_at) AND (a.labels->>'provider' IS NULL OR '__all__' IN ($provider) OR a.labels->>'provider' IN ($provider)) AND (a.labels->>'region' IS NULL OR '__all__' IN ($region) OR string_to_array(a.labels->>'region', ',') && ARRAY[$region]) AND (a.labels->>'pool' IS NULL OR '__all__' IN ($pool) OR a.labels->>'pool' IN ($pool))
                        GROUP BY 1, 2 ORDER BY 1
                    """
                ),
            ),
            timeseries_panel(
                4,
                "Deliveries by status over time",
                Grid(12, 5, 12, 8),
                sql(
                    """
                        SELECT $__timeGroupAlias(d.created_at, $__interval), d.status AS metric, count(*) AS deliveries
                        FROM deliveries d JOIN alerts a ON a.id = d.alert_id
                        WHERE $__timeFilter(d.created_at) AND (a.labels->>'provider' IS NULL OR '__all__' IN ($provider) OR a.labels->>'provider' IN ($provider)) AND (a.labels->>'region' IS NULL OR '__all__' IN ($region) OR string_to_array(a.labels->>'region', ',') && ARRAY[$region]) AND (a.labels->>'pool' IS NULL OR '__all__' IN ($pool) OR a.labels->>'pool' IN ($pool))
                        GROUP BY 1, 2 ORDER BY 1
                    """
                ),
            ),
            rows_piechart(
                5,
                "Deliveries by status in range",
                Grid(0, 13, 8, 8),
                sql(
                    """
                        SELECT d.status AS metric, count(*) AS deliveries
                        FROM deliveries d JOIN alerts a ON a.id = d.alert_id
                        WHERE $__timeFilter(d.created_at) AND (a.labels->>'provider' IS NULL OR '__all__' IN ($provider) OR a.labels->>'provider' IN ($provider)) AND (a.labels->>'region' IS NULL OR '__all__' IN ($region) OR string_to_array(a.labels->>'region', ',') && ARRAY[$region]) AND (a.labels->>'pool' IS NULL OR '__all__' IN ($pool) OR a.labels->>'pool' IN ($pool))
                        GROUP BY d.status ORDER BY d.status
                    """
                ),
            ),
            table_panel(
                6,
                "Delivery failures",
                Grid(8, 13, 16, 8),
                sql(
                    """
                        SELECT d.created_at AS "time", c.name AS channel, c.kind, d.event, d.status, d.attempts,
                          d.last_status_code, d.last_error, a.rule, a.summary
                        FROM deliveries d JOIN channels c ON c.id = d.channel_id JOIN alerts a ON a.id = d.alert_id
                        WHERE $__timeFilter(d.created_at) AND (d.status IN ('failed', 'expired') OR d.last_error IS NOT NULL)
                          AND (a.labels->>'provider' IS NULL OR '__all__' IN ($provider) OR a.labels->>'provider' IN ($provider)) AND (a.labels->>'region' IS NULL OR '__all__' IN ($region) OR string_to_array(a.labels->>'region', ',') && ARRAY[$region]) AND (a.labels->>'pool' IS NULL OR '__all__' IN ($pool) OR a.labels->>'pool' IN ($pool))
                        ORDER BY d.created_at DESC
                    """
                ),
            ),
            table_panel(
                7,
                "slamon's own Celery tasks",
                Grid(0, 21, 24, 8),
                sql(
                    """
                        SELECT task, runs, failures,
                          round((seconds_total / NULLIF(runs, 0))::numeric, 3) AS mean_seconds,
                          round(last_seconds::numeric, 3) AS last_seconds, last_finished_at,
                          round(EXTRACT(EPOCH FROM (now() - last_finished_at))::numeric, 0) AS seconds_since_last
                        FROM task_stats
                        ORDER BY seconds_total DESC
                    """
                ),
                description="Runs, failures and durations of each periodic task since the workers started recording (task_stats). A growing mean or a stale last run means the workers are falling behind.",
                units={"mean_seconds": "s", "last_seconds": "s", "seconds_since_last": "s"},
            ),
        ],
    )


# The selected live fleet: every GPU fleet panel narrows by the three variables the same way.
SELECTED_TARGETS = """t.retired_at IS NULL AND ('__all__' IN ($provider) OR t.provider IN ($provider)) AND ('__all__' IN ($region) OR COALESCE(t.region, 'none') IN ($region)) AND ('__all__' IN ($pool) OR COALESCE(t.pool, 'none') IN ($pool))"""

# Buckets of the panel's interval over the time range, aligned as $__timeGroup aligns them.
BUCKETS = """b AS (
  SELECT generate_series(date_bin($__interval_ms * interval '1 millisecond', $__timeFrom()::timestamptz, TIMESTAMPTZ '2000-01-01 00:00:00+00'),
    $__timeTo()::timestamptz, $__interval_ms * interval '1 millisecond') AS at
)"""

# Rollups of the resolution the range needs: minutes up to 6 hours (20 M rows at 1,000 targets
# over the 14 days they are kept), beyond that closed hours plus the open hour's minutes (an
# hour's rollup appears once the hour is over). Written so the (resolution, bucket_start) index
# serves both arms.
MINUTES_SUFFICE = """$__timeTo()::timestamptz - $__timeFrom()::timestamptz <= interval '6 hours' AND $__interval_ms < 3600000"""
ROLLUP_RESOLUTION = f"""((r.resolution = 'minute' AND ({MINUTES_SUFFICE} OR r.bucket_start >= date_trunc('hour', now()))) OR (r.resolution = 'hour' AND NOT ({MINUTES_SUFFICE})))"""


# A feed's health in one word, as the status page judges it (monitor/status/health.py), at the
# default feed_stale_after of 30 minutes.
FEED_STATE = """CASE WHEN f.id IS NULL THEN NULL WHEN NOT f.enabled THEN 'disabled' WHEN f.last_polled_at IS NULL THEN 'never-polled' WHEN f.last_success_at IS NULL THEN 'never-answered' WHEN now() - f.last_success_at <= interval '30 minutes' THEN 'fresh' WHEN f.consecutive_failures > 0 THEN 'unreachable' ELSE 'stale' END"""


def worst_targets_timeline(series: str) -> str:
    """The 20 selected targets down longest in the range on ``series``, each bucket's worst
    state: down (0) where an outage overlaps it, unknown (0.5) where no observed window does,
    else up (1). Intervals, not samples: what the monthly report counts."""
    only_gpu = (
        " AND EXISTS (SELECT 1 FROM target_states s WHERE s.target_id = t.id AND s.series = 'usable')"
        if series == "usable"
        else ""
    )
    return sql(
        f"""
            WITH worst AS (
              SELECT t.id, t.name, sum(extract(epoch FROM LEAST(COALESCE(o."end", now()), $__timeTo()::timestamptz) - GREATEST(o.start, $__timeFrom()::timestamptz))) AS down_s
              FROM outages o JOIN targets t ON t.id = o.target_id
              WHERE o.series = '{series}' AND o.start < $__timeTo()::timestamptz AND COALESCE(o."end", now()) > $__timeFrom()::timestamptz AND {SELECTED_TARGETS}{only_gpu}
              GROUP BY t.id, t.name ORDER BY down_s DESC, t.name LIMIT 20
            ), {BUCKETS}
            SELECT b.at AS "time", w.name AS metric,
              CASE WHEN EXISTS (SELECT 1 FROM outages o WHERE o.target_id = w.id AND o.series = '{series}'
                  AND o.start < b.at + $__interval_ms * interval '1 millisecond' AND COALESCE(o."end", now()) > b.at) THEN 0
                WHEN EXISTS (SELECT 1 FROM observed_windows ow WHERE ow.target_id = w.id
                  AND ow.start < b.at + $__interval_ms * interval '1 millisecond' AND ow."end" > b.at) THEN 1
                ELSE 0.5 END AS {series}
            FROM worst w CROSS JOIN b
            ORDER BY 1, 2
        """
    )


def gpu_fleet() -> builders.Dashboard:
    """GPU fleet."""
    return board(
        "slamon-gpu-fleet",
        "slamon · GPU fleet",
        ["slamon", "fleet"],
        "now-24h",
        [
            stat_panel(
                1,
                "Targets by state (quorum): reachable and usable",
                Grid(0, 0, 8, 5),
                sql(
                    f"""
                        SELECT count(*) FILTER (WHERE s.series = 'reachable' AND s.state = 'up') AS reachable_up,
                          count(*) FILTER (WHERE s.series = 'reachable' AND s.state = 'down') AS reachable_down,
                          count(*) FILTER (WHERE s.series = 'reachable' AND s.state NOT IN ('up', 'down')) AS reachable_unknown,
                          count(*) FILTER (WHERE s.series = 'usable' AND s.state = 'up') AS usable_up,
                          count(*) FILTER (WHERE s.series = 'usable' AND s.state = 'down') AS usable_down,
                          count(*) FILTER (WHERE s.series = 'usable' AND s.state NOT IN ('up', 'down')) AS usable_unknown
                        FROM targets t JOIN target_states s ON s.target_id = t.id AND s.vantage = '*'
                        WHERE {SELECTED_TARGETS}
                    """
                ),
            ),
            table_panel(
                2,
                "Current state per target",
                Grid(8, 0, 16, 5),
                sql(
                    f"""
                        SELECT t.name AS target, t.provider, t.region, t.pool, t.instance_type, t.gpus,
                          max(s.state) FILTER (WHERE s.series = 'reachable') AS reachable,
                          max(s.state) FILTER (WHERE s.series = 'usable') AS usable,
                          max(s.since) FILTER (WHERE s.series = 'reachable') AS since
                        FROM targets t JOIN target_states s ON s.target_id = t.id AND s.vantage = '*'
                        WHERE {SELECTED_TARGETS}
                        GROUP BY t.id, t.name, t.provider, t.region, t.pool, t.instance_type, t.gpus
                        ORDER BY t.name
                    """
                ),
            ),
            state_timeline(
                3,
                "Reachable: the 20 targets down longest in range",
                Grid(0, 5, 12, 8),
                worst_targets_timeline("reachable"),
            ),
            state_timeline(
                7,
                "GPU usable: the 20 targets unusable longest in range",
                Grid(12, 5, 12, 8),
                worst_targets_timeline("usable"),
            ),
            timeseries_panel(
                4,
                "Share of observed targets up: reachable and usable",
                Grid(0, 13, 12, 8),
                sql(
                    f"""
                        WITH fleet AS (
                          SELECT t.id, EXISTS (SELECT 1 FROM target_states s WHERE s.target_id = t.id AND s.series = 'usable') AS gpu
                          FROM targets t WHERE {SELECTED_TARGETS}
                        ), {BUCKETS}, seen AS (
                          SELECT b.at, count(DISTINCT ow.target_id) AS reachable, count(DISTINCT ow.target_id) FILTER (WHERE f.gpu) AS usable
                          FROM b JOIN observed_windows ow ON ow.start < b.at + $__interval_ms * interval '1 millisecond' AND ow."end" > b.at
                          JOIN fleet f ON f.id = ow.target_id
                          GROUP BY b.at
                        ), down AS (
                          SELECT b.at, count(DISTINCT o.target_id) FILTER (WHERE o.series = 'reachable') AS reachable,
                            count(DISTINCT o.target_id) FILTER (WHERE o.series = 'usable') AS usable
                          FROM b JOIN outages o ON o.start < b.at + $__interval_ms * interval '1 millisecond' AND COALESCE(o."end", now()) > b.at
                          JOIN fleet f ON f.id = o.target_id
                          GROUP BY b.at
                        )
                        SELECT s.at AS "time", v.series AS metric,
                          GREATEST(0, 1 - COALESCE(CASE v.series WHEN 'reachable' THEN d.reachable ELSE d.usable END, 0)::float
                            / NULLIF(CASE v.series WHEN 'reachable' THEN s.reachable ELSE s.usable END, 0)) AS up_ratio
                        FROM seen s LEFT JOIN down d ON d.at = s.at CROSS JOIN (VALUES ('reachable'), ('usable')) AS v(series)
                        WHERE v.series = 'reachable' OR s.usable > 0
                        ORDER BY 1, 2
                    """
                ),
                unit="percentunit",
                max_data_points=300,
            ),
            timeseries_panel(
                5,
                "Probe latency p95, worst target per provider",
                Grid(12, 13, 12, 8),
                sql(
                    f"""
                        SELECT $__timeGroupAlias(r.bucket_start, $__interval), t.provider AS metric,
                          max(r.latency_p95_ms) AS p95_ms
                        FROM probe_rollups r JOIN targets t ON t.id = r.target_id
                        WHERE $__timeFilter(r.bucket_start) AND {ROLLUP_RESOLUTION} AND r.latency_p95_ms IS NOT NULL AND {SELECTED_TARGETS}
                        GROUP BY 1, 2 ORDER BY 1
                    """
                ),
                unit="ms",
                max_data_points=300,
            ),
            timeseries_panel(
                6,
                "Probe failure ratio per provider",
                Grid(0, 21, 24, 8),
                sql(
                    f"""
                        SELECT $__timeGroupAlias(r.bucket_start, $__interval), t.provider AS metric,
                          sum(r.failures)::float / NULLIF(sum(r.count - r.unknown), 0) AS failure_ratio
                        FROM probe_rollups r JOIN targets t ON t.id = r.target_id
                        WHERE $__timeFilter(r.bucket_start) AND {ROLLUP_RESOLUTION} AND {SELECTED_TARGETS}
                        GROUP BY 1, 2 ORDER BY 1
                    """
                ),
                unit="percentunit",
                max_data_points=300,
            ),
            table_panel(
                8,
                "Outages in range",
                Grid(0, 29, 24, 8),
                sql(
                    """
                        SELECT o.start AS "time", t.name AS target, t.provider, t.pool, o.series, o.cause, o."end",
                          round((extract(epoch FROM COALESCE(o."end", now()) - o.start) / 60)::numeric, 1) AS duration_minutes
                        FROM outages o JOIN targets t ON t.id = o.target_id
                        WHERE o.start <= $__timeTo()::timestamptz AND COALESCE(o."end", now()) >= $__timeFrom()::timestamptz AND ('__all__' IN ($provider) OR t.provider IN ($provider)) AND ('__all__' IN ($region) OR COALESCE(t.region, 'none') IN ($region)) AND ('__all__' IN ($pool) OR COALESCE(t.pool, 'none') IN ($pool))
                        ORDER BY o.start DESC
                    """
                ),
                units={"duration_minutes": "m"},
            ),
        ],
    )


def provider_health() -> builders.Dashboard:
    """Provider health."""
    return board(
        "slamon-provider-health",
        "slamon · Provider health",
        ["slamon", "providers"],
        "now-7d",
        [
            stat_panel(
                1,
                "Open incidents",
                Grid(0, 0, 6, 5),
                sql(
                    """
                        SELECT count(*) AS open_incidents
                        FROM incidents i JOIN providers p ON p.id = i.provider_id
                        WHERE i.resolved_at IS NULL AND i.status <> 'resolved' AND NOT i.is_maintenance AND ('__all__' IN ($provider) OR p.slug IN ($provider)) AND ('__all__' IN ($region) OR i.regions::jsonb IN ('[]'::jsonb, 'null'::jsonb) OR i.regions::jsonb ?| ARRAY[$region])
                    """
                ),
            ),
            table_panel(
                2,
                "Open incidents by provider",
                Grid(6, 0, 18, 5),
                sql(
                    """
                        SELECT p.slug AS provider, i.title, i.impact, i.status, i.started_at,
                          round((extract(epoch FROM now() - i.started_at) / 60)::numeric, 1) AS open_minutes, i.url
                        FROM incidents i JOIN providers p ON p.id = i.provider_id
                        WHERE i.resolved_at IS NULL AND i.status <> 'resolved' AND NOT i.is_maintenance AND ('__all__' IN ($provider) OR p.slug IN ($provider)) AND ('__all__' IN ($region) OR i.regions::jsonb IN ('[]'::jsonb, 'null'::jsonb) OR i.regions::jsonb ?| ARRAY[$region])
                        ORDER BY i.started_at DESC
                    """
                ),
                units={"open_minutes": "m"},
            ),
            timeseries_panel(
                3,
                "Incidents started",
                Grid(0, 5, 12, 8),
                sql(
                    """
                        SELECT $__timeGroupAlias(i.started_at, $__interval), p.slug AS metric, count(*) AS incidents
                        FROM incidents i JOIN providers p ON p.id = i.provider_id
                        WHERE $__timeFilter(i.started_at) AND ('__all__' IN ($provider) OR p.slug IN ($provider)) AND ('__all__' IN ($region) OR i.regions::jsonb IN ('[]'::jsonb, 'null'::jsonb) OR i.regions::jsonb ?| ARRAY[$region])
                        GROUP BY 1, 2 ORDER BY 1
                    """
                ),
            ),
            table_panel(
                4,
                "Incident timeline",
                Grid(12, 5, 12, 8),
                sql(
                    """
                        SELECT i.started_at AS "time", p.slug AS provider, i.title, i.impact, i.status,
                          i.acknowledged_at, i.resolved_at,
                          round((extract(epoch FROM COALESCE(i.resolved_at, now()) - i.started_at) / 60)::numeric, 1) AS duration_minutes,
                          i.is_maintenance AS maintenance
                        FROM incidents i JOIN providers p ON p.id = i.provider_id
                        WHERE $__timeFilter(i.started_at) AND ('__all__' IN ($provider) OR p.slug IN ($provider)) AND ('__all__' IN ($region) OR i.regions::jsonb IN ('[]'::jsonb, 'null'::jsonb) OR i.regions::jsonb ?| ARRAY[$region])
                        ORDER BY i.started_at DESC
                    """
                ),
                units={"duration_minutes": "m"},
            ),
            table_panel(
                5,
                "Time to acknowledge / resolve",
                Grid(0, 13, 12, 8),
                sql(
                    """
                        SELECT p.slug AS provider, count(*) AS incidents,
                          round((avg(extract(epoch FROM COALESCE(i.acknowledged_at, i.identified_at) - i.started_at)) / 60)::numeric, 1) AS tta_minutes,
                          round((avg(extract(epoch FROM i.resolved_at - i.started_at)) / 60)::numeric, 1) AS ttr_minutes,
                          round((max(extract(epoch FROM i.resolved_at - i.started_at)) / 60)::numeric, 1) AS ttr_max_minutes
                        FROM incidents i JOIN providers p ON p.id = i.provider_id
                        WHERE $__timeFilter(i.started_at) AND NOT i.is_maintenance AND ('__all__' IN ($provider) OR p.slug IN ($provider)) AND ('__all__' IN ($region) OR i.regions::jsonb IN ('[]'::jsonb, 'null'::jsonb) OR i.regions::jsonb ?| ARRAY[$region])
                        GROUP BY p.slug ORDER BY p.slug
                    """
                ),
                units={"tta_minutes": "m", "ttr_minutes": "m", "ttr_max_minutes": "m"},
            ),
            timeseries_panel(
                6,
                "Time to resolve",
                Grid(12, 13, 12, 8),
                sql(
                    """
                        SELECT $__timeGroupAlias(i.started_at, $__interval), p.slug AS metric,
                          avg(extract(epoch FROM i.resolved_at - i.started_at)) / 60 AS ttr_minutes
                        FROM incidents i JOIN providers p ON p.id = i.provider_id
                        WHERE $__timeFilter(i.started_at) AND i.resolved_at IS NOT NULL AND NOT i.is_maintenance AND ('__all__' IN ($provider) OR p.slug IN ($provider)) AND ('__all__' IN ($region) OR i.regions::jsonb IN ('[]'::jsonb, 'null'::jsonb) OR i.regions::jsonb ?| ARRAY[$region])
                        GROUP BY 1, 2 ORDER BY 1
                    """
                ),
                unit="m",
            ),
            table_panel(
                7,
                "Status-page lag (our first outage → provider's incident)",
                Grid(0, 21, 12, 8),
                sql(
                    """
                        SELECT i.started_at AS "time", p.slug AS provider, i.title,
                          round((extract(epoch FROM i.started_at - o.first_outage) / 60)::numeric, 1) AS lag_minutes,
                          round((extract(epoch FROM i.first_seen_at - i.started_at) / 60)::numeric, 1) AS seen_after_minutes
                        FROM incidents i JOIN providers p ON p.id = i.provider_id
                        CROSS JOIN LATERAL (
                          SELECT min(o.start) AS first_outage
                          FROM outages o JOIN targets t ON t.id = o.target_id
                          WHERE t.provider = p.slug AND ('__all__' IN ($region) OR COALESCE(t.region, 'none') IN ($region)) AND ('__all__' IN ($pool) OR COALESCE(t.pool, 'none') IN ($pool))
                            AND o.start BETWEEN i.started_at - interval '6 hours' AND i.started_at + interval '1 hour'
                        ) o
                        WHERE $__timeFilter(i.started_at) AND o.first_outage IS NOT NULL AND ('__all__' IN ($provider) OR p.slug IN ($provider)) AND ('__all__' IN ($region) OR i.regions::jsonb IN ('[]'::jsonb, 'null'::jsonb) OR i.regions::jsonb ?| ARRAY[$region])
                        ORDER BY i.started_at DESC
                    """
                ),
                units={"lag_minutes": "m", "seen_after_minutes": "m"},
            ),
            table_panel(
                8,
                "Status feeds",
                Grid(12, 21, 12, 8),
                sql(
                    f"""
                        SELECT p.slug AS provider, f.kind, {FEED_STATE} AS feed_state, f.url, f.last_success_at,
                          round(extract(epoch FROM now() - f.last_success_at)::numeric) AS seconds_since_success,
                          f.consecutive_failures, f.last_error
                        FROM feeds f JOIN providers p ON p.id = f.provider_id
                        WHERE ('__all__' IN ($provider) OR p.slug IN ($provider))
                        ORDER BY p.slug, f.kind
                    """
                ),
                units={"seconds_since_success": "s"},
            ),
            table_panel(
                9,
                "Provider state now, as the status page shows it",
                Grid(0, 29, 12, 8),
                sql(
                    f"""
                        SELECT p.slug AS provider,
                          CASE WHEN i.incidents > 0 THEN 'incident' WHEN i.maintenance > 0 THEN 'maintenance'
                            WHEN {FEED_STATE} = 'fresh' THEN 'operational' ELSE 'unknown' END AS state,
                          COALESCE({FEED_STATE}, 'none') AS feed_state, f.last_success_at,
                          i.incidents AS open_incidents, i.maintenance AS open_maintenance
                        FROM providers p
                        LEFT JOIN LATERAL (
                          SELECT * FROM feeds f WHERE f.provider_id = p.id
                          ORDER BY f.enabled DESC, f.last_success_at DESC NULLS LAST, f.last_polled_at DESC NULLS LAST LIMIT 1
                        ) f ON true
                        CROSS JOIN LATERAL (
                          SELECT count(*) FILTER (WHERE NOT i.is_maintenance) AS incidents,
                            count(*) FILTER (WHERE i.is_maintenance) AS maintenance
                          FROM incidents i
                          WHERE i.provider_id = p.id AND i.resolved_at IS NULL AND i.status <> 'resolved' AND i.relevant
                        ) i
                        WHERE ('__all__' IN ($provider) OR p.slug IN ($provider))
                          AND (EXISTS (SELECT 1 FROM feeds x WHERE x.provider_id = p.id) OR EXISTS (SELECT 1 FROM targets t WHERE t.provider = p.slug))
                        ORDER BY p.slug
                    """
                ),
            ),
            table_panel(
                10,
                "Fleet time in range per provider: up, down, unusable, unknown",
                Grid(12, 29, 12, 8),
                sql(
                    """
                        WITH fleet AS (
                          SELECT t.id, t.provider,
                            GREATEST($__timeFrom()::timestamptz, LEAST(t.created_at, (SELECT min(w.start) FROM observed_windows w WHERE w.target_id = t.id))) AS lo,
                            LEAST($__timeTo()::timestamptz, now(), COALESCE(t.retired_at, 'infinity')) AS hi,
                            EXISTS (SELECT 1 FROM target_states s WHERE s.target_id = t.id AND s.series = 'usable') AS gpu
                          FROM targets t
                          WHERE t.provider IS NOT NULL AND (t.retired_at IS NULL OR t.retired_at > $__timeFrom()::timestamptz)
                            AND ('__all__' IN ($provider) OR t.provider IN ($provider)) AND ('__all__' IN ($region) OR COALESCE(t.region, 'none') IN ($region)) AND ('__all__' IN ($pool) OR COALESCE(t.pool, 'none') IN ($pool))
                        ), per_target AS (
                          SELECT f.provider, f.gpu, GREATEST(extract(epoch FROM f.hi - f.lo), 0) AS span_s,
                            (SELECT COALESCE(sum(extract(epoch FROM LEAST(w."end", f.hi) - GREATEST(w.start, f.lo))), 0)
                             FROM observed_windows w WHERE w.target_id = f.id AND w.start < f.hi AND w."end" > f.lo) AS observed_s,
                            (SELECT COALESCE(sum(extract(epoch FROM LEAST(COALESCE(o."end", now()), f.hi) - GREATEST(o.start, f.lo))), 0)
                             FROM outages o WHERE o.target_id = f.id AND o.series = 'reachable' AND o.start < f.hi AND COALESCE(o."end", now()) > f.lo) AS down_s,
                            (SELECT COALESCE(sum(extract(epoch FROM LEAST(COALESCE(o."end", now()), f.hi) - GREATEST(o.start, f.lo))), 0)
                             FROM outages o WHERE o.target_id = f.id AND o.series = 'usable' AND o.start < f.hi AND COALESCE(o."end", now()) > f.lo) AS unusable_s
                          FROM fleet f WHERE f.hi > f.lo
                        )
                        SELECT provider, count(*) AS targets,
                          round((100 * (sum(observed_s) - sum(down_s)) / NULLIF(sum(observed_s), 0))::numeric, 3) AS reachable_pct,
                          round((100 * (sum(observed_s) FILTER (WHERE gpu) - sum(unusable_s) FILTER (WHERE gpu)) / NULLIF(sum(observed_s) FILTER (WHERE gpu), 0))::numeric, 3) AS usable_pct,
                          round((100 * (sum(span_s) - sum(observed_s)) / NULLIF(sum(span_s), 0))::numeric, 3) AS unknown_pct,
                          round((sum(down_s) / 60)::numeric, 1) AS down_minutes,
                          round((sum(unusable_s) / 60)::numeric, 1) AS unusable_minutes,
                          round((GREATEST(sum(span_s) - sum(observed_s), 0) / 60)::numeric, 1) AS unknown_minutes
                        FROM per_target GROUP BY provider ORDER BY provider
                    """
                ),
                units={
                    "reachable_pct": "percent",
                    "usable_pct": "percent",
                    "unknown_pct": "percent",
                    "down_minutes": "m",
                    "unusable_minutes": "m",
                    "unknown_minutes": "m",
                },
                description="Up and usable shares are of the time slamon observed; unknown is the time it did not (no probe recorded), never counted as up. The monthly report computes the same from the same intervals.",
            ),
        ],
    )


def sla_compliance() -> builders.Dashboard:
    """SLA compliance."""
    return board(
        "slamon-sla-compliance",
        "slamon · SLA compliance",
        ["slamon", "sla"],
        "now/M",
        [
            table_panel(
                1,
                "Month-to-date uptime per target",
                Grid(0, 0, 24, 9),
                month_to_date(
                    """
                        SELECT f.name AS target, f.provider, f.pool,
                          round((100 * (1 - d.down_s / NULLIF(extract(epoch FROM $__timeTo()::timestamptz - date_trunc('month', $__timeTo()::timestamptz)), 0)))::numeric, 4) AS uptime_pct,
                          f.target_pct,
                          round((d.down_s / 60)::numeric, 1) AS downtime_minutes,
                          round((100 * d.down_s / NULLIF((1 - f.target_pct / 100) * extract(epoch FROM (date_trunc('month', $__timeTo()::timestamptz) + interval '1 month') - date_trunc('month', $__timeTo()::timestamptz)), 0))::numeric, 1) AS budget_used_pct,
                          (100 * (1 - d.down_s / NULLIF(extract(epoch FROM $__timeTo()::timestamptz - date_trunc('month', $__timeTo()::timestamptz)), 0))) >= f.target_pct AS meets_target
                        FROM fleet f JOIN down d ON d.id = f.id
                        ORDER BY uptime_pct, f.name
                    """
                ),
                units={
                    "uptime_pct": "percent",
                    "target_pct": "percent",
                    "downtime_minutes": "m",
                    "budget_used_pct": "percent",
                },
            ),
            rows_bargauge(
                2,
                "Month-to-date uptime per provider",
                Grid(0, 9, 12, 8),
                month_to_date(
                    """
                        SELECT f.provider AS metric,
                          round((100 * (1 - sum(d.down_s) / (count(*) * NULLIF(extract(epoch FROM $__timeTo()::timestamptz - date_trunc('month', $__timeTo()::timestamptz)), 0))))::numeric, 4) AS uptime_pct
                        FROM fleet f JOIN down d ON d.id = f.id
                        GROUP BY f.provider ORDER BY f.provider
                    """
                ),
                unit="percent",
                # Grafana's default thresholds turn anything over 80 red; colour by SLA target:
                # below the loosest built-in target (99.5) red, at the default target (99.9) green.
                steps=[(None, "red"), (99.5, "orange"), (99.9, "green")],
            ),
            table_panel(
                3,
                "Uptime vs target per provider and pool",
                Grid(12, 9, 12, 8),
                month_to_date(
                    """
                        SELECT f.provider, COALESCE(f.pool, 'none') AS pool, count(*) AS targets,
                          round((100 * (1 - sum(d.down_s) / (count(*) * NULLIF(extract(epoch FROM $__timeTo()::timestamptz - date_trunc('month', $__timeTo()::timestamptz)), 0))))::numeric, 4) AS uptime_pct,
                          min(f.target_pct) AS target_pct,
                          round((100 * sum(d.down_s) / NULLIF(sum((1 - f.target_pct / 100) * extract(epoch FROM (date_trunc('month', $__timeTo()::timestamptz) + interval '1 month') - date_trunc('month', $__timeTo()::timestamptz))), 0))::numeric, 1) AS budget_used_pct
                        FROM fleet f JOIN down d ON d.id = f.id
                        GROUP BY f.provider, COALESCE(f.pool, 'none') ORDER BY 1, 2
                    """
                ),
                units={
                    "uptime_pct": "percent",
                    "target_pct": "percent",
                    "budget_used_pct": "percent",
                },
            ),
            timeseries_panel(
                4,
                "Error budget burned (month to date)",
                Grid(0, 17, 12, 8),
                sql(
                    f"""
                        WITH {SLA_FLEET}, allowance AS (
                          SELECT provider, sum(1 - target_pct / 100) AS share FROM fleet GROUP BY provider
                        ), b AS (
                          SELECT generate_series($__timeFrom()::timestamptz, $__timeTo()::timestamptz,
                            GREATEST($__interval_ms, 60000) * interval '1 millisecond') AS at
                        ), down AS (
                          SELECT f.provider, o.start, COALESCE(o."end", 'infinity') AS "end"
                          FROM outages o JOIN fleet f ON f.id = o.target_id
                          WHERE o.series = 'reachable' AND o.start < $__timeTo()::timestamptz
                            AND COALESCE(o."end", 'infinity') > date_trunc('month', $__timeFrom()::timestamptz)
                        )
                        SELECT b.at AS "time", a.provider AS metric,
                          100 * COALESCE(sum(extract(epoch FROM LEAST(d."end", b.at) - GREATEST(d.start, date_trunc('month', b.at)))), 0)
                            / NULLIF(a.share * extract(epoch FROM (date_trunc('month', b.at) + interval '1 month') - date_trunc('month', b.at)), 0)
                            AS budget_burned_pct
                        FROM b CROSS JOIN allowance a
                        LEFT JOIN down d ON d.provider = a.provider AND d.start < b.at AND d."end" > date_trunc('month', b.at)
                        GROUP BY b.at, a.provider, a.share ORDER BY 1
                    """
                ),
                unit="percent",
                max_data_points=100,  # a cumulative line: 6-hour steps over a month
            ),
            timeseries_panel(
                5,
                "Downtime per interval",
                Grid(12, 17, 12, 8),
                sql(
                    """
                        SELECT $__timeGroupAlias(o.start, $__interval), t.provider AS metric,
                          sum(extract(epoch FROM COALESCE(o."end", now()) - o.start)) / 60 AS downtime_minutes
                        FROM outages o JOIN targets t ON t.id = o.target_id
                        WHERE $__timeFilter(o.start) AND o.series = 'reachable' AND ('__all__' IN ($provider) OR t.provider IN ($provider)) AND ('__all__' IN ($region) OR COALESCE(t.region, 'none') IN ($region)) AND ('__all__' IN ($pool) OR COALESCE(t.pool, 'none') IN ($pool))
                        GROUP BY 1, 2 ORDER BY 1
                    """
                ),
                unit="m",
            ),
            table_panel(
                6,
                "Service credits owed",
                Grid(0, 25, 24, 7),
                sql(
                    """
                        SELECT c.provider, c.month, c.scope, c.credit_pct, c.deadline, c.claimed_at IS NOT NULL AS claimed
                        FROM credit_claims c
                        WHERE ('__all__' IN ($provider) OR c.provider IN ($provider))
                          AND ('__all__' IN ($region) OR c.scope NOT LIKE 'region:%' OR substr(c.scope, 8) IN ($region))
                          AND ('__all__' IN ($pool) OR c.scope NOT LIKE 'pool:%' OR substr(c.scope, 6) IN ($pool))
                        ORDER BY c.month DESC, c.provider
                    """
                ),
                units={"credit_pct": "percent"},
            ),
            table_panel(
                7,
                "Price per unit of training work (month to date)",
                Grid(0, 32, 24, 8),
                sql(
                    f"""
                        WITH {WORK_MONTH_TO_DATE}
                        SELECT t.provider, COALESCE(t.instance_type, 'none') AS instance_type, w.unit, count(*) AS targets,
                          round((sum(w.work) / 1e6)::numeric, 1) AS work_millions,
                          round((sum(w.spend) / NULLIF(sum(w.nominal * w.seconds) / 1e6, 0))::numeric, 4) AS list_price_per_million,
                          round((sum(w.spend) / NULLIF(sum(w.work) / 1e6, 0))::numeric, 4) AS effective_price_per_million
                        FROM work w JOIN targets t ON t.id = w.target_id
                        WHERE ('__all__' IN ($provider) OR t.provider IN ($provider)) AND ('__all__' IN ($region) OR COALESCE(t.region, 'none') IN ($region)) AND ('__all__' IN ($pool) OR COALESCE(t.pool, 'none') IN ($pool))
                        GROUP BY t.provider, COALESCE(t.instance_type, 'none'), w.unit
                        ORDER BY effective_price_per_million NULLS LAST, 1, 2
                    """
                ),
                description=(
                    "What the instances cost this month over the work their training jobs "
                    "reported (heartbeats' throughput), per million samples or tokens: hours "
                    "down, unusable or slow are paid for and deliver little. List: the hourly "
                    "price at the job's median speed. The monthly report has the same figures."
                ),
                units={
                    "list_price_per_million": "currencyUSD",
                    "effective_price_per_million": "currencyUSD",
                },
            ),
        ],
    )


BUILDERS: dict[str, Callable[[], builders.Dashboard]] = {
    "alerts.json": alerts,
    "gpu-fleet.json": gpu_fleet,
    "provider-health.json": provider_health,
    "sla-compliance.json": sla_compliance,
}


def render(dashboard: builders.Dashboard) -> str:
    """The dashboard as the JSON file holds it: two-space indents, a final newline."""
    data: dict[str, Any] = json.loads(json.dumps(dashboard.build(), cls=JSONEncoder))
    for item in data["templating"]["list"]:
        # The SDK's variable model has no `definition`, the text Grafana's editor shows.
        item["definition"] = item["query"]
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def generate() -> dict[str, str]:
    """Every dashboard file's name and the text the code generates for it."""
    return {name: render(build()) for name, build in BUILDERS.items()}


def main(argv: Sequence[str] | None = None) -> int:
    """Write the stale dashboard files (or, with ``--check``, name them and return 1)."""
    parser = argparse.ArgumentParser(
        prog="python -m dashboards.build", description="Generate dashboards/*.json from code."
    )
    parser.add_argument(
        "--check", action="store_true", help="write nothing; exit 1 if a file differs"
    )
    parser.add_argument("--dir", type=Path, default=DIRECTORY, help="where the JSON files are")
    args = parser.parse_args(argv)
    stale = []
    for name, text in generate().items():
        path = args.dir / name
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            stale.append(name)
            if not args.check:
                path.write_text(text, encoding="utf-8")
                print(f"wrote {path}")
    if args.check and stale:
        print(
            f"out of date: {', '.join(stale)} (run `python -m dashboards.build`)",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
