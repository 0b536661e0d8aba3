"""The GPU fleet dashboard: each target's reachable and usable state now and over the range,
the worst targets, probe latency and failures, the outages."""

from __future__ import annotations

from grafana_foundation_sdk.builders import dashboard as builders

from dashboards.kit.board import board
from dashboards.kit.panels import Grid, stat_panel, state_timeline, table_panel, timeseries_panel
from dashboards.kit.queries import sql

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


def dashboard() -> builders.Dashboard:
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
