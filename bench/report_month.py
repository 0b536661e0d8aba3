"""Time the monthly SLA report for N targets with a month of 1-minute probe history on PostgreSQL,
beside a plain ``SELECT count(*)`` over the same raw rows (the floor any report over raw data
would pay). The report itself reads outage intervals and observed windows, not raw rows.

    .venv/bin/python bench/report_month.py --targets 1000 --month 2026-10
    .venv/bin/python bench/report_month.py --raw-targets 300   # raw rows for 300, floor scaled
    .venv/bin/python bench/report_month.py --no-raw            # skip the raw rows (fast setup)

The raw rows (1,000 targets × 44,640 minutes = 44.6 M) are bulk-loaded one day per statement
with foreign-key triggers off (``session_replication_role = replica``) and the two secondary
indexes dropped during the load and rebuilt after, with progress on stdout. With
``--raw-targets M`` (< N) only M targets get raw rows and the count(*) floor is scaled by N/M
(count(*) is a sequential scan: linear in rows). Writes into a fresh database (default
slamon_bench on 127.0.0.1), dropped at the end unless ``--keep``. Not run by CI.
"""

from __future__ import annotations

import argparse
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import sqlalchemy as sa

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from slamon_side import drop_postgres, fresh_postgres

from monitor.config import parse_config
from monitor.db.engine import make_engine, make_sessionmaker
from monitor.db.migrate import upgrade
from monitor.reports.service import build_monthly, render
from monitor.sla.months import month_bounds

RAW_INDEXES = ("ix_probe_results_at", "ix_probe_results_target_at")  # rebuilt as they were


HISTORY = [
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

RAW_DAY = """INSERT INTO probe_results (target_id, vantage, at, ok, latency_ms)
   SELECT t.id, 'bench', m, (t.id + extract(epoch from m)::bigint / 60) % 997 <> 0, 1.5
   FROM (SELECT id FROM targets ORDER BY id LIMIT :raw_targets) AS t,
        generate_series(:day, :day + interval '1 day' - interval '1 minute', interval '1 minute') AS m
   WHERE m < :end"""


def fill_history(engine: sa.Engine, targets: int, month: str) -> None:
    start, end = month_bounds(month)
    params = {"start": start, "end": end, "created": start - timedelta(days=30), "n": targets}
    with engine.begin() as connection:
        for sql in HISTORY:
            began = time.perf_counter()
            connection.execute(sa.text(sql), params)
            print(f"  filled in {time.perf_counter() - began:6.1f} s: {sql.split()[2]}", flush=True)


def fill_raw(engine: sa.Engine, raw_targets: int, month: str) -> int:
    """Bulk-load a month of 1-minute raw rows for the first ``raw_targets`` targets, one day per
    statement; rows loaded."""
    start, end = month_bounds(month)
    began, day, rows = time.perf_counter(), start, 0
    with engine.connect() as c:
        c.execute(sa.text("SET session_replication_role = replica"))  # no FK trigger per row
        c.execute(sa.text("ALTER TABLE probe_results SET (autovacuum_enabled = false)"))
        definitions = [
            c.execute(
                sa.text("SELECT indexdef FROM pg_indexes WHERE indexname = :name"), {"name": name}
            ).scalar_one()
            for name in RAW_INDEXES
        ]
        for index in RAW_INDEXES:
            c.execute(sa.text(f"DROP INDEX {index}"))
        c.commit()
        while day < end:
            params = {"day": day, "end": end, "raw_targets": raw_targets}
            rows += c.execute(sa.text(RAW_DAY), params).rowcount
            c.commit()
            day += timedelta(days=1)
            print(
                f"  raw rows {rows:>11,} up to {day:%Y-%m-%d}  {time.perf_counter() - began:6.1f} s",
                flush=True,
            )
        for sql in definitions:
            c.execute(sa.text(sql))
            c.commit()
        c.execute(sa.text("ALTER TABLE probe_results RESET (autovacuum_enabled)"))
        c.execute(sa.text("RESET session_replication_role"))
        c.commit()
    print(f"  raw rows and indexes in {time.perf_counter() - began:6.1f} s", flush=True)
    return rows


def timed(label: str, action):  # type: ignore[no-untyped-def]
    began = time.perf_counter()
    result = action()
    elapsed = time.perf_counter() - began
    print(f"{label:<34} {elapsed:8.3f} s", flush=True)
    return result, elapsed


def run(
    targets: int, month: str, database: str, raw_targets: int | None, keep: bool = False
) -> dict[str, Any]:
    """Fill, then time count(*) over the raw rows and the monthly report; figures as a dict."""
    raw_targets = targets if raw_targets is None else min(raw_targets, targets)
    engine = make_engine(fresh_postgres(database))
    try:
        upgrade(engine)
        print(f"filling {targets} targets, month {month} of 1-minute history", flush=True)
        fill_history(engine, targets, month)
        rows = fill_raw(engine, raw_targets, month) if raw_targets else 0
        with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as c:
            c.execute(sa.text("VACUUM ANALYZE"))
        return {"targets": targets, "raw_targets": raw_targets, "raw_rows": rows} | time_report(
            engine, targets, raw_targets, month
        )
    finally:
        engine.dispose()
        if not keep:
            drop_postgres(database)


def time_report(engine: sa.Engine, targets: int, raw_targets: int, month: str) -> dict[str, Any]:
    with engine.connect() as connection:

        def count() -> int:
            return int(
                connection.execute(sa.text("SELECT count(*) FROM probe_results")).scalar_one()
            )

        timed("floor: SELECT count(*) (warm-up)", count)
        raw, floor_s = timed("floor: SELECT count(*) raw rows", count)
    print(f"{'raw probe rows':<34} {raw:>8}")
    scale = targets / raw_targets if raw_targets else 0.0
    sessions = make_sessionmaker(engine)
    now = month_bounds(month)[1] + timedelta(days=3)
    config = parse_config("")
    with sessions() as session:
        report, report_s = timed(
            "report: gather + assemble", lambda: build_monthly(session, month, now, config)
        )
    renders = {}
    for fmt in ("json", "csv", "html", "pdf"):
        content, renders[fmt] = timed(f"render {fmt}", lambda fmt=fmt: render(report, fmt).content)
        print(f"{'  bytes':<34} {len(content):>8}")
    print(
        f"targets {len(report.targets)}, providers {len(report.providers)}, pools {len(report.pools)}, "
        f"generated at {datetime.now(UTC).isoformat(timespec='seconds')}"
    )
    return {
        "count_star_s": round(floor_s, 3),
        "count_star_s_at_targets": round(floor_s * scale, 3),
        "report_s": round(report_s, 3),
        "render_s": {fmt: round(s, 3) for fmt, s in renders.items()},
        "report_with_json_s": round(report_s + renders["json"], 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--targets", type=int, default=1000)
    parser.add_argument("--raw-targets", type=int, default=None, help="default: --targets")
    parser.add_argument("--month", default="2026-10")
    parser.add_argument("--database", default="slamon_bench")
    parser.add_argument("--no-raw", action="store_true", help="do not generate raw probe rows")
    parser.add_argument("--keep", action="store_true", help="keep the database afterwards")
    args = parser.parse_args()
    raw_targets = 0 if args.no_raw else args.raw_targets
    print(run(args.targets, args.month, args.database, raw_targets, args.keep))


if __name__ == "__main__":
    main()
