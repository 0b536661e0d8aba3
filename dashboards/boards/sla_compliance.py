"""The SLA compliance dashboard: month-to-date uptime against each target's SLA, the error
budget burned, the credits owed, the price of training work and the interruption ledger."""

from __future__ import annotations

from grafana_foundation_sdk.builders import dashboard as builders

from dashboards.kit.board import board
from dashboards.kit.panels import Grid, rows_bargauge, table_panel, timeseries_panel
from dashboards.kit.queries import sql

# The selected fleet live this month with each target's SLA target (its own policy, else its
# provider's, else 99.9): what every SLA panel counts.
SLA_FLEET = """fleet AS (
  SELECT t.id, t.name, t.provider, t.pool,
    COALESCE((sp.definition->>'target_pct')::float, 99.9) AS target_pct
  FROM targets t LEFT JOIN sla_policies sp ON sp.name = COALESCE(t.sla_policy, (
    SELECT pr.sla_policy FROM providers pr WHERE pr.slug = t.provider))
  WHERE (t.retired_at IS NULL OR t.retired_at > date_trunc('month', $__timeTo()::timestamptz)) AND ('__all__' IN ($provider) OR t.provider IN ($provider)) AND ('__all__' IN ($region) OR COALESCE(t.region, 'none') IN ($region)) AND ('__all__' IN ($pool) OR COALESCE(t.pool, 'none') IN ($pool))
)"""

# The SLA panels' shared start: the fleet, and each target's month to date counted as the
# monthly report counts it (monitor/reports/assemble.py): over the part of the month the target
# existed (from its registration or its earliest observed window, until it was retired), the
# time it was observed, and the reachable outages inside that observed time. An outage nobody
# watched is unknown time, not downtime; one that starts after the range's end has not happened.
MONTH_TO_DATE_DOWNTIME = f"""
WITH {SLA_FLEET}, life AS (
  SELECT f.id,
    GREATEST(date_trunc('month', $__timeTo()::timestamptz), LEAST(t.created_at, COALESCE(w.first, t.created_at))) AS lo,
    LEAST($__timeTo()::timestamptz, COALESCE(t.retired_at, $__timeTo()::timestamptz)) AS hi
  FROM fleet f JOIN targets t ON t.id = f.id
    LEFT JOIN LATERAL (SELECT min(ow.start) AS first FROM observed_windows ow WHERE ow.target_id = f.id) w ON true
), seen AS (
  SELECT l.id, COALESCE(range_agg(tstzrange(GREATEST(ow.start, l.lo), LEAST(ow."end", l.hi))) FILTER (WHERE ow.id IS NOT NULL), '{{}}'::tstzmultirange) AS observed
  FROM life l LEFT JOIN observed_windows ow ON ow.target_id = l.id AND l.lo < l.hi AND ow.start < l.hi AND ow."end" > l.lo
  GROUP BY l.id
), outs AS (
  SELECT l.id, COALESCE(range_agg(tstzrange(o.start, LEAST(COALESCE(o."end", $__timeTo()::timestamptz), $__timeTo()::timestamptz))) FILTER (WHERE o.id IS NOT NULL), '{{}}'::tstzmultirange) AS spans
  FROM life l LEFT JOIN outages o ON o.target_id = l.id AND o.series = 'reachable'
    AND o.start < $__timeTo()::timestamptz AND COALESCE(o."end", $__timeTo()::timestamptz) > o.start
    AND COALESCE(o."end", $__timeTo()::timestamptz) > date_trunc('month', $__timeTo()::timestamptz)
  GROUP BY l.id
), down AS (
  SELECT s.id,
    (SELECT COALESCE(sum(extract(epoch FROM upper(r) - lower(r))), 0) FROM unnest(s.observed) r) AS observed_s,
    (SELECT COALESCE(sum(extract(epoch FROM upper(r) - lower(r))), 0) FROM unnest(s.observed * o.spans) r) AS down_s
  FROM seen s JOIN outs o ON o.id = s.id
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


# The interruption ledger month to date, counted as the monthly report counts it
# (monitor/history/ledger.py): instances (targets with an instance type, or discovered), each
# over the part of the month it existed (from its registration or its earliest observed window,
# until it was retired), and the lives that ended in it, preempted or ended by the provider.
LEDGER_MONTH_TO_DATE = """life AS (
  SELECT t.provider, COALESCE(t.instance_type, 'none') AS instance_type, t.capacity, t.ended_by,
    t.retired_at IS NOT NULL AND t.retired_at <= $__timeTo()::timestamptz AS ended,
    GREATEST(date_trunc('month', $__timeTo()::timestamptz), LEAST(t.created_at, COALESCE(w.first, t.created_at))) AS lo,
    LEAST($__timeTo()::timestamptz, COALESCE(t.retired_at, $__timeTo()::timestamptz)) AS hi
  FROM targets t
    LEFT JOIN LATERAL (SELECT min(ow.start) AS first FROM observed_windows ow WHERE ow.target_id = t.id) w ON true
  WHERE (t.instance_type IS NOT NULL OR t.discovered_by IS NOT NULL) AND ('__all__' IN ($provider) OR t.provider IN ($provider)) AND ('__all__' IN ($region) OR COALESCE(t.region, 'none') IN ($region)) AND ('__all__' IN ($pool) OR COALESCE(t.pool, 'none') IN ($pool))
)"""


def month_to_date(select: str) -> str:
    """A query over ``fleet`` and ``down`` (``MONTH_TO_DATE_DOWNTIME``)."""
    return MONTH_TO_DATE_DOWNTIME.strip() + "\n" + sql(select)


def dashboard() -> builders.Dashboard:
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
                          round((100 * (1 - d.down_s / NULLIF(d.observed_s, 0)))::numeric, 4) AS uptime_pct,
                          f.target_pct,
                          round((d.down_s / 60)::numeric, 1) AS downtime_minutes,
                          round((100 * d.down_s / NULLIF((1 - f.target_pct / 100) * extract(epoch FROM (date_trunc('month', $__timeTo()::timestamptz) + interval '1 month') - date_trunc('month', $__timeTo()::timestamptz)), 0))::numeric, 1) AS budget_used_pct,
                          (100 * (1 - d.down_s / NULLIF(d.observed_s, 0))) >= f.target_pct AS meets_target
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
                          round((100 * (1 - sum(d.down_s) / NULLIF(sum(d.observed_s), 0)))::numeric, 4) AS uptime_pct
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
                          round((100 * (1 - sum(d.down_s) / NULLIF(sum(d.observed_s), 0)))::numeric, 4) AS uptime_pct,
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
            table_panel(
                8,
                "Interruption ledger (month to date)",
                Grid(0, 40, 24, 8),
                sql(
                    f"""
                        WITH {LEDGER_MONTH_TO_DATE}
                        SELECT l.provider, l.instance_type, l.capacity, count(*) AS instances,
                          round((sum(extract(epoch FROM l.hi - l.lo)) / 3600)::numeric, 1) AS instance_hours,
                          count(*) FILTER (WHERE l.ended AND l.ended_by = 'preempted') AS preemptions,
                          count(*) FILTER (WHERE l.ended AND l.ended_by = 'provider') AS provider_ends,
                          round((1000 * count(*) FILTER (WHERE l.ended AND l.ended_by IN ('preempted', 'provider'))
                            / NULLIF(sum(extract(epoch FROM l.hi - l.lo)) / 3600, 0))::numeric, 3) AS interruptions_per_1000h
                        FROM life l
                        WHERE l.hi > l.lo
                        GROUP BY l.provider, l.instance_type, l.capacity
                        ORDER BY 1, 2, 3
                    """
                ),
                description=(
                    "How often instances were taken away this month: preempted, or ended by "
                    "the provider (a retirement, a host failure), per 1,000 hours the instances "
                    "existed. The monthly report adds the median lifetime and the exact 95% "
                    "interval, and says where the sample is small (under 1,000 instance-hours "
                    "or 3 interruptions)."
                ),
            ),
        ],
    )
