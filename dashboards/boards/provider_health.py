"""The provider health dashboard: incidents and the provider's response times, the status
feeds, each provider's state now and its fleet's time up, down, unusable and unknown."""

from __future__ import annotations

from grafana_foundation_sdk.builders import dashboard as builders

from dashboards.kit.board import board
from dashboards.kit.panels import Grid, stat_panel, table_panel, timeseries_panel
from dashboards.kit.queries import sql

# A feed's health in one word, as the status page judges it (monitor/status/health.py), at the
# default feed_stale_after of 30 minutes.
FEED_STATE = """CASE WHEN f.id IS NULL THEN NULL WHEN NOT f.enabled THEN 'disabled' WHEN f.last_polled_at IS NULL THEN 'never-polled' WHEN f.last_success_at IS NULL THEN 'never-answered' WHEN now() - f.last_success_at <= interval '30 minutes' THEN 'fresh' WHEN f.consecutive_failures > 0 THEN 'unreachable' ELSE 'stale' END"""


def dashboard() -> builders.Dashboard:
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
