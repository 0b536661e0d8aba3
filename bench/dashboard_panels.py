"""Time every Grafana panel's SQL on PostgreSQL at month scale: 1,000 targets with 30 days of
history, minute rollups for the default 14-day retention (20 M) and 1-minute raw probe rows for
30 days (43.2 M), run exactly as Grafana sends it (variables on
"All", macros expanded, ``$__interval`` as Grafana rounds it for a 1,000-pixel panel) as the
read-only ``slamon_grafana`` role.

    .venv/bin/python bench/dashboard_panels.py                # 1,000 targets, 30 days raw
    .venv/bin/python bench/dashboard_panels.py --raw-hours 48 # quicker setup, same panels
    .venv/bin/python bench/dashboard_panels.py --keep         # leave slamon_bench_dashboards
    .venv/bin/python bench/dashboard_panels.py --reuse        # time the kept one again

Each panel runs over the dashboard's default range and over the last 30 days; the figure is the
best of ``--repeat`` runs after a warm-up (a dashboard refresh finds the pages cached, as this
does). Prints every panel, then each dashboard's slowest against the 1 s goal. Not run by CI.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import sqlalchemy as sa

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from slamon_side import drop_postgres, fresh_postgres

from dashboards.fleet_history import RAW_INDEXES, FleetShape, fill_fleet, fill_raw
from dashboards.grafana_vars import ALL, Selection, TimeRange, dashboard_start, expand, time_range
from monitor.db.engine import make_engine
from monitor.db.migrate import upgrade

GOAL_S = 1.0
GRAFANA_ROLE = "slamon_grafana"


@dataclass(frozen=True, slots=True)
class PanelTime:
    dashboard: str
    panel: str
    range_label: str
    seconds: float
    rows: int


def load_dashboards() -> dict[str, dict[str, Any]]:
    return {
        path.stem: json.loads(path.read_text())
        for path in sorted((ROOT / "dashboards").glob("*.json"))
    }


def as_grafana(connection: sa.Connection, sql: str) -> list[Any]:
    """``connection`` is logged in as slamon_grafana, so the role's own settings (its work_mem,
    migration 0006) apply as they do for Grafana; SET ROLE would not apply them."""
    with connection.begin():
        return connection.execute(sa.text(sql)).all()


def selections(
    connection: sa.Connection, dashboard: dict[str, Any], window: TimeRange
) -> dict[str, Selection]:
    """Each variable's query run in order, "All" selected, as Grafana does on load."""
    chosen: dict[str, Selection] = {}
    for variable in dashboard["templating"]["list"]:
        rows = as_grafana(connection, expand(variable["query"], chosen, window))
        chosen[variable["name"]] = Selection(variable, [str(r[0]) for r in rows], [ALL])
    return chosen


def time_panels(
    connection: sa.Connection, name: str, dashboard: dict[str, Any], now: datetime, repeat: int
) -> list[PanelTime]:
    label = dashboard["time"]["from"]
    ranges = {
        label: time_range(dashboard_start(label, now), now),
        "now-30d": time_range(now - timedelta(days=30), now),
    }
    timings = []
    for range_label, window in ranges.items():
        chosen = selections(connection, dashboard, window)
        for panel in dashboard["panels"]:
            points = panel.get("maxDataPoints")  # a panel's own cap widens its $__interval
            panel_window = time_range(window.start, window.end, points) if points else window
            sql = expand(panel["targets"][0]["rawSql"], chosen, panel_window)
            rows = len(as_grafana(connection, sql))  # warm-up
            best = min(timed(connection, sql) for _ in range(repeat))
            timings.append(PanelTime(name, panel["title"], range_label, best, rows))
            print(f"  {name:<16} {range_label:<8} {best * 1000:9.1f} ms {rows:>7} rows  "
                  f"{panel['title']}", flush=True)  # fmt: skip
    return timings


def timed(connection: sa.Connection, sql: str) -> float:
    began = time.perf_counter()
    as_grafana(connection, sql)
    return time.perf_counter() - began


def bulk_raw(engine: sa.Engine, shape: FleetShape) -> None:
    """Raw rows with the secondary indexes dropped during the load and rebuilt after, as
    bench/report_month.py does: hours instead of a morning."""
    with engine.connect() as c:
        definitions = [
            c.execute(
                sa.text("SELECT indexdef FROM pg_indexes WHERE indexname = :name"), {"name": n}
            ).scalar_one()
            for n in RAW_INDEXES
        ]
        c.execute(sa.text("SET session_replication_role = replica"))
        for index in RAW_INDEXES:
            c.execute(sa.text(f"DROP INDEX {index}"))
        c.commit()
        fill_raw(c, shape, print)
        c.commit()
        began = time.perf_counter()
        for definition in definitions:
            c.execute(sa.text(definition))
        c.execute(sa.text("RESET session_replication_role"))
        c.commit()
        print(f"  raw indexes rebuilt in {time.perf_counter() - began:6.1f} s", flush=True)


def report(timings: list[PanelTime]) -> None:
    print("\nslowest panel per dashboard (best of runs, as slamon_grafana):")
    print(f"| dashboard | slowest panel | range | ms | rows | goal < {GOAL_S * 1000:.0f} ms |")
    print("|---|---|---|---|---|---|")
    for name in sorted({t.dashboard for t in timings}):
        worst = max((t for t in timings if t.dashboard == name), key=lambda t: t.seconds)
        verdict = "met" if worst.seconds < GOAL_S else "NOT met"
        print(f"| {name} | {worst.panel} | {worst.range_label} | {worst.seconds * 1000:.0f} | "
              f"{worst.rows} | {verdict} |")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--targets", type=int, default=1000)
    parser.add_argument("--raw-hours", type=int, default=30 * 24)
    parser.add_argument("--minute-hours", type=int, default=14 * 24, help="default retention")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--database", default="slamon_bench_dashboards")
    parser.add_argument("--keep", action="store_true", help="keep the database afterwards")
    parser.add_argument("--reuse", action="store_true", help="time a kept database, no fill")
    args = parser.parse_args()

    now = datetime.now(UTC).replace(second=0, microsecond=0)
    if args.reuse:
        engine = make_engine(f"postgresql+psycopg://postgres@127.0.0.1:5432/{args.database}")
    else:
        engine = make_engine(fresh_postgres(args.database))
        upgrade(engine)
        shape = FleetShape(
            targets=args.targets, now=now, minute_hours=args.minute_hours, raw_hours=args.raw_hours
        )
        began = time.perf_counter()
        print(
            f"filling {args.targets} targets, 30 days: hour rollups, {args.minute_hours} h of "
            f"minute rollups, {args.raw_hours} h of raw rows"
        )
        with engine.begin() as connection:
            fill_fleet(connection, shape, print)
        bulk_raw(engine, shape)
        with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as c:
            c.execute(sa.text("VACUUM ANALYZE"))
        print(f"filled in {time.perf_counter() - began:.0f} s", flush=True)
    grafana = make_engine(
        engine.url.set(username=GRAFANA_ROLE, password=None).render_as_string(hide_password=False)
    )
    try:
        with grafana.connect() as connection:
            count = connection.execute(sa.text("SELECT count(*) FROM probe_results")).scalar_one()
            print(f"probe_results: {count:,} rows; timing panels", flush=True)
            if args.reuse:  # the kept database's history ends when it was filled
                now = connection.execute(sa.text("SELECT max(at) FROM probe_results")).scalar_one()
            connection.commit()
            timings = [
                t
                for name, dashboard in load_dashboards().items()
                for t in time_panels(connection, name, dashboard, now, args.repeat)
            ]
        report(timings)
    finally:
        grafana.dispose()
        engine.dispose()
        if not args.keep and not args.reuse:
            drop_postgres(args.database)


if __name__ == "__main__":
    main()
