"""A synthetic fleet with a month of history, written with set-based SQL on PostgreSQL.

Two users: the dashboard tests fill a few hundred targets into the test database (the populated
case every panel must run on), and ``bench/dashboard_panels.py`` fills 1,000 targets with a month of
1-minute raw probe rows (the 44.6 M-row scale) to time every panel. The shape follows what the
running service writes: hour rollups for the whole month, minute rollups and raw rows for the
recent past, outage intervals for both series (a few still open), observed windows with a
monitor gap, provider incidents (open, resolved, maintenance), alerts with their deliveries,
service-credit claims and feed health. Names are prefixed ``fleet-`` and provider slugs are
their own, so a fill never collides with other rows in the same database.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

import sqlalchemy as sa

PROVIDERS = ("fleet-aws", "fleet-gcp", "fleet-azure", "fleet-coreweave")
POLICIES = {"fleet-gold": 99.9, "fleet-silver": 99.5, "fleet-bronze": 99.0}
RAW_INDEXES = ("ix_probe_results_at", "ix_probe_results_target_at")


@dataclass(frozen=True, slots=True)
class FleetShape:
    """How much history to write; ``now`` ends it and ``days`` of hour rollups precede it."""

    targets: int
    now: datetime
    days: int = 30
    minute_hours: int = 48  # minute rollups, as long as raw rows are kept
    raw_hours: int = 6  # 1-minute raw probe rows (1,000 targets × 30 days = 43.2 M)

    @property
    def start(self) -> datetime:
        return self.now - timedelta(days=self.days)

    def params(self) -> dict[str, object]:
        return {
            "n": self.targets,
            "now": self.now,
            "start": self.start,
            "minute_from": self.now - timedelta(hours=self.minute_hours),
            "raw_from": self.now - timedelta(hours=self.raw_hours),
            "providers": list(PROVIDERS),
            "policies": list(POLICIES),
        }


FLEET = [
    (
        "sla_policies",
        """INSERT INTO sla_policies (name, definition, definition_hash, source, created_at)
           SELECT p.name, jsonb_build_object('target_pct', p.pct), md5(p.name) || md5(p.name),
                  'config', :start
           FROM (VALUES ('fleet-gold', 99.9), ('fleet-silver', 99.5), ('fleet-bronze', 99.0))
             AS p(name, pct)""",
    ),
    (
        "providers",
        """INSERT INTO providers (slug, name, regions, components, sla_policy, source, created_at)
           SELECT slug, upper(slug), jsonb_build_array(slug || '-r1', slug || '-r2'), '[]',
                  (CAST(:policies AS text[]))[k % 3 + 1], 'catalog', :start
           FROM unnest(CAST(:providers AS text[])) WITH ORDINALITY AS p(slug, k)""",
    ),
    (
        "feeds",  # one healthy, one stale, one failing, one never succeeded
        """INSERT INTO feeds (provider_id, kind, url, enabled, last_polled_at, last_success_at,
                              consecutive_failures, total_failures, last_error, created_at)
           SELECT p.id, 'statuspage', 'https://status.' || p.slug || '.test/api/v2/summary.json',
                  true, :now - interval '1 minute',
                  CASE p.id % 4 WHEN 0 THEN :now - interval '2 minutes'
                                WHEN 1 THEN :now - interval '3 hours'
                                WHEN 2 THEN :now - interval '20 minutes' END,
                  CASE p.id % 4 WHEN 2 THEN 6 WHEN 3 THEN 12 ELSE 0 END,
                  CASE p.id % 4 WHEN 2 THEN 6 WHEN 3 THEN 12 ELSE 0 END,
                  CASE WHEN p.id % 4 IN (2, 3) THEN 'HTTP 503' END, :start
           FROM providers p WHERE p.slug = ANY(CAST(:providers AS text[]))""",
    ),
    (
        "targets",  # every eighth a DCGM GPU target (with a usable series), pools of 8
        """INSERT INTO targets (name, kind, url, provider, region, zone, pool, instance_type, gpus,
               hourly_price, sla_policy, interval_s, timeout_s, confirmations, settings, labels,
               source, created_at)
           SELECT 'fleet-' || i, CASE WHEN i % 8 = 0 THEN 'dcgm' ELSE 'http' END,
                  'http://10.1.' || (i / 250) || '.' || (i % 250) || '/',
                  (CAST(:providers AS text[]))[i % 4 + 1],
                  (CAST(:providers AS text[]))[i % 4 + 1] || '-r' || (i / 4 % 2 + 1),
                  'z' || (i % 3), CASE WHEN i % 50 = 49 THEN NULL ELSE 'pool-' || (i / 8) END,
                  'p5.48xlarge', 8, 98.32,
                  CASE WHEN i % 5 = 0 THEN (CAST(:policies AS text[]))[i % 3 + 1] END,
                  60, 5, 2, '{}', '{}',
                  'config', :start - interval '30 days'
           FROM generate_series(0, :n - 1) AS i""",
    ),
    (
        "observed_windows",  # observed all along but a 30-minute monitor gap 11 days in
        """INSERT INTO observed_windows (target_id, start, "end", source)
           SELECT id, :start, :start + interval '11 days', 'probe' FROM targets
             WHERE name LIKE 'fleet-%'
           UNION ALL
           SELECT id, :start + interval '11 days 30 minutes', :now, 'probe' FROM targets
             WHERE name LIKE 'fleet-%'""",
    ),
    (
        "outages",  # three a series a target, 2..60 minutes; every 97th target still down
        """INSERT INTO outages (target_id, series, start, "end", confirmed_at, source, detail,
                                cause)
           SELECT t.id, s.series, o.start,
                  CASE WHEN k = 2 AND t.id % 97 = 0 THEN NULL
                       ELSE o.start + (2 + (t.id + k) % 59) * interval '1 minute' END,
                  o.start + interval '2 minutes', 'probe', '{}',
                  (ARRAY['timeout', 'connect', 'http_status'])[k + 1]
           FROM targets t, generate_series(0, 2) AS k,
                (VALUES ('reachable'), ('usable')) AS s(series),
                LATERAL (SELECT CASE WHEN k = 2 AND t.id % 97 = 0
                                     THEN :now - interval '40 minutes'
                                     ELSE :start + ((t.id * 7919 + k * 104729)
                                          % (extract(epoch FROM :now - :start)::bigint / 60 - 90))
                                          * interval '1 minute' END AS start) AS o
           WHERE t.name LIKE 'fleet-%' AND (s.series = 'reachable' OR t.kind = 'dcgm')""",
    ),
    (
        "target_states",  # down where an outage is open, unknown for a few never probed
        """INSERT INTO target_states (target_id, vantage, series, state, since,
                                      consecutive_failures, consecutive_successes, detail,
                                      last_probe_at)
           SELECT t.id, '*', s.series,
                  CASE WHEN t.id % 97 = 0 THEN 'down' WHEN t.id % 61 = 0 THEN 'unknown'
                       ELSE 'up' END,
                  :now - interval '40 minutes', 0, 0, '{}', :now - interval '30 seconds'
           FROM targets t, (VALUES ('reachable'), ('usable')) AS s(series)
           WHERE t.name LIKE 'fleet-%' AND (s.series = 'reachable' OR t.kind = 'dcgm')""",
    ),
    (
        "probe_rollups hour",  # none in the monitor gap's hour
        """INSERT INTO probe_rollups (target_id, resolution, bucket_start, count, failures,
                                      unknown, latency_p50_ms, latency_p95_ms, latency_max_ms)
           SELECT t.id, 'hour', h, 60, CASE WHEN (t.id + extract(hour FROM h)::int) % 53 = 0
                                            THEN 3 ELSE 0 END,
                  CASE WHEN t.id % 61 = 0 THEN 60 ELSE 0 END,
                  1.5, 4.0 + t.id % 7, 12.0
           FROM targets t, generate_series(date_trunc('hour', :start),
                                           :now - interval '1 hour', interval '1 hour') AS h
           WHERE t.name LIKE 'fleet-%'
             AND NOT (h >= date_trunc('hour', :start + interval '11 days')
                      AND h < :start + interval '11 days 30 minutes')""",
    ),
    (
        "probe_rollups minute",
        """INSERT INTO probe_rollups (target_id, resolution, bucket_start, count, failures,
                                      unknown, latency_p50_ms, latency_p95_ms, latency_max_ms)
           SELECT t.id, 'minute', m, 1, CASE WHEN t.id % 97 = 0
                                              AND m >= :now - interval '40 minutes'
                                             THEN 1 ELSE 0 END,
                  CASE WHEN t.id % 61 = 0 THEN 1 ELSE 0 END, 1.5, 4.0 + t.id % 7, 12.0
           FROM targets t, generate_series(date_trunc('minute', :minute_from),
                                           :now - interval '1 minute', interval '1 minute') AS m
           WHERE t.name LIKE 'fleet-%'""",
    ),
    (
        "incidents",  # ten a provider: one open, one maintenance, the rest resolved
        """INSERT INTO incidents (provider_id, source_id, title, status, impact, is_maintenance,
                                  started_at, acknowledged_at, identified_at, resolved_at,
                                  first_seen_at, last_seen_at, content_hash, regions, components,
                                  relevant)
           SELECT p.id, 'fleet-inc-' || p.id || '-' || k, 'Degraded GPU capacity ' || k,
                  CASE WHEN k = 0 THEN 'investigating' WHEN k = 1 THEN 'scheduled'
                       ELSE 'resolved' END,
                  (ARRAY['minor', 'major', 'critical'])[k % 3 + 1], k = 1, s.at,
                  s.at + interval '7 minutes', s.at + interval '20 minutes',
                  CASE WHEN k = 0 THEN NULL ELSE s.at + (30 + 11 * k) * interval '1 minute' END,
                  s.at + interval '3 minutes', :now, md5(p.slug || k) || md5(p.slug || k),
                  CASE WHEN k % 2 = 0 THEN jsonb_build_array(p.slug || '-r1') ELSE '[]' END,
                  '[]', true
           FROM providers p, generate_series(0, 9) AS k,
                LATERAL (SELECT CASE WHEN k = 0 THEN :now - interval '2 hours'
                                     ELSE :start + k * interval '3 days 1 hour' END AS at) AS s
           WHERE p.slug = ANY(CAST(:providers AS text[]))""",
    ),
    (
        "outages of incidents",  # each incident took three of its provider's targets down first
        """INSERT INTO outages (target_id, series, start, "end", confirmed_at, source, detail,
                                cause)
           SELECT t.id, 'reachable', i.started_at - interval '15 minutes',
                  COALESCE(i.resolved_at, i.started_at + interval '30 minutes'),
                  i.started_at - interval '13 minutes', 'probe', '{}', 'connect'
           FROM incidents i JOIN providers p ON p.id = i.provider_id
           CROSS JOIN LATERAL (SELECT id FROM targets t WHERE t.provider = p.slug
                               ORDER BY t.id LIMIT 3) AS t
           WHERE p.slug = ANY(CAST(:providers AS text[])) AND NOT i.is_maintenance""",
    ),
    (
        "alerts",  # one per reachable outage, firing while the outage is open
        """INSERT INTO alerts (fingerprint, rule, severity, labels, summary, state, started_at,
                               resolved_at, last_notified_at, suppressed)
           SELECT 'fleet-' || o.id, 'target_down', 'critical',
                  jsonb_build_object('provider', t.provider, 'target', t.name,
                                     'region', t.region, 'pool', t.pool),
                  t.name || ' is down', CASE WHEN o."end" IS NULL THEN 'firing' ELSE 'resolved' END,
                  o.confirmed_at, o."end", o.confirmed_at, t.id % 194 = 0
           FROM outages o JOIN targets t ON t.id = o.target_id
           WHERE t.name LIKE 'fleet-%' AND o.series = 'reachable'""",
    ),
    (
        "channels",
        """INSERT INTO channels (name, kind, enabled, created_at)
           VALUES ('fleet-webhook', 'webhook', true, :now), ('fleet-slack', 'slack', true, :now)""",
    ),
    (
        "deliveries",  # firing and resolved to both channels; every 23rd failed
        """INSERT INTO deliveries (alert_id, channel_id, event, idempotency_key, payload, status,
                                   attempts, next_attempt_at, last_status_code, last_error,
                                   delivered_at, created_at)
           SELECT a.id, c.id, e.event, a.fingerprint || '-' || c.name || '-' || e.event, '{}',
                  CASE WHEN (a.id + c.id) % 23 = 0 THEN 'failed' ELSE 'delivered' END,
                  CASE WHEN (a.id + c.id) % 23 = 0 THEN 8 ELSE 1 END, e.at,
                  CASE WHEN (a.id + c.id) % 23 = 0 THEN 500 ELSE 200 END,
                  CASE WHEN (a.id + c.id) % 23 = 0 THEN 'HTTP 500' END,
                  CASE WHEN (a.id + c.id) % 23 = 0 THEN NULL ELSE e.at END, e.at
           FROM alerts a
           JOIN channels c ON c.name LIKE 'fleet-%'
           CROSS JOIN LATERAL (VALUES ('firing', a.started_at), ('resolved', a.resolved_at))
             AS e(event, at)
           WHERE a.fingerprint LIKE 'fleet-%' AND e.at IS NOT NULL""",
    ),
    (
        "credit_claims",
        """INSERT INTO credit_claims (provider, month, scope, credit_pct, deadline)
           SELECT t.provider, to_char(:start, 'YYYY-MM'), 'pool:' || t.pool, 10.0,
                  :now + interval '30 days'
           FROM targets t WHERE t.name LIKE 'fleet-%' AND t.pool IS NOT NULL
           GROUP BY t.provider, t.pool HAVING min(t.id) % 5 = 0""",
    ),
    (
        # one target in ten runs a training job that reports its throughput every minute
        # (tokens, a tenth slower on every seventh box) over the minute-rollup hours
        "heartbeats",
        """INSERT INTO heartbeats (target_id, at, step, throughput, payload)
           SELECT t.id, m, extract(epoch FROM m)::bigint / 60,
                  CASE WHEN t.id % 7 = 0 THEN 900.0 ELSE 1000.0 END, '{"unit": "tokens"}'
           FROM (SELECT id FROM targets WHERE name LIKE 'fleet-%' AND id % 10 = 0) AS t,
                generate_series(:minute_from, :now, interval '1 minute') AS m""",
    ),
]

RAW_HOUR = """
INSERT INTO probe_results (target_id, vantage, at, ok, latency_ms, usable)
SELECT t.id, '*', m, (t.id + extract(epoch FROM m)::bigint / 60) % 997 <> 0, 1.5,
       CASE WHEN t.kind = 'dcgm' THEN (t.id + extract(epoch FROM m)::bigint / 60) % 1009 <> 0 END
FROM (SELECT id, kind FROM targets WHERE name LIKE 'fleet-%') AS t,
     generate_series(:hour, :hour + interval '59 minutes', interval '1 minute') AS m
WHERE m < :now"""

Progress = Callable[[str], None]


def fill(connection: sa.Connection, shape: FleetShape, progress: Progress | None = None) -> None:
    """Write the fleet and its history through ``connection``; the caller commits or rolls
    back."""
    say = progress or (lambda line: None)
    fill_fleet(connection, shape, say)
    fill_raw(connection, shape, say)


def fill_fleet(connection: sa.Connection, shape: FleetShape, say: Progress) -> None:
    """Everything but the raw probe rows."""
    params = shape.params()
    for label, statement in FLEET:
        began = time.perf_counter()
        rows = connection.execute(sa.text(statement), params).rowcount
        say(f"  {label:<22} {rows:>10,} rows {time.perf_counter() - began:7.1f} s")


def fill_raw(connection: sa.Connection, shape: FleetShape, say: Progress) -> int:
    """The last ``raw_hours`` of 1-minute probe rows, one hour per statement (a caller loading
    millions drops the indexes first and commits as it goes; see bench/dashboard_panels.py)."""
    began, rows = time.perf_counter(), 0
    hour = shape.now.replace(minute=0, second=0, microsecond=0) - timedelta(hours=shape.raw_hours)
    step = 0
    while hour < shape.now:
        rows += connection.execute(sa.text(RAW_HOUR), {"hour": hour, "now": shape.now}).rowcount
        hour += timedelta(hours=1)
        step += 1
        if step % 24 == 0 or hour >= shape.now:
            say(f"  probe_results {rows:>14,} rows {time.perf_counter() - began:7.1f} s")
    return rows
