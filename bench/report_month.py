"""Time the monthly SLA report for N targets with a month of 1-minute probe history on PostgreSQL,
beside a plain ``SELECT count(*)`` over the same raw rows (the floor any report over raw data
would pay). The report itself reads outage intervals and observed windows, not raw rows.

    .venv/bin/python bench/report_month.py --targets 1000 --month 2026-10
    .venv/bin/python bench/report_month.py --no-raw     # skip the 43 M raw rows (fast setup)

Writes into a fresh database (default slamon_bench on 127.0.0.1). Not run by CI.
"""

from __future__ import annotations

import argparse
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import sqlalchemy as sa

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from monitor.config import parse_config
from monitor.db.engine import make_engine, make_sessionmaker
from monitor.db.migrate import upgrade
from monitor.feeds.stats import month_bounds
from monitor.reports.service import build_monthly, render

ADMIN = "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"


def fresh_database(name: str) -> str:
    admin = sa.create_engine(ADMIN, isolation_level="AUTOCOMMIT")
    with admin.connect() as c:
        c.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        c.execute(sa.text(f'CREATE DATABASE "{name}"'))
    admin.dispose()
    return ADMIN.rsplit("/", 1)[0] + f"/{name}"


def fill(engine: sa.Engine, targets: int, month: str, raw: bool) -> None:
    start, end = month_bounds(month)
    params = {"start": start, "end": end, "created": start - timedelta(days=30), "n": targets}
    statements = [
        # targets across 3 providers, 2 regions each, 3 zones, pools of 8
        """INSERT INTO targets (name, kind, url, provider, region, zone, pool, instance_type, gpus,
               hourly_price, sla_policy, interval_s, timeout_s, confirmations, settings, labels,
               source, created_at)
           SELECT 'gpu-' || i, 'http', 'http://10.0.' || (i / 250) || '.' || (i % 250) || '/',
                  (ARRAY['aws','gcp','azure'])[i % 3 + 1],
                  (ARRAY['r1','r2'])[i % 2 + 1], 'z' || (i % 3), 'pool-' || (i / 8), 'p5.48xlarge',
                  8, 98.32, (ARRAY['aws-ec2-instance','gcp-compute-single-vm',
                  'azure-vm-single-premium'])[i % 3 + 1], 60, 5, 2, '{}', '{}', 'config', :created
           FROM generate_series(0, :n - 1) AS i""",
        # observed all month except a 30-minute monitor gap on day 12
        """INSERT INTO observed_windows (target_id, start, "end", source)
           SELECT id, :start, :start + interval '11 days', 'probe' FROM targets
           UNION ALL
           SELECT id, :start + interval '11 days 30 minutes', :end, 'probe' FROM targets""",
        # three outages per target of 2..60 minutes, one still open on a few
        """INSERT INTO outages (target_id, series, start, "end", confirmed_at, source, detail)
           SELECT t.id, s.series, :start + ((t.id * 7919 + k * 104729) % 40000) * interval '1 minute',
                  :start + ((t.id * 7919 + k * 104729) % 40000) * interval '1 minute'
                         + (2 + (t.id + k) % 59) * interval '1 minute',
                  :start, 'probe', '{}'
           FROM targets t, generate_series(0, 2) AS k, (VALUES ('reachable'), ('usable')) AS s(series)""",
    ]
    if raw:
        statements.append(
            """INSERT INTO probe_results (target_id, vantage, at, ok, latency_ms)
               SELECT t.id, 'bench', m, (t.id + extract(epoch from m)::bigint / 60) % 997 <> 0, 1.5
               FROM targets t, generate_series(:start, :end - interval '1 minute', interval '1 minute') AS m"""
        )
    with engine.begin() as connection:
        for sql in statements:
            began = time.perf_counter()
            connection.execute(sa.text(sql), params)
            print(f"  filled in {time.perf_counter() - began:6.1f} s: {sql.split()[2]}")
    with engine.connect() as connection:
        connection.execution_options(isolation_level="AUTOCOMMIT").execute(
            sa.text("VACUUM ANALYZE")
        )


def timed(label: str, action):  # type: ignore[no-untyped-def]
    began = time.perf_counter()
    result = action()
    print(f"{label:<34} {time.perf_counter() - began:8.3f} s")
    return result


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--targets", type=int, default=1000)
    parser.add_argument("--month", default="2026-10")
    parser.add_argument("--database", default="slamon_bench")
    parser.add_argument("--no-raw", action="store_true", help="do not generate raw probe rows")
    args = parser.parse_args()
    engine = make_engine(fresh_database(args.database))
    upgrade(engine)
    print(f"filling {args.targets} targets, month {args.month} of 1-minute history")
    fill(engine, args.targets, args.month, not args.no_raw)
    sessions = make_sessionmaker(engine)
    now = month_bounds(args.month)[1] + timedelta(days=3)
    config = parse_config("")
    with engine.connect() as connection:
        raw = timed(
            "floor: SELECT count(*) raw rows",
            lambda: connection.execute(sa.text("SELECT count(*) FROM probe_results")).scalar_one(),
        )
    print(f"{'raw probe rows':<34} {raw:>8}")
    with sessions() as session:
        report = timed(
            "report: gather + assemble", lambda: build_monthly(session, args.month, now, config)
        )
    for fmt in ("json", "csv", "html", "pdf"):
        content = timed(f"render {fmt}", lambda fmt=fmt: render(report, fmt).content)
        print(f"{'  bytes':<34} {len(content):>8}")
    print(
        f"targets {len(report.targets)}, providers {len(report.providers)}, pools {len(report.pools)}, "
        f"generated at {datetime.now(UTC).isoformat(timespec='seconds')}"
    )


if __name__ == "__main__":
    main()
