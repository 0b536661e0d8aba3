"""The alerts dashboard: what is firing or silenced, the deliveries and their failures, and
slamon's own Celery tasks."""

from __future__ import annotations

from grafana_foundation_sdk.builders import dashboard as builders

from dashboards.kit.board import board
from dashboards.kit.panels import Grid, rows_piechart, stat_panel, table_panel, timeseries_panel
from dashboards.kit.queries import sql


def dashboard() -> builders.Dashboard:
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
