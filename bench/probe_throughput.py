"""Probe N local HTTP targets on a fixed interval through slamon's real probe path (shard
runner + batched writes + state machine) and print probes/s, CPU-ms per probe and peak memory.

    .venv/bin/python bench/probe_throughput.py --targets 1000 --interval 5 --duration 60
    .venv/bin/python bench/probe_throughput.py --database-url postgresql+psycopg://postgres@127.0.0.1/slamon_bench

Targets are served by bench/targets_server.py (one port each, so every target is its own
connection pool entry, as distinct instances would be). Not run by CI.
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from monitor.config.models import ProbesConfig, TargetConfig  # noqa: E402
from monitor.db.engine import make_engine, make_sessionmaker  # noqa: E402
from monitor.db.migrate import upgrade  # noqa: E402
from monitor.probes.loop import ProbeLoop  # noqa: E402
from monitor.probes.service import probe_round, shards  # noqa: E402
from monitor.targets import upsert_target  # noqa: E402


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


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
    args = parser.parse_args()

    tmp = tempfile.mkdtemp(prefix="slamon-bench-")
    url = args.database_url or f"sqlite:///{tmp}/bench.db"
    server = subprocess.Popen(
        [
            sys.executable,
            str(HERE / "targets_server.py"),
            "--base-port",
            str(args.base_port),
            "--count",
            str(args.targets),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        print(server.stdout.readline().strip())
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
                    timeout=2,
                    url=f"http://127.0.0.1:{args.base_port + i}/healthz",
                )
                row = upsert_target(session, cfg, "config")
                session.flush()
                ids.append(row.id)
        probes = ProbesConfig(shard_size=args.shard_size, concurrency=args.concurrency)
        run(sessions, ids, probes, args)
    finally:
        server.terminate()


def run(sessions, ids, probes, args) -> None:  # type: ignore[no-untyped-def]
    rounds = int(args.duration / args.interval)
    done = late = 0
    start_wall, start_cpu = time.monotonic(), cpu_seconds()
    loop = ProbeLoop(probes.concurrency)  # what a worker process keeps for its lifetime
    for n in range(rounds):
        slot = start_wall + n * args.interval
        if time.monotonic() > slot + args.interval:
            late += 1
        for shard in shards(ids, probes.shard_size):
            done += len(probe_round(sessions, shard, "bench", probes, loop).results)
        time.sleep(max(0.0, slot + args.interval - time.monotonic()))
    wall, cpu = time.monotonic() - start_wall, cpu_seconds() - start_cpu
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"targets           {len(ids)}")
    print(f"interval          {args.interval:g} s, {rounds} rounds in {wall:.1f} s")
    print(f"probes done       {done} of {rounds * len(ids)} scheduled; late rounds {late}")
    print(f"probes/s          {done / wall:.1f} (offered {len(ids) / args.interval:.1f})")
    print(f"CPU-ms per probe  {cpu * 1000 / max(done, 1):.3f} (probe + store + state, one process)")
    print(f"peak RSS          {peak_mib:.1f} MiB")


if __name__ == "__main__":
    main()
