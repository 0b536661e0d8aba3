"""Benchmarks at the ages users live at: slamon and the peer (Prometheus + blackbox_exporter)
measured on a database, and a TSDB, that hold what a day, a week or the full raw retention of
probing N targets every I seconds leaves behind, not on one minutes old.

    .venv/bin/python bench/ages.py --backend sqlite --targets 1000 --interval 5 \\
        --age fresh,1d,7d,14d --window 300 --runs 3
    .venv/bin/python bench/ages.py --backend postgres --targets 1000 --age 14d --prune-check
    .venv/bin/python bench/ages.py --targets 20 --interval 30 --age 1d --window 30 --runs 1  # smoke

For each age (``fresh``, ``1d``, ``7d``, ``14d``, or any ``Nd``/``Nh``):

1. slamon's database is seeded (bench/ages_seed.py): raw probe rows within retention, minute and
   hour rollups by slamon's own rollup, outages, observed windows, alerts and deliveries, at
   ``--failure-rate``; PostgreSQL ``<--pg-database>_<age>`` or ``<--work>/sqlite-<age>/slamon.db``.
   With ``--pattern 1d`` one day is seeded probe by probe and its rollups and evidence repeated
   over the rest of the age (``ages_seed.Replay``).
2. The peer's TSDB of the same age is built (bench/ages_peer.py, ``<--work>/peer-<age>``, one
   for both backends with ``--keep`` then ``--reuse``) from a real capture of the peer probing
   the same targets, with ``promtool tsdb create-blocks-from openmetrics`` (``--peer-jobs`` at
   once), and compacted by Prometheus; in a process of its own, while step 1 runs.
3. ``--runs`` times, one after the other: the peer (Prometheus on that TSDB, scraping
   blackbox_exporter for the N targets as bench/peer.py does), then slamon (``slamon run`` on
   SQLite; ``slamon worker`` + ``slamon beat`` + ``slamon api`` on PostgreSQL and Redis) on the
   seeded database, each for ``--warmup`` then a measured ``--window``. Before the first run the
   rows the seeding's own time pushed past retention are pruned by slamon's own pruning code
   in-process (timed, printed), so the window sees the steady state, not a backlog.
4. With ``--prune-check`` (at the last age): slamon runs with ``probes.raw_retention`` and
   ``minute_retention`` set ``--prune-span`` (default 1d) shorter than the age, so its first
   prune (``schedule.retention`` 1 min: due as slamon starts) deletes the oldest span while
   probe rounds run: how long the pruning took (the oldest minute rollup watched every 0.5 s)
   and the slots missed or late during it, counted as bench/soak.py counts them, beside a
   window of the same length after it.

Figures (each the median of the runs; every run's in the JSON): CPU ms per probe (CPU of the
whole process tree, /proc utime+stime, over the probes stored in the window; on PostgreSQL also
with the database backends and the shared redis-server), RSS of the whole tree (summed VmRSS,
sampled every 5 s: at the window's start and end, and the least-squares slope in MiB an hour),
disk (SQLite file + -wal + -shm; PostgreSQL pg_database_size, the cluster's pg_wal printed
in the JSON; the peer's TSDB directory: blocks, WAL, head chunks) at the window's start and
end, and the bytes each probe added. The table gives slamon | peer | ratio and the issue's goals.

Targets are nginx (``--targets-server``, as bench/compare.py) on ``--base-port``…; the peer uses
bench/peer.py's ports (19490, 19415), slamon's API ``--api-port``. Everything seeded lives in
``--work`` (default /tmp/slamon-ages) and is removed after each age unless ``--keep``;
``--reuse`` takes a seeded age from ``--work`` when it was seeded with the same parameters.
Seeding a day of 1,000 targets every 5 s took 12 minutes on SQLite and the peer's TSDB of a
day 11.5 minutes on 2 cores (14 days: hours each); bench/README.md has the costs and what
each figure means. Not run by CI.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import ages_peer
import ages_seed
import peer
import slamon_side
import sqlalchemy as sa
import targets_server
from measure import (
    Meter,
    cmdline_matches,
    count_window,
    fixed,
    named,
    per_probe,
    rss_kib,
    tree,
    wait_for,
)
from probe_tape import ProbeTape, window_start

from monitor.db.engine import make_engine, make_sessionmaker

RSS_PERIOD_S = 5.0
SETTLE_S = 3.0  # results land a little after their probe time
PRUNE_POLL_S = 0.5  # how often the prune check reads the oldest minute rollup
PRUNE_SLOT_S = 60.0  # the prune check's schedule.retention
GOALS = {
    "cpu_vs_peer": 0.5,  # CPU per probe at most half the peer's
    "cpu_vs_fresh": 1.15,  # and within 15 % of the fresh figure
    "rss_mib": 150.0,  # the whole tree
    "disk_vs_peer": 1.0,
}


def say(text: str) -> None:
    print(f"[{datetime.now(UTC):%H:%M:%S}] {text}", flush=True)


# --------------------------------------------------------------------------- figures (pure)


def median(values: Iterable[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return statistics.median(known) if known else None


def slope_per_hour(samples: list[tuple[float, float]]) -> float | None:
    """Least-squares slope of ``(seconds, value)`` samples, per hour; None under 3 samples."""
    if len(samples) < 3:
        return None
    n = len(samples)
    mean_t = sum(t for t, _ in samples) / n
    mean_v = sum(v for _, v in samples) / n
    spread = sum((t - mean_t) ** 2 for t, _ in samples)
    if spread == 0:
        return None
    return sum((t - mean_t) * (v - mean_v) for t, v in samples) / spread * 3600


def ratio(a: float | None, b: float | None) -> float | None:
    return None if a is None or not b else a / b


def fmt(value: float | None, digits: int = 2) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


@dataclass(frozen=True, slots=True)
class Line:
    """One row of the table: a figure for slamon and the peer, and the goal on it."""

    metric: str
    slamon: float | None
    peer: float | None = None
    digits: int = 2
    goal: str = ""
    met: bool | None = None

    def cells(self) -> list[str]:
        r = ratio(self.slamon, self.peer)
        met = "" if self.met is None else ("yes" if self.met else "NO")
        return [self.metric, fmt(self.slamon, self.digits), fmt(self.peer, self.digits),
                fmt(r, 2), self.goal, met]  # fmt: skip


def render(lines: list[Line]) -> str:
    head = ["metric", "slamon", "peer", "s/p", "goal", "met?"]
    rows = [head, *[line.cells() for line in lines]]
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    out = []
    for n, row in enumerate(rows):
        out.append(
            " | ".join(
                c.ljust(w) if i == 0 else c.rjust(w)
                for i, (c, w) in enumerate(zip(row, widths, strict=True))
            )
        )
        if n == 0:
            out.append("-|-".join("-" * w for w in widths))
    return "\n".join(out)


def age_lines(age: str, runs: list[dict[str, Any]], fresh_cpu: float | None) -> list[Line]:
    """The table of one age from its runs (medians)."""

    def m(side: str, *path: str) -> float | None:
        values = []
        for run in runs:
            value: Any = run[side]
            for key in path:
                value = value.get(key) if isinstance(value, dict) else None
            values.append(value)
        return median(values)

    cpu, cpu_peer = m("slamon", "cpu_ms_per_probe"), m("peer", "cpu_ms_per_probe")
    rss_end = m("slamon", "rss_mib", "end")
    slope = m("slamon", "rss_mib", "slope_per_hour")
    disk, disk_peer = m("slamon", "disk", "end", "total"), m("peer", "disk", "end", "total")
    vs_fresh = ratio(cpu, fresh_cpu)
    return [
        Line("CPU ms / probe", cpu, cpu_peer, 3, "<= 0.5x peer",
             None if cpu is None or cpu_peer is None else cpu <= GOALS["cpu_vs_peer"] * cpu_peer),
        Line("  vs fresh", vs_fresh, None, 2, "<= 1.15",
             None if vs_fresh is None or age == "fresh" else vs_fresh <= GOALS["cpu_vs_fresh"]),
        Line("  with db servers (pg)", m("slamon", "cpu_ms_per_probe_with_servers"), cpu_peer, 3),
        Line("RSS MiB, window start", m("slamon", "rss_mib", "start"), m("peer", "rss_mib", "start"), 1),
        Line("RSS MiB, window end", rss_end, m("peer", "rss_mib", "end"), 1, "<= 150",
             None if rss_end is None else rss_end <= GOALS["rss_mib"]),
        Line("RSS slope MiB/h", slope, m("peer", "rss_mib", "slope_per_hour"), 1, "flat"),
        Line("RSS MiB, peak", m("slamon", "rss_mib", "peak"), m("peer", "rss_mib", "peak"), 1),
        Line("disk MB (db+WAL | TSDB)", _mb(disk), _mb(disk_peer), 1, "<= 1x peer",
             None if disk is None or disk_peer is None else disk <= GOALS["disk_vs_peer"] * disk_peer),
        Line("disk bytes added / probe", m("slamon", "disk", "bytes_per_probe"),
             m("peer", "disk", "bytes_per_probe"), 1),
        Line("probes in window", m("slamon", "executed"), m("peer", "executed"), 0),
        Line("missed", m("slamon", "missed"), m("peer", "missed"), 0),
        Line("late (gap > 1.5 i)", m("slamon", "late"), m("peer", "late"), 0),
    ]  # fmt: skip


def _mb(value: float | None) -> float | None:
    return None if value is None else value / 1e6


# --------------------------------------------------------------------------- measuring


class RssTrace:
    """Summed VmRSS of the processes ``select`` names, every ``period`` seconds, in a thread."""

    def __init__(self, select: Callable[[], Iterable[int]], period: float = RSS_PERIOD_S) -> None:
        self.select, self.period = select, period
        self.samples: list[tuple[float, float]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._began = 0.0

    def start(self) -> None:
        self._began = time.monotonic()
        self._sample()
        self._thread.start()

    def stop(self) -> dict[str, float | None]:
        self._stop.set()
        self._thread.join()
        self._sample()
        values = [v for _, v in self.samples]
        return {
            "start": round(values[0], 1),
            "end": round(values[-1], 1),
            "peak": round(max(values), 1),
            "slope_per_hour": _round(slope_per_hour(self.samples), 1),
            "samples": len(values),
        }

    def _run(self) -> None:
        while not self._stop.wait(self.period):
            self._sample()

    def _sample(self) -> None:
        kib = sum(rss_kib(pid) for pid in self.select())
        self.samples.append((time.monotonic() - self._began, kib / 1024))


def _round(value: float | None, digits: int) -> float | None:
    return None if value is None else round(value, digits)


def union(*selectors: Callable[[], Iterable[int]]) -> Callable[[], list[int]]:
    return lambda: sorted({pid for select in selectors for pid in select()})


@dataclass
class Slamon:
    """slamon as a user runs it on ``backend``: ``slamon run`` (SQLite), or ``slamon worker``,
    ``slamon beat`` and ``slamon api`` (PostgreSQL + Redis; with ``layout`` ``single``, ``slamon
    worker --beat --api``, all three in one process), over an existing database."""

    backend: str
    database_url: str
    config: Path
    folder: Path
    api_port: int
    redis_url: str
    vantage: str
    layout: str = "services"
    processes: list[subprocess.Popen[bytes]] = field(default_factory=list)

    def __enter__(self) -> Slamon:
        state = self.folder / "state"
        shutil.rmtree(state, ignore_errors=True)  # no shards left queued by an earlier run
        state.mkdir(parents=True)
        env = slamon_side.slamon_environment() | {
            "SLAMON_DATABASE_URL": self.database_url,
            "SLAMON_CONFIG": str(self.config),
            "SLAMON_STATE_DIR": str(state),
            "SLAMON_VANTAGE": self.vantage,
        }
        bin_ = str(slamon_side.SLAMON_BIN)
        if self.backend == "sqlite":
            commands = [[bin_, "run", "--port", str(self.api_port)]]
        else:
            slamon_side.flush_redis(self.redis_url)
            env["SLAMON_BROKER_URL"] = self.redis_url
            commands = [
                [bin_, "worker"],
                [bin_, "beat"],
                [bin_, "api", "--port", str(self.api_port)],
            ]
            if self.layout == "single":
                commands = [[bin_, "worker", "--beat", "--api", f"127.0.0.1:{self.api_port}"]]
        log = (self.folder / "slamon.log").open("ab")
        for argv in commands:
            self.processes.append(
                subprocess.Popen(
                    argv, cwd=self.folder, env=env, stdout=log, stderr=subprocess.STDOUT
                )
            )
        return self

    def __exit__(self, *_exc: object) -> None:
        for process in self.processes:
            if process.poll() is None:
                process.send_signal(signal.SIGINT if self.backend == "sqlite" else signal.SIGTERM)
        for process in self.processes:
            try:
                process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()

    def select(self) -> Callable[[], list[int]]:
        return union(*(tree(p.pid) for p in self.processes))

    def check_alive(self) -> None:
        for process in self.processes:
            if process.poll() is not None:
                raise SystemExit(
                    f"slamon exited ({process.args}); see {self.folder / 'slamon.log'}"
                )


class AgedPeer(peer.Peer):
    """bench/peer.py's peer on a TSDB of an age: its folder is kept when it stops."""

    def __exit__(self, exc_type: object, *_exc: object) -> None:
        self.stop()


@dataclass
class Age:
    """One age's seeded places and parameters."""

    label: str
    shape: ages_seed.Shape
    folder: Path
    database_url: str
    config: Path
    tsdb: Path
    seeded: dict[str, Any] = field(default_factory=dict)


def slamon_disk(url: str) -> dict[str, int]:
    """Bytes of slamon's database now: SQLite's file, its -wal and -shm (in ``total``);
    PostgreSQL's pg_database_size (``total``) and the cluster's pg_wal (shared, apart)."""
    if url.startswith("sqlite"):
        path = Path(sa.make_url(url).database or "")
        size = path.stat().st_size if path.exists() else 0
        wal = sum(
            Path(f"{path}{s}").stat().st_size
            for s in ("-wal", "-shm")
            if Path(f"{path}{s}").exists()
        )
        return {"database": size, "wal": wal, "total": size + wal}
    engine = sa.create_engine(url)
    with engine.connect() as c:
        size = int(c.execute(sa.text("SELECT pg_database_size(current_database())")).scalar_one())
        wal = int(
            c.execute(sa.text("SELECT coalesce(sum(size), 0) FROM pg_ls_waldir()")).scalar_one()
        )
    engine.dispose()
    return {"database": size, "wal_cluster": wal, "total": size}


def table_bytes(url: str) -> dict[str, int]:
    """Bytes of each slamon table with its indexes (SQLite's dbstat; PostgreSQL's
    pg_total_relation_size)."""
    engine = make_engine(url)
    found: dict[str, int] = {}
    with engine.connect() as c:
        if url.startswith("sqlite"):
            owner = dict(c.execute(sa.text("SELECT name, tbl_name FROM sqlite_master")).all())  # type: ignore[arg-type]
            for name, size in c.execute(
                sa.text("SELECT name, sum(pgsize) FROM dbstat GROUP BY name")
            ):
                table = owner.get(name, name)
                found[table] = found.get(table, 0) + int(size)
        else:
            rows = c.execute(
                sa.text(
                    "SELECT relname, pg_total_relation_size(oid) FROM pg_class "
                    "WHERE relkind = 'r' AND relnamespace = 'public'::regnamespace"
                )
            )
            found = {name: int(size) for name, size in rows}
    engine.dispose()
    return dict(sorted(found.items(), key=lambda kv: -kv[1]))


def first_round_done(engine: sa.Engine, since: datetime, targets: int) -> bool:
    query = sa.text("SELECT count(DISTINCT target_id) FROM probe_results WHERE at >= :since")
    with engine.connect() as c:
        return int(c.execute(query, {"since": since}).scalar_one()) >= targets


def measure_slamon(
    age: Age, args: argparse.Namespace, config: Path | None = None
) -> dict[str, Any]:
    engine = make_engine(age.database_url)
    interval = age.shape.interval_s
    with Slamon(
        args.backend, age.database_url, config or age.config, age.folder, args.api_port,
        args.redis_url, age.shape.vantage, args.layout,
    ) as running:  # fmt: skip
        started = datetime.now(UTC)
        wait_for(lambda: first_round_done(engine, started, age.shape.targets), 180 + args.warmup,
                 "slamon's first round", 1.0)  # fmt: skip
        time.sleep(args.warmup)
        running.check_alive()
        groups = {"slamon": running.select()}
        if args.backend == "postgres":
            database = sa.make_url(age.database_url).database
            groups["postgres_backends"] = cmdline_matches("postgres:", f" {database} ")
            groups["redis_server_shared"] = named("redis-server")
        meter, trace = Meter(groups), RssTrace(running.select())
        disk_before, start = slamon_disk(age.database_url), datetime.now(UTC)
        tape = ProbeTape(engine, window_start(start, interval))  # read before compaction
        tape.start()
        meter.start()
        trace.start()
        time.sleep(args.window)
        readings, rss, end = meter.stop(), trace.stop(), datetime.now(UTC)
        disk_after = slamon_disk(age.database_url)
        running.check_alive()
        time.sleep(SETTLE_S)
        tape.stop()
        times = tape.times(window_start(start, interval), end)
    engine.dispose()
    executed, late = count_window(times, start.timestamp(), end.timestamp(), interval)
    window = (end - start).total_seconds()
    expected = round(age.shape.targets * window / interval)
    cpu = {name: r.cpu_s for name, r in readings.items()}
    return {
        "window_s": round(window, 1),
        "expected": expected,
        "executed": executed,
        "missed": max(0, expected - executed),
        "late": late,
        "cpu_s": {k: round(v, 2) for k, v in cpu.items()},
        "cpu_ms_per_probe": per_probe(cpu["slamon"] * 1000, executed, 3),
        "cpu_ms_per_probe_with_servers": per_probe(sum(cpu.values()) * 1000, executed, 3)
        if args.backend == "postgres"
        else None,
        "cpu_ms_per_probe_by_process": {
            k: per_probe(v * 1000, executed, 3)
            for k, v in readings["slamon"].cpu_s_by_process.items()
        },
        "rss_mib": rss,
        "rss_mib_by_process": readings["slamon"].peak_rss_mib_by_process,
        "disk": _disk(disk_before, disk_after, executed),
    }


def measure_peer(age: Age, urls: list[str], args: argparse.Namespace) -> dict[str, Any]:
    interval = age.shape.interval_s
    with AgedPeer(urls, interval, folder=age.tsdb.parent) as running:
        wait_for(
            lambda: _peer_scraped(running, len(urls)),
            60 + args.warmup,
            "the peer's first scrapes",
            1.0,
        )
        time.sleep(args.warmup)
        select = fixed(*running.pids("prometheus", "blackbox"))
        meter = Meter({"peer": select})
        trace = RssTrace(select)
        disk_before, start = ages_peer.footprint(age.tsdb), time.time()
        meter.start()
        trace.start()
        time.sleep(args.window)
        readings, rss, end = meter.stop(), trace.stop(), time.time()
        disk_after = ages_peer.footprint(age.tsdb)
        time.sleep(min(SETTLE_S, interval))
        times = peer.sample_times(running, end + interval, args.window + 3 * interval)
    executed, late = count_window(times, start, end, interval)
    expected = round(len(urls) * (end - start) / interval)
    return {
        "window_s": round(end - start, 1),
        "expected": expected,
        "executed": executed,
        "missed": max(0, expected - executed),
        "late": late,
        "cpu_s": {k: round(v, 2) for k, v in readings["peer"].cpu_s_by_process.items()},
        "cpu_ms_per_probe": per_probe(readings["peer"].cpu_s * 1000, executed, 3),
        "rss_mib": rss,
        "disk": _disk(disk_before, disk_after, executed),
    }


def _peer_scraped(running: peer.Peer, targets: int) -> bool:
    found = running.query('count(up{job="blackbox"} == 1)')
    return bool(found) and float(found[0]["value"][1]) >= targets


def _disk(before: dict[str, int], after: dict[str, int], probes: int) -> dict[str, Any]:
    return {
        "start": before,
        "end": after,
        "bytes_per_probe": per_probe(after["total"] - before["total"], probes, 1),
    }


def catch_up(age: Age, retention: timedelta | None = None) -> dict[str, Any]:
    """Roll up and prune as slamon's rollup and prune tasks would have while the benchmark
    was seeding (slamon's own functions, in-process): the window then sees the steady state."""
    from monitor.db.changes import prune_changes
    from monitor.probes.rollup import prune_minutes, prune_raw, roll_up

    engine = make_engine(age.database_url)
    sessions = make_sessionmaker(engine)
    keep = retention or timedelta(seconds=parse_retention(age.config))
    began, now = time.perf_counter(), datetime.now(UTC)
    roll_up(sessions, now)
    raw = prune_raw(sessions, now, keep)
    minutes = prune_minutes(sessions, now, keep)
    with sessions.begin() as session:
        prune_changes(session)
    engine.dispose()
    return {
        "raw_rows": raw,
        "minute_rows": minutes,
        "seconds": round(time.perf_counter() - began, 2),
    }


def parse_retention(config: Path) -> float:
    from monitor.config import parse_config

    return parse_config(config.read_text()).probes.raw_retention


# --------------------------------------------------------------------------- pruning check


def prune_check(age: Age, args: argparse.Namespace) -> dict[str, Any]:
    """Run slamon with a retention ``--prune-span`` shorter than the age: its first prune
    deletes the oldest span while probes run. How long the pruning took (from the last moment
    the oldest minute rollup was still there to the first the span was gone: task_stats are
    flushed now and then, so their last run need not be the one that pruned) and the slots
    missed and late during it, beside a window of the same length after it."""
    span = ages_seed.parse_age(args.prune_span)
    keep = age.shape.age - span
    if keep <= timedelta(0):
        raise SystemExit(f"--prune-span {args.prune_span} is not shorter than the age {age.label}")
    config = json.loads(age.config.read_text())
    config["probes"] |= {
        "raw_retention": keep.total_seconds(),
        "minute_retention": keep.total_seconds(),
    }
    # the runs before sent this hour's prune slot, and a slot is sent once (whoever leads):
    # a slot a minute long is due as slamon starts; the first prune deletes the span
    config["schedule"] = config.get("schedule", {}) | {"retention": PRUNE_SLOT_S}
    pruning_config = age.folder / "slamon-prune.yaml"
    pruning_config.write_text(json.dumps(config, indent=1))
    engine = make_engine(age.database_url)
    first_target = _first_target(engine)
    oldest_before = _oldest(engine, first_target)
    interval = age.shape.interval_s
    say(
        f"prune check: retention {keep} (the oldest {args.prune_span} goes), oldest minute rollup {oldest_before:%Y-%m-%d %H:%M:%S}"
    )
    due = _rows_before(engine, datetime.now(UTC) - keep)
    with Slamon(args.backend, age.database_url, pruning_config, age.folder, args.api_port,
                args.redis_url, age.shape.vantage, args.layout) as running:  # fmt: skip
        started = datetime.now(UTC)
        tape = ProbeTape(engine, window_start(started, interval))
        tape.start()
        pruning = _wait_pruned(
            engine, running, first_target, oldest_before, started - keep, args.prune_timeout
        )
        finished = pruning[1]
        seconds = (finished - pruning[0]).total_seconds()
        length = max(seconds, 6 * interval)
        after = (
            finished + timedelta(seconds=2 * interval),
            finished + timedelta(seconds=2 * interval + length),
        )
        time.sleep(max(0.0, (after[1] - datetime.now(UTC)).total_seconds()) + SETTLE_S)
        running.check_alive()
        tape.stop()
    back = _first_probe_since(tape, started)
    figures = {
        name: slot_figures(tape, a, b, interval, age.shape.targets, back)
        for name, (a, b) in (("during", pruning), ("after", after))
    }
    oldest_after = _oldest(engine, first_target)
    engine.dispose()
    return {
        "span": args.prune_span,
        "rows_due": due,
        "pruning_seconds": round(seconds, 1),
        "oldest_before": oldest_before.isoformat(timespec="seconds"),
        "oldest_after": oldest_after.isoformat(timespec="seconds"),
        **figures,
    }


def slot_figures(
    tape: ProbeTape, a: datetime, b: datetime, interval: float, targets: int, back: datetime
) -> dict[str, Any]:
    """Slots in [a, b) as bench/soak.py counts them (from the gaps between a target's
    probes): executed, missed, late (a gap over 1.5 intervals) and drift. The gap across the
    service's start (the last probe before it to the first after, ``back``) counts as the
    service being down, not as missed."""
    import soak

    times = tape.outcomes(a - timedelta(seconds=1.5 * interval), b)
    f = soak.probe_figures(times, interval, [(a - timedelta(days=365), back)])
    epoch = {t: [at.timestamp() for at, _ in v if at >= back] for t, v in times.items()}
    executed, late = count_window(epoch, a.timestamp(), b.timestamp(), interval)
    drift = f.drift_worker_up
    return {
        "from": a.isoformat(timespec="seconds"),
        "seconds": round((b - a).total_seconds(), 1),
        "probes": executed,
        "expected": round(targets * (b - a).total_seconds() / interval),
        "missed_slots": f.missed,
        "late": late,
        "drift_p50_s": _round(soak.percentile(drift, 50), 3),
        "drift_p99_s": _round(soak.percentile(drift, 99), 3),
        "drift_max_s": _round(max(drift, default=float("nan")), 3),
    }


def _wait_pruned(
    engine: sa.Engine,
    running: Slamon,
    target_id: int,
    oldest: datetime,
    cutoff: datetime,
    timeout: float,
) -> tuple[datetime, datetime]:
    """Wait until the rows before ``cutoff`` (less the rollup's late margin) are gone: one
    target's oldest minute rollup past it (they go oldest first, all targets together). The
    pruning's span, to the poll: the last moment ``oldest`` was still there, and the first
    moment the rows were gone."""
    deadline, still = time.monotonic() + timeout, datetime.now(UTC)
    while time.monotonic() < deadline:
        running.check_alive()
        now_oldest = _oldest(engine, target_id)
        if now_oldest >= cutoff - timedelta(minutes=3):
            return still, datetime.now(UTC)
        if now_oldest <= oldest:
            still = datetime.now(UTC)
        time.sleep(PRUNE_POLL_S)
    raise SystemExit(f"the oldest rows were not pruned within {timeout:g} s")


def _rows_before(engine: sa.Engine, cutoff: datetime) -> int:
    """What pruning to ``cutoff`` deletes: minute rollups, and probes kept whole."""
    from monitor.db.models import ProbeEvidence as E
    from monitor.db.models import ProbeRollup as M

    minutes = sa.select(sa.func.count()).where(M.resolution == "minute", M.bucket_start < cutoff)
    with engine.connect() as c:
        kept = c.execute(sa.select(sa.func.count()).where(E.at < cutoff)).scalar_one()
        return int(kept) + int(c.execute(minutes).scalar_one())


def _first_probe_since(tape: ProbeTape, since: datetime) -> datetime:
    stamps = [v[0] for v in tape.times(since, datetime.now(UTC)).values() if v]
    return datetime.fromtimestamp(min(stamps), UTC) if stamps else since


def _first_target(engine: sa.Engine) -> int:
    with engine.connect() as c:
        return int(c.execute(sa.text("SELECT min(id) FROM targets")).scalar_one())


def _oldest(engine: sa.Engine, target_id: int) -> datetime:
    """One target's oldest minute rollup (what pruning deletes most of, oldest first; its
    primary key answers at once)."""
    from monitor.db.models import ProbeRollup as M

    query = sa.select(sa.func.min(M.bucket_start)).where(
        M.target_id == target_id, M.resolution == "minute"
    )
    with engine.connect() as c:
        found = c.execute(query).scalar_one()
    return found if found.tzinfo else found.replace(tzinfo=UTC)


# --------------------------------------------------------------------------- seeding an age


def prepare(
    label: str, urls: list[str], series: list[ages_peer.Series], args: argparse.Namespace
) -> Age:
    """Seed slamon's database and the peer's TSDB for ``label`` (or find them seeded), and
    with ``--also-seed`` the other backend's database for a later ``--reuse``."""
    age = age_of(label, args)
    also = [argparse.Namespace(**vars(args) | {"backend": b}) for b in args.also_seed or []]
    # the peer's TSDB (and any other backend's database) is built in a process of its own
    # while slamon's database is seeded: they share the machine's cores instead of taking turns
    with ProcessPoolExecutor(1 + len(also), mp_context=multiprocessing.get_context("fork")) as pool:
        peer_seeding = pool.submit(seed_peer, age, series, args)
        others = [pool.submit(seed_slamon, age_of(label, other), urls, other) for other in also]
        age.seeded = seed_slamon(age, urls, args)
        for other in others:
            other.result()
        age.seeded["peer"] = peer_seeding.result()
    print_seeded(age)
    return age


def age_of(label: str, args: argparse.Namespace) -> Age:
    """Where ``args.backend``'s database of ``label`` lives, and the shape of its history."""
    folder = args.work / f"{args.backend}-{label}"
    if args.backend == "sqlite":
        url = f"sqlite:///{folder / 'slamon.db'}"
    else:
        url = f"{slamon_side.PG_ADMIN.rsplit('/', 1)[0]}/{args.pg_database}_{label}"
    shape = ages_seed.Shape(
        targets=args.targets,
        interval_s=args.interval,
        age=ages_seed.parse_age(label),
        end=datetime.now(UTC).replace(microsecond=0),
        failure_rate=args.failure_rate,
        blip_rate=args.blip_rate,
        outage_minutes=args.outage_minutes,
    )
    tsdb = args.work / f"peer-{label}" / "tsdb"  # the same for both backends: --keep, --reuse
    return Age(label, shape, folder, url, folder / "slamon.yaml", tsdb)


SEED_KEYS = (
    "backend",
    "targets",
    "interval",
    "failure_rate",
    "blip_rate",
    "outage_minutes",
    "pattern",
    "pg_database",
    "base_port",
)
PEER_KEYS = ("targets", "interval", "base_port", "pattern")


def _seeded(meta: Path, wanted: dict[str, Any], reuse: bool) -> dict[str, Any] | None:
    """What ``meta`` says was seeded, when reusing and it was seeded with ``wanted``."""
    if not reuse or not meta.exists():
        return None
    stored: dict[str, Any] = json.loads(meta.read_text())
    return stored if stored.get("parameters") == wanted else None


def seed_slamon(age: Age, urls: list[str], args: argparse.Namespace) -> dict[str, Any]:
    wanted = {k: v for k, v in vars(args).items() if k in SEED_KEYS} | {"age": age.label}
    meta = age.folder / "seed.json"
    stored = _seeded(meta, wanted, args.reuse)
    if stored is not None:
        end = datetime.fromisoformat(stored["shape"]["end"])
        age.shape = ages_seed.Shape(**{**stored["shape"], "age": age.shape.age, "end": end})
        say(f"{age.label}: reusing slamon's seeded database ({age.folder})")
        return stored
    shutil.rmtree(age.folder, ignore_errors=True)
    age.folder.mkdir(parents=True)
    hook = f"http://127.0.0.1:{args.base_port - 1}/hook"  # nothing listens: no alert fires
    timeout = peer.probe_timeout(args.interval)
    age.config.write_text(ages_seed.slamon_config(urls, args.interval, timeout, hook))
    check_disk(age.shape, args)
    say(f"{age.label}: seeding slamon ({args.backend}), {args.targets} targets every "
        f"{args.interval:g} s")  # fmt: skip
    shape = age.shape
    pattern = getattr(args, "pattern", None)
    counts = ages_seed.seed(
        age.database_url,
        age.config.read_text(),
        shape,
        say=_indented,
        pattern=ages_seed.parse_age(pattern) if pattern else None,
    )
    seeded = {
        "parameters": wanted,
        "shape": {k: getattr(shape, k) for k in ("targets", "interval_s", "vantage", "failure_rate",
                                                "blip_rate", "outage_minutes", "seed")}
        | {"end": shape.end.isoformat()},
        "rows": counts,
        "table_bytes": table_bytes(age.database_url) if shape.age else {},
        "disk": slamon_disk(age.database_url),
    }  # fmt: skip
    meta.write_text(json.dumps(seeded, indent=1))
    return seeded


def seed_peer(age: Age, series: list[ages_peer.Series], args: argparse.Namespace) -> dict[str, Any]:
    wanted = {k: v for k, v in vars(args).items() if k in PEER_KEYS} | {"age": age.label}
    meta = age.tsdb.parent / "seed.json"
    stored = _seeded(meta, wanted, args.reuse)
    if stored is not None:
        say(f"{age.label}: reusing the peer's seeded TSDB ({age.tsdb})")
        return stored
    shutil.rmtree(age.tsdb.parent, ignore_errors=True)
    age.tsdb.mkdir(parents=True)
    built: dict[str, Any] = {}
    if age.shape.age:
        say(f"{age.label}: seeding the peer's TSDB")
        shape = age.shape
        pattern = getattr(args, "pattern", None)
        built = ages_peer.build(
            series, args.interval, shape.start, shape.end, age.tsdb, jobs=args.peer_jobs,
            say=_indented,
            pattern_s=int(ages_seed.parse_age(pattern).total_seconds()) if pattern else None,
        )  # fmt: skip
        age.tsdb.mkdir(parents=True, exist_ok=True)
    seeded = {"parameters": wanted, "build": built, "disk": ages_peer.footprint(age.tsdb)}
    meta.write_text(json.dumps(seeded, indent=1))
    return seeded


def _indented(text: str) -> None:
    say(text.strip())


def check_disk(shape: ages_seed.Shape, args: argparse.Namespace) -> None:
    """Refuse, in one line, a seeding the disk under --work cannot hold (on SQLite: a minute
    rollup row of ~150 bytes per target and minute, and an hour of raw rows at ~170 bytes a
    probe before compaction deletes the routine ones; PostgreSQL's data directory is not
    checked)."""
    if args.backend != "sqlite":
        return
    minutes = shape.age.total_seconds() / 60
    need = shape.targets * (minutes * 150 + 3600 / shape.interval_s * 170) * 1.2
    free = shutil.disk_usage(args.work).free
    if need > free:
        raise SystemExit(
            f"seeding {shape.targets} targets for {shape.age} needs about {need / 1e9:.1f} GB; "
            f"{free / 1e9:.1f} GB free under {args.work}"
        )


def print_seeded(age: Age) -> None:
    """Bytes per probe of what the seeding left, beside the peer's bytes per sample."""
    probes = age.seeded["rows"].get("probe_results", 0)
    if not probes:
        return
    total = age.seeded["disk"]["total"]
    say(f"{age.label}: {probes:,} raw rows; slamon's database {total / 1e6:,.1f} MB, "
        f"{total / probes:.1f} B/probe")  # fmt: skip
    for table, size in list(age.seeded["table_bytes"].items())[:6]:
        say(f"    {table:<18} {size / 1e6:12,.1f} MB  {size / probes:8.2f} B/probe")
    blocks = age.seeded["peer"]["disk"]["blocks"]
    samples = age.seeded["peer"]["build"].get("samples", 0)
    if samples:
        say(
            f"  peer TSDB blocks {blocks / 1e6:,.1f} MB: {blocks / probes:.1f} B/probe, "
            f"{blocks / samples:.2f} B/sample ({samples / probes:.1f} samples a probe); "
            f"slamon/peer {total / max(blocks, 1):.2f}x"
        )


# --------------------------------------------------------------------------- the run


def run(args: argparse.Namespace) -> dict[str, Any]:
    args.work.mkdir(parents=True, exist_ok=True)
    labels = [a.strip() for a in args.age.split(",") if a.strip()]
    peer.ensure_installed()
    results: dict[str, Any] = {"parameters": {k: str(v) for k, v in vars(args).items()}, "ages": {}}
    server = targets_server.start(
        args.base_port, args.targets, nginx=args.targets_server == "nginx"
    )
    urls = [f"http://127.0.0.1:{args.base_port + i}/healthz" for i in range(args.targets)]
    try:
        series = capture_series(urls, args)
        fresh_cpu: float | None = None
        for label in labels:
            age = prepare(label, urls, series, args)
            if args.seed_only:
                continue
            entry: dict[str, Any] = {"seeded": age.seeded, "runs": []}
            caught = catch_up(age)
            say(f"{label}: caught up with the seeding's time as slamon's rollup would: {caught}")
            entry["catch_up"] = caught
            for n in range(1, args.runs + 1):
                say(f"{label}: run {n}/{args.runs}: peer, {args.window:g} s window")
                peer_run = measure_peer(age, urls, args)
                say(
                    f"{label}: run {n}/{args.runs}: slamon ({args.backend}), {args.window:g} s window"
                )
                slamon_run = measure_slamon(age, args)
                entry["runs"].append({"peer": peer_run, "slamon": slamon_run})
                say(f"{label}: run {n}: slamon {slamon_run['cpu_ms_per_probe']} ms/probe, "
                    f"peer {peer_run['cpu_ms_per_probe']} ms/probe")  # fmt: skip
            if label == "fresh":
                fresh_cpu = median(r["slamon"]["cpu_ms_per_probe"] for r in entry["runs"])
            lines = age_lines(label, entry["runs"], fresh_cpu)
            entry["table"] = [line.cells() for line in lines]
            print(f"\n== age {label}: {args.targets} targets every {args.interval:g} s, "
                  f"{deployment(args)}, median of {args.runs} run(s) ==")  # fmt: skip
            print(render(lines), flush=True)
            if args.prune_check and label == labels[-1]:
                entry["prune_check"] = prune_check(age, args)
                print_prune(entry["prune_check"])
            results["ages"][label] = entry
            write_json(args.json, results)
            if not args.keep:
                remove(age)
    finally:
        server.terminate()
        server.wait(timeout=30)
    if not args.seed_only:
        print_summary(results, args)
    write_json(args.json, results)
    return results


def capture_series(urls: list[str], args: argparse.Namespace) -> list[ages_peer.Series]:
    """The peer's real series for the targets (captured once, kept in --work)."""
    path = args.work / f"capture-{args.targets}-{args.base_port}.json"
    if path.exists() and args.reuse:
        raw = json.loads(path.read_text())
    else:
        say(f"capturing the peer's series: {args.targets} targets for {args.capture:g} s")
        raw = peer_capture(urls, args)
        path.write_text(json.dumps(raw))
    series = ages_peer.series_of(raw, args.interval)
    say(f"peer: {len(series)} series, {len(series) / args.targets:.1f} a probe")
    return series


def peer_capture(urls: list[str], args: argparse.Namespace) -> list[dict[str, Any]]:
    return ages_peer.capture(urls, args.interval, args.capture)


def print_prune(found: dict[str, Any]) -> None:
    print(f"\n== pruning the oldest {found['span']} ({found['rows_due']:,} rows due: minute "
          "rollups and probes kept whole) ==")  # fmt: skip
    print(f"pruning took {found['pruning_seconds']:.1f} s (to {PRUNE_POLL_S:g} s); oldest minute rollup "
          f"{found['oldest_before']} -> {found['oldest_after']}")  # fmt: skip
    for name in ("during", "after"):
        f = found[name]
        print(
            f"{name:<7} {f['seconds']:6.1f} s: probes {f['probes']:,} of ~{f['expected']:,}, "
            f"missed slots {f['missed_slots']}, late {f['late']}, drift p50 {f['drift_p50_s']} s "
            f"p99 {f['drift_p99_s']} s max {f['drift_max_s']} s"
        )


def print_summary(results: dict[str, Any], args: argparse.Namespace) -> None:
    print(f"\n== by age: {args.targets} targets every {args.interval:g} s, {deployment(args)} "
          f"(medians of {args.runs}) ==")  # fmt: skip
    head = ["age", "CPU ms/probe", "peer", "s/p", "vs fresh", "RSS end MiB", "slope MiB/h",
            "disk MB", "peer MB", "s/p"]  # fmt: skip
    rows = [head]
    fresh = None
    for label, entry in results["ages"].items():
        runs = entry["runs"]
        cpu = median(r["slamon"]["cpu_ms_per_probe"] for r in runs)
        cpu_peer = median(r["peer"]["cpu_ms_per_probe"] for r in runs)
        fresh = cpu if label == "fresh" else fresh
        disk = median(r["slamon"]["disk"]["end"]["total"] for r in runs)
        disk_peer = median(r["peer"]["disk"]["end"]["total"] for r in runs)
        rows.append([
            label, fmt(cpu, 3), fmt(cpu_peer, 3), fmt(ratio(cpu, cpu_peer)), fmt(ratio(cpu, fresh)),
            fmt(median(r["slamon"]["rss_mib"]["end"] for r in runs), 1),
            fmt(median(r["slamon"]["rss_mib"]["slope_per_hour"] for r in runs), 1),
            fmt(_mb(disk), 1), fmt(_mb(disk_peer), 1), fmt(ratio(disk, disk_peer)),
        ])  # fmt: skip
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    for n, row in enumerate(rows):
        print(" | ".join(c.rjust(w) for c, w in zip(row, widths, strict=True)))
        if n == 0:
            print("-|-".join("-" * w for w in widths))


def deployment(args: argparse.Namespace) -> str:
    """The backend, and on PostgreSQL the process layout measured."""
    if args.backend == "sqlite":
        return "sqlite (slamon run)"
    return "postgres (worker, beat, api)" if args.layout == "services" else "postgres (one process)"


def write_json(path: Path, results: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(results, indent=1, default=str))


def remove(age: Age) -> None:
    shutil.rmtree(age.folder, ignore_errors=True)
    shutil.rmtree(age.tsdb.parent, ignore_errors=True)
    if age.database_url.startswith("postgresql"):
        slamon_side.drop_postgres(sa.make_url(age.database_url).database or "")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--backend", choices=["sqlite", "postgres"], default="sqlite")
    parser.add_argument("--targets", type=int, default=1000)
    parser.add_argument("--interval", type=float, default=5.0, help="seconds between probes")
    parser.add_argument(
        "--age", default="fresh,1d,7d,14d", help="comma-separated: fresh, 1d, 7d, 14d, 36h…"
    )
    parser.add_argument("--window", type=float, default=300.0, help="measured seconds per run")
    parser.add_argument("--warmup", type=float, default=30.0, help="seconds after the first round")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument(
        "--failure-rate", type=float, default=0.001, help="share of slots in outages"
    )
    parser.add_argument(
        "--blip-rate", type=float, default=0.0002, help="share of slots failing alone"
    )
    parser.add_argument("--outage-minutes", type=float, default=5.0, help="mean outage length")
    parser.add_argument(
        "--pattern",
        help="seed this much (whole hours: 1d, 6h) probe by probe and repeat it over the age",
    )
    parser.add_argument("--prune-check", action="store_true", help="time pruning at the last age")
    parser.add_argument("--prune-span", default="1d", help="how much the prune check prunes")
    parser.add_argument("--prune-timeout", type=float, default=1800.0)
    parser.add_argument("--capture", type=float, default=60.0, help="seconds of the peer captured")
    parser.add_argument(
        "--peer-jobs", type=int, default=os.cpu_count() or 1, help="promtool runs at once"
    )
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "slamon-ages")
    parser.add_argument("--json", type=Path, default=Path("/tmp/slamon-bench/ages.json"))
    parser.add_argument("--keep", action="store_true", help="keep each age's database and TSDB")
    parser.add_argument("--reuse", action="store_true", help="use ages seeded in --work")
    parser.add_argument("--seed-only", action="store_true", help="seed (and keep), measure nothing")
    parser.add_argument(
        "--also-seed",
        action="append",
        choices=["sqlite", "postgres"],
        help="seed this backend's database too, at the same time (kept, for a later --reuse)",
    )
    parser.add_argument("--pg-database", default="slamon_bench_ages", help="prefix: <it>_<age>")
    parser.add_argument("--redis-url", default=slamon_side.REDIS_URL)
    parser.add_argument(
        "--layout",
        choices=["services", "single"],
        default="services",
        help="PostgreSQL: worker, beat and api apart (production's services) or in one process",
    )
    parser.add_argument("--base-port", type=int, default=28000, help="targets' first port")
    parser.add_argument("--api-port", type=int, default=18956)
    parser.add_argument("--targets-server", choices=["nginx", "python"], default="nginx")
    args = parser.parse_args()
    if args.seed_only or args.also_seed:
        args.keep = True  # what was seeded is for a later --reuse
    if args.backend in (args.also_seed or []):
        raise SystemExit(f"--also-seed {args.backend}: --backend {args.backend} is seeded anyway")
    if args.layout == "single" and args.backend != "postgres":
        raise SystemExit("--layout single is for --backend postgres (slamon run is one process)")
    if args.runs < 0 or args.targets < 1 or args.interval <= 0 or args.window <= 0:
        raise SystemExit("--runs must be 0 or more, --targets, --interval and --window above 0")
    try:
        for label in args.age.split(","):
            if label.strip():
                ages_seed.parse_age(label.strip())
        ages_seed.parse_age(args.prune_span)
        if args.pattern and ages_seed.parse_age(args.pattern).total_seconds() % ages_peer.BLOCK_S:
            raise ValueError(f"--pattern {args.pattern}: the peer's blocks repeat in whole 2h")
    except ValueError as exc:
        raise SystemExit(str(exc)) from None
    # a stopped harness stops what it started: a slamon left running on the database (its
    # worker's command line is `python -m monitor.cli`) spoils the next command's windows
    signal.signal(
        signal.SIGTERM, lambda *_: sys.exit(f"stopped by SIGTERM at {datetime.now(UTC):%H:%M:%S}")
    )
    run(args)


if __name__ == "__main__":
    main()
