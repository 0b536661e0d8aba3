"""Probe N local HTTP targets on a fixed interval through slamon's real probe path (ProbeLoop +
Prober.round: shard runner, batched writes, state machine) and print probes/s against offered,
late rounds, CPU-ms per probe (split by thread: probing on the loop, store + state on its
executor threads), the targets server's own CPU, and peak memory.

    .venv/bin/python bench/probe_throughput.py --targets 1000 --interval 5 --duration 30
    .venv/bin/python bench/probe_throughput.py --targets 3000 --interval 1 --duration 30 \
        --processes 2 --workers 6 --database-url postgresql+psycopg://postgres@127.0.0.1/slamon_bench

``--workers`` runs that many shards at once on one probe loop (a threads-pool worker);
``--processes`` forks that many probing processes, each with its own loop (prefork children).
A round is late when it finishes after its slot ends. Targets are served by
bench/targets_server.py (one port each, as distinct instances would be); keep the port range
below the ephemeral range (32768+ on Linux), where a port may be taken. Not run by CI.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import resource
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import targets_server

from monitor.config.models import ProbesConfig, TargetConfig
from monitor.db.engine import make_engine, make_sessionmaker
from monitor.db.migrate import upgrade
from monitor.probes.loop import ProbeLoop
from monitor.probes.record import process_memory
from monitor.probes.round import Prober
from monitor.probes.schedule import shards
from monitor.targets import upsert_target


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def cpu_by_part() -> dict[str, float]:
    """CPU seconds per part of the process, from /proc (Linux): the probe loop's thread
    (probing), the threads it hands database work to (store + state), the rest (main: the
    bench's own threads, which only wait for rounds)."""
    ticks = os.sysconf("SC_CLK_TCK")
    parts: dict[str, float] = {}
    for thread in threading.enumerate():
        try:
            stat = Path(f"/proc/self/task/{thread.native_id}/stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        seconds = (int(fields[11]) + int(fields[12])) / ticks  # utime, stime
        name = thread.name
        # the loop's executor threads (asyncio_N, or uvloop's ThreadPoolExecutor-N) do the store
        main = name == "MainThread" or name.startswith("bench-worker")
        part = "probe" if name == "slamon-probes" else "main" if main else "store"
        parts[part] = parts.get(part, 0.0) + seconds
    return parts


def process_cpu_seconds(pid: int) -> float:
    """User + system CPU of another process (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--targets", type=int, default=1000)
    parser.add_argument("--interval", type=float, default=5.0)
    parser.add_argument("--duration", type=float, default=60.0)
    parser.add_argument("--shard-size", type=int, default=250)
    parser.add_argument("--concurrency", type=int, default=200)
    parser.add_argument("--base-port", type=int, default=20000)
    parser.add_argument("--database-url", default=None, help="default: a temporary SQLite file")
    parser.add_argument(
        "--workers", type=int, default=1, help="shards in flight per process (threads pool)"
    )
    parser.add_argument(
        "--processes", type=int, default=1, help="forked probing processes (prefork children)"
    )
    args = parser.parse_args()

    tmp = tempfile.mkdtemp(prefix="slamon-bench-")
    url = args.database_url or f"sqlite:///{tmp}/bench.db"
    server = targets_server.start(args.base_port, args.targets)
    try:
        engine = make_engine(url)
        upgrade(engine)
        sessions = make_sessionmaker(engine)
        with sessions() as session, session.begin():
            ids = []
            for i in range(args.targets):
                cfg = TargetConfig(
                    name=f"bench-{i}",
                    kind="http",
                    interval=args.interval,
                    timeout=min(2.0, args.interval),
                    url=f"http://127.0.0.1:{args.base_port + i}/healthz",
                )
                row = upsert_target(session, cfg, "config")
                session.flush()
                ids.append(row.id)
        engine.dispose()
        probes = ProbesConfig(shard_size=args.shard_size, concurrency=args.concurrency)
        run(url, ids, probes, args, server.pid)
    finally:
        server.terminate()


def run(
    url: str, ids: list[int], probes: ProbesConfig, args: argparse.Namespace, server_pid: int
) -> None:
    """Rounds in this process (``--processes 1``: the by-thread split is printed) or in that
    many forked processes, as a prefork worker's children each with their own probe loop."""
    rounds = int(args.duration / args.interval)
    start_wall, start_cpu = time.monotonic(), cpu_seconds()
    server_cpu = process_cpu_seconds(server_pid)
    if args.processes == 1:
        before = cpu_by_part()
        done, ok, late, lag = run_rounds(url, ids, probes, args, start_wall, 0)
        parts = {k: v - before.get(k, 0.0) for k, v in cpu_by_part().items()}
    else:
        done, ok, late, lag, parts = run_forked(url, ids, probes, args, start_wall)
    wall = time.monotonic() - start_wall
    cpu = cpu_seconds() - start_cpu + parts.get("children", 0.0)
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    shape = f"{args.processes} process(es) x {args.workers} worker thread(s)"
    print(f"targets           {len(ids)}; {shape}; shard size {probes.shard_size}")
    print(f"interval          {args.interval:g} s, {rounds} rounds in {wall:.1f} s")
    print(f"probes done       {done} of {rounds * len(ids)} scheduled; {ok} ok")
    print(f"late rounds       {late} of {rounds} finished after their slot; worst lag {lag:.2f} s")
    print(f"probes/s          {done / wall:.1f} (offered {len(ids) / args.interval:.1f})")
    print(
        f"CPU-ms per probe  {cpu * 1000 / max(done, 1):.3f} (probe + store + state, all processes)"
    )
    if parts:
        split = ", ".join(f"{k} {v * 1000 / max(done, 1):.3f}" for k, v in sorted(parts.items()))
        print(f"  by thread       {split} CPU-ms per probe")
    served = (process_cpu_seconds(server_pid) - server_cpu) * 1000 / max(done, 1)
    print(f"  target server   {served:.3f} CPU-ms per probe (not slamon; shares the same cores)")
    print(f"peak RSS          {peak_mib:.1f} MiB (this process)")


def run_rounds(
    url: str,
    ids: list[int],
    probes: ProbesConfig,
    args: argparse.Namespace,
    start_wall: float,
    index: int,
) -> tuple[int, int, int, float]:
    """This process's share of every round (shards index, index + P, ...), ``--workers`` shards
    at a time on one probe loop, as a threads-pool worker runs them. Returns probes done, rounds
    that succeeded, that finished after their slot, and the worst lag."""
    sessions = make_sessionmaker(make_engine(url))
    rounds = int(args.duration / args.interval)
    mine = shards(ids, probes.shard_size)[index :: args.processes]
    loop = ProbeLoop()  # what a worker process keeps for its lifetime
    done = late = ok = 0
    lag = 0.0
    with ThreadPoolExecutor(args.workers, thread_name_prefix="bench-worker") as pool:
        for n in range(rounds):
            slot = start_wall + n * args.interval
            time.sleep(max(0.0, slot - time.monotonic()))
            prober = Prober(sessions, "bench", probes, loop, memory=process_memory("bench"))
            jobs = [pool.submit(prober.round, s) for s in mine]
            reports = [job.result() for job in jobs]
            done += sum(len(report.results) for report in reports)
            ok += sum(bool(r.ok) for report in reports for r in report.results)
            over = time.monotonic() - (slot + args.interval)
            late += over > 0
            lag = max(lag, over)
    time.sleep(max(0.0, start_wall + rounds * args.interval - time.monotonic()))  # the last slot
    return done, ok, late, lag


def run_forked(
    url: str, ids: list[int], probes: ProbesConfig, args: argparse.Namespace, start_wall: float
) -> tuple[int, int, int, float, dict[str, float]]:
    context = multiprocessing.get_context("fork")
    with context.Pool(args.processes) as pool:
        shares = pool.starmap(
            run_rounds,
            [(url, ids, probes, args, start_wall, i) for i in range(args.processes)],
        )
    done = sum(share[0] for share in shares)
    ok = sum(share[1] for share in shares)
    late = max(share[2] for share in shares)
    lag = max(share[3] for share in shares)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return done, ok, late, lag, {"children": children.ru_utime + children.ru_stime}


if __name__ == "__main__":
    main()
