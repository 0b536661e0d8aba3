"""Bytes on disk per probe, both sides, after an hour-equivalent of data for N targets at 5 s.

How the hour is made, honestly and the same way on both sides: each product probes the N
targets for real for one minute; that real minute (its values, latencies, series and labels) is
then repeated 60 times, shifted by one minute each time, to make the hour.

- slamon raw: rows of ``probe_results`` (PostgreSQL ``pg_total_relation_size``: heap, TOAST and
  indexes, after VACUUM ANALYZE; SQLite: growth of the database file, WAL checkpointed).
- slamon minute rollups: the minute buckets of ``probe_rollups`` (slamon's own ``roll_up``),
  kept as long as raw rows by default (``probes.minute_retention``), so counted with them.
- slamon long-term (what stays after ``probes.raw_retention``): the hour buckets of
  ``probe_rollups`` + ``outages`` + ``observed_windows``.
- peer raw: growth of Prometheus' WAL directory while probing, per probe (measured live).
- peer long-term: the real minute's samples, every series blackbox_exporter and the scrape
  produce, tiled to an hour and compacted by ``promtool tsdb create-blocks-from openmetrics``;
  bytes of the block directory per probe.

    .venv/bin/python bench/storage.py --targets 1000
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import peer
import slamon_side
import sqlalchemy as sa
from measure import wait_for

HOUR_S = 3600
STORAGE_DB = "slamon_bench_h3_storage"
LONG_TERM_TABLES = ("probe_rollups", "outages", "observed_windows")


# --- the peer -------------------------------------------------------------------------------


def openmetrics_hour(series: list[dict[str, Any]], interval_s: float, base: float) -> Iterator[str]:
    """OpenMetrics lines for one hour: each real series' samples repeated cyclically at its own
    phase, from ``base`` (pure). Series of one metric name stay together."""
    per_hour = round(HOUR_S / interval_s)
    for s in sorted(series, key=lambda s: s["metric"]["__name__"]):
        values = [(float(t), v) for t, v in s["values"]]
        phase = values[0][0] % interval_s
        labels = ",".join(f'{k}="{v}"' for k, v in sorted(s["metric"].items()) if k != "__name__")
        name = s["metric"]["__name__"]
        for k in range(per_hour):
            value = values[k % len(values)][1]
            yield f"{name}{{{labels}}} {value} {base + phase + k * interval_s:.3f}\n"
    yield "# EOF\n"


def peer_storage(
    urls: list[str], interval_s: float, warmup_s: float, window_s: float
) -> dict[str, Any]:
    """WAL bytes per probe (live) and compacted block bytes per probe (tiled hour)."""
    with peer.Peer(urls, interval_s) as running:
        time.sleep(warmup_s)
        wal_before = peer.du(running.tsdb / "wal")
        time.sleep(window_s)
        end = time.time()
        wal_after = peer.du(running.tsdb / "wal")
        time.sleep(3)
        series = running.query(f'{{job="blackbox"}}[{window_s:g}s]', at=end)
    probes_live = sum(
        len(s["values"]) for s in series if s["metric"]["__name__"] == "probe_success"
    )
    folder = Path(tempfile.mkdtemp(prefix="slamon-peer-blocks-"))
    base = (int(time.time()) // 7200 - 24) * 7200  # a whole 2 h block, a day ago
    text = folder / "hour.om"
    with text.open("w") as out:
        out.writelines(openmetrics_hour(series, interval_s, base))
    subprocess.run(
        [
            "promtool",
            "tsdb",
            "create-blocks-from",
            "openmetrics",
            str(text),
            str(folder / "blocks"),
        ],
        check=True,
        capture_output=True,
    )
    blocks = peer.du(folder / "blocks")
    probes = len(urls) * round(HOUR_S / interval_s)
    samples = len(series) * round(HOUR_S / interval_s)
    shutil.rmtree(folder)
    return {
        "targets": len(urls),
        "wal_bytes_per_probe": round((wal_after - wal_before) / max(probes_live, 1), 1),
        "series_per_probe": round(len(series) / len(urls), 1),
        "compacted_bytes": blocks,
        "compacted_probes": probes,
        "compacted_bytes_per_probe": round(blocks / probes, 1),
        "compacted_bytes_per_sample": round(blocks / samples, 2),
    }


# --- slamon ---------------------------------------------------------------------------------


def record_real_minute(urls: list[str], interval_s: float, warmup_s: float) -> tuple[str, datetime]:
    """Run slamon on PostgreSQL + Redis over ``urls`` past warm-up plus one minute; the
    database URL and the start of the real minute."""
    backend = slamon_side.Backend("postgres", STORAGE_DB)
    config = slamon_side.config_text(urls, interval_s, peer.probe_timeout(interval_s))
    with slamon_side.SlamonRun(config, backend) as run:
        engine = run.engine()
        check = lambda: slamon_side.probed_targets(engine) >= len(urls)  # noqa: E731
        wait_for(check, 120 + warmup_s, "slamon first round", 1.0)
        time.sleep(warmup_s)
        start = datetime.now(UTC)
        time.sleep(60 + 5)
        engine.dispose()
    return run.database_url, start


TILE = """
DELETE FROM probe_results WHERE at < :start OR at >= :start + interval '1 minute';
DELETE FROM probe_rollups;
INSERT INTO probe_results (target_id, vantage, at, ok, usable, latency_ms, status_code,
                           error_kind, error, detail)
SELECT target_id, vantage, at + k * interval '1 minute', ok, usable, latency_ms, status_code,
       error_kind, error, detail
FROM probe_results, generate_series(1, 59) AS k;
DELETE FROM observed_windows w USING observed_windows o
    WHERE w.target_id = o.target_id AND w.id > o.id;
UPDATE observed_windows SET start = :start, "end" = :start + interval '1 hour';
"""


def tile_hour(engine: sa.Engine, start: datetime) -> int:
    """Keep the real minute, repeat it 59 times, one observed window per target spanning the
    hour (a healthy hour's worth); the number of raw rows (probes)."""
    with engine.begin() as c:
        for statement in filter(str.strip, TILE.split(";")):
            c.execute(sa.text(statement), {"start": start})
    vacuum(engine)
    with engine.connect() as c:
        return int(c.execute(sa.text("SELECT count(*) FROM probe_results")).scalar_one())


def vacuum(engine: sa.Engine, full: bool = False) -> None:
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as c:
        c.execute(sa.text("VACUUM FULL ANALYZE" if full else "VACUUM ANALYZE"))


def pg_tables(engine: sa.Engine, *tables: str) -> dict[str, dict[str, int]]:
    """Rows and total bytes (heap, TOAST, indexes, free-space maps) of each table."""
    found = {}
    with engine.connect() as c:
        for t in tables:
            rows = int(c.execute(sa.text(f"SELECT count(*) FROM {t}")).scalar_one())
            size = int(c.execute(sa.text(f"SELECT pg_total_relation_size('{t}')")).scalar_one())
            found[t] = {"rows": rows, "bytes": size}
    return found


def pg_bytes(engine: sa.Engine, *tables: str) -> int:
    with engine.connect() as c:
        return sum(
            int(c.execute(sa.text(f"SELECT pg_total_relation_size('{t}')")).scalar_one())
            for t in tables
        )


def roll_up_hour(sessions: Any, end: datetime) -> dict[str, int]:
    """Slamon's own rollup over the hour; rollup rows by resolution."""
    from monitor.probes.rollup import roll_up

    roll_up(sessions, end)
    with sessions() as session:
        rows = session.execute(
            sa.text("SELECT resolution, count(*) FROM probe_rollups GROUP BY resolution")
        )
        return {r: int(n) for r, n in rows}


def slamon_storage(urls: list[str], interval_s: float, warmup_s: float) -> dict[str, Any]:
    from monitor.db.engine import make_engine, make_sessionmaker

    url, start = record_real_minute(urls, interval_s, warmup_s)
    engine = make_engine(url)
    probes = tile_hour(engine, start)
    raw = pg_bytes(engine, "probe_results")
    rollups = roll_up_hour(make_sessionmaker(engine), start + timedelta(hours=1, minutes=3))
    vacuum(engine, full=True)
    with_minutes = pg_bytes(engine, *LONG_TERM_TABLES)
    tables = pg_tables(engine, *LONG_TERM_TABLES)
    with engine.begin() as c:  # what stays once the minute rollups expire with the raw rows
        c.execute(sa.text("DELETE FROM probe_rollups WHERE resolution = 'minute'"))
    vacuum(engine, full=True)
    long_term = pg_bytes(engine, *LONG_TERM_TABLES)
    sqlite = sqlite_storage(engine, start)
    engine.dispose()
    slamon_side.drop_postgres(STORAGE_DB)
    return {
        "targets": len(urls),
        "probes": probes,
        "postgres_raw_bytes_per_probe": round(raw / probes, 1),
        "postgres_minute_rollup_bytes_per_probe": round((with_minutes - long_term) / probes, 2),
        "postgres_long_term_bytes_per_probe": round(long_term / probes, 2),
        "rollup_rows": rollups,
        "long_term_tables": tables,
        **sqlite,
    }


def sqlite_storage(source: sa.Engine, start: datetime) -> dict[str, Any]:
    """The same hour of rows in a fresh SQLite database: file growth per probe, raw and rolled."""
    from monitor.db.engine import make_engine, make_sessionmaker
    from monitor.db.migrate import upgrade

    path = Path(tempfile.mkdtemp(prefix="slamon-storage-")) / "slamon.db"
    target = make_engine(f"sqlite:///{path}")
    upgrade(target)
    copy_tables(source, target, ("targets", "observed_windows", "outages"))
    empty = sqlite_size(target, path)
    probes = copy_tables(source, target, ("probe_results",))
    raw = sqlite_size(target, path) - empty
    roll_up_hour(make_sessionmaker(target), start + timedelta(hours=1, minutes=3))
    rolled = sqlite_size(target, path) - empty - raw
    with target.begin() as c:
        c.execute(sa.text("DELETE FROM probe_results"))
    target.dispose()
    shutil.rmtree(path.parent)
    return {
        "sqlite_raw_bytes_per_probe": round(raw / probes, 1),
        "sqlite_rollup_bytes_per_probe": round(rolled / probes, 2),
    }


def copy_tables(source: sa.Engine, target: sa.Engine, tables: tuple[str, ...]) -> int:
    """Copy whole tables in batches through slamon's own column types; rows copied."""
    from monitor.db.base import Base

    copied = 0
    with source.connect() as src, target.begin() as dst:
        for name in tables:
            table = Base.metadata.tables[name]
            result = src.execution_options(yield_per=20_000).execute(sa.select(table))
            for batch in result.mappings().partitions():
                dst.execute(table.insert(), [dict(row) for row in batch])
                copied += len(batch)
    return copied


def sqlite_size(engine: sa.Engine, path: Path) -> int:
    """The database file's size with its WAL folded in (outside any transaction)."""
    raw = engine.raw_connection()
    try:
        raw.cursor().execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        raw.close()
    return path.stat().st_size


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--targets", type=int, default=1000)
    parser.add_argument("--interval", type=float, default=5.0)
    parser.add_argument("--side", choices=["peer", "slamon", "both"], default="both")
    args = parser.parse_args()
    from compare import TargetsServer

    with TargetsServer(args.targets) as urls:
        if args.side in ("peer", "both"):
            print(json.dumps({"peer": peer_storage(urls, args.interval, 15, 60)}, indent=1))
        if args.side in ("slamon", "both"):
            print(json.dumps({"slamon": slamon_storage(urls, args.interval, 10)}, indent=1))


if __name__ == "__main__":
    main()
