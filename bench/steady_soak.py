"""The steady-state soak: the embedded default (``slamon run``, SQLite) probing N local nginx
targets for hours, as a user leaves it running; does its memory, CPU per probe and disk stay
flat?

    .venv/bin/python bench/steady_soak.py                       # 1,000 targets every 5 s, 2 h
    .venv/bin/python bench/steady_soak.py --targets 100 --duration 900 --sample 60 --window 300

Every ``--sample`` seconds (5 min) it reads each process of slamon's tree (``slamon run`` and
its probe processes): RSS and CPU time, and the database's size (file + WAL). Probes are read
as they land (bench/probe_tape.py: the rollup deletes routine rows minutes after their probe).
Printed at the end, and written to ``--json``:

* RSS per process at each sample, and the least-squares slope of each (and of their sum) over
  the samples after ``--settle`` (10 min): the goal is under 1 MiB an hour;
* per ``--window`` (10 min): probes, missed and late slots (a gap over 1.5 intervals), CPU
  seconds of the tree and CPU ms per probe, its ratio to the first window;
* the database's size at each sample, and its growth per hour after the settle.

``--backend postgres`` soaks the production layout instead (worker, beat, api on PostgreSQL and
Redis; RSS of slamon's processes only). Not run by CI.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import ages
import peer
import slamon_side
import targets_server
from measure import CLOCK_TICKS, command_of, count_window, cpu_ticks, per_probe, rss_kib, wait_for
from probe_tape import ProbeTape, window_start

from monitor.db.engine import make_engine


def say(text: str) -> None:
    print(f"[{datetime.now(UTC):%H:%M:%S}] {text}", flush=True)


def label_of(pid: int, main: set[int]) -> str:
    """``slamon run`` or ``probes <pid>``: the words that tell the tree's processes apart."""
    words = [w.rsplit("/", 1)[-1] for w in command_of(pid).split() if not w.startswith("-")]
    name = " ".join(words[:2])
    return name if pid in main else f"{name} [{pid}]"


def sample_tree(select: Any, main: set[int]) -> dict[str, tuple[float, int]]:
    """(RSS MiB, CPU ticks) of each live process of the tree, by label."""
    found: dict[str, tuple[float, int]] = {}
    for pid in select():
        ticks = cpu_ticks(pid)
        if ticks is None:
            continue
        found[label_of(pid, main)] = (rss_kib(pid) / 1024, ticks)
    return found


def soak(args: argparse.Namespace) -> dict[str, Any]:
    args.work.mkdir(parents=True, exist_ok=True)
    peer.ensure_installed()  # nginx comes with the peer's packages
    server = targets_server.start(args.base_port, args.targets, nginx=True)
    urls = [f"http://127.0.0.1:{args.base_port + i}/healthz" for i in range(args.targets)]
    try:
        age = ages.prepare("fresh", urls, [], args)
        engine = make_engine(age.database_url)
        with ages.Slamon(
            args.backend, age.database_url, age.config, age.folder, args.api_port,
            args.redis_url, age.shape.vantage,
        ) as running:  # fmt: skip
            started = datetime.now(UTC)
            wait_for(lambda: ages.first_round_done(engine, started, args.targets), 180,
                     "slamon's first round", 1.0)  # fmt: skip
            began, opened = time.monotonic(), datetime.now(UTC)
            tape = ProbeTape(engine, window_start(opened, args.interval))
            tape.start()
            main = {p.pid for p in running.processes}
            select = running.select()
            samples = [_sample(0.0, select, main, age.database_url)]
            say(_line(samples[-1]))
            while (elapsed := time.monotonic() - began) < args.duration:
                time.sleep(min(args.sample, args.duration - elapsed))
                running.check_alive()
                samples.append(_sample(time.monotonic() - began, select, main, age.database_url))
                say(_line(samples[-1]))
            time.sleep(3.0)  # the last probes land
            tape.stop()
        engine.dispose()
    finally:
        server.terminate()
        server.wait(timeout=30)
    windows = _windows(samples, tape, opened, args)
    result = {
        "parameters": {k: str(v) for k, v in vars(args).items()},
        "samples": samples,
        "windows": windows,
        "slopes_mib_per_hour": _slopes(samples, args.settle),
        "disk_growth_mb_per_hour": _disk_growth(samples, args.settle),
    }
    if not args.keep:
        ages.remove(age)
    return result


def _sample(t: float, select: Any, main: set[int], url: str) -> dict[str, Any]:
    tree = sample_tree(select, main)
    return {
        "t_s": round(t, 1),
        "at": datetime.now(UTC).isoformat(timespec="seconds"),
        "rss_mib": {k: round(v[0], 1) for k, v in tree.items()},
        "cpu_ticks": {k: v[1] for k, v in tree.items()},
        "disk": ages.slamon_disk(url),
    }


def _line(sample: dict[str, Any]) -> str:
    rss = sample["rss_mib"]
    parts = ", ".join(f"{k} {v:.1f}" for k, v in sorted(rss.items()))
    return (
        f"{sample['t_s'] / 60:6.1f} min  RSS {sum(rss.values()):6.1f} MiB ({parts})  "
        f"db {sample['disk']['total'] / 1e6:8.1f} MB"
    )


def _windows(
    samples: list[dict[str, Any]], tape: ProbeTape, opened: datetime, args: argparse.Namespace
) -> list[dict[str, Any]]:
    """CPU per probe per ``--window``, from the samples on its edges."""
    step = max(1, round(args.window / args.sample))
    found = []
    first_cost: float | None = None
    for i in range(0, len(samples) - step, step):
        a, b = samples[i], samples[i + step]
        start = opened + timedelta(seconds=a["t_s"])
        end = opened + timedelta(seconds=b["t_s"])
        ticks = sum(b["cpu_ticks"].values()) - sum(
            v for k, v in a["cpu_ticks"].items() if k in b["cpu_ticks"]
        )
        times = tape.times(window_start(start, args.interval), end)
        executed, late = count_window(times, start.timestamp(), end.timestamp(), args.interval)
        expected = round(args.targets * (end - start).total_seconds() / args.interval)
        cost = per_probe(ticks / CLOCK_TICKS * 1000, executed, 3)
        first_cost = first_cost if first_cost is not None else cost
        found.append(
            {
                "from_min": round(a["t_s"] / 60, 1),
                "to_min": round(b["t_s"] / 60, 1),
                "probes": executed,
                "expected": expected,
                "missed": max(0, expected - executed),
                "late": late,
                "cpu_s": round(ticks / CLOCK_TICKS, 2),
                "cpu_ms_per_probe": cost,
                "vs_first": round(cost / first_cost, 3) if cost and first_cost else None,
            }
        )
    return found


def _slopes(samples: list[dict[str, Any]], settle: float) -> dict[str, float | None]:
    after = [s for s in samples if s["t_s"] >= settle]
    names = sorted({k for s in after for k in s["rss_mib"]})
    slopes = {
        name: ages.slope_per_hour(
            [(s["t_s"], s["rss_mib"][name]) for s in after if name in s["rss_mib"]]
        )
        for name in names
    }
    slopes["total"] = ages.slope_per_hour([(s["t_s"], sum(s["rss_mib"].values())) for s in after])
    return {k: None if v is None else round(v, 2) for k, v in slopes.items()}


def _disk_growth(samples: list[dict[str, Any]], settle: float) -> float | None:
    after = [(s["t_s"], s["disk"]["total"] / 1e6) for s in samples if s["t_s"] >= settle]
    slope = ages.slope_per_hour(after)
    return None if slope is None else round(slope, 1)


def render(result: dict[str, Any], args: argparse.Namespace) -> str:
    samples = result["samples"]
    names = sorted({k for s in samples for k in s["rss_mib"]})
    lines = [
        f"== steady soak: {args.targets} targets every {args.interval:g} s, {args.backend}, "
        f"{args.duration / 60:g} min ==",
        "",
        "| minute | " + " | ".join(names) + " | total RSS MiB | database MB |",
        "|---:|" + "---:|" * (len(names) + 2),
    ]
    for s in samples:
        rss = s["rss_mib"]
        cells = [f"{rss[n]:.1f}" if n in rss else "-" for n in names]
        lines.append(
            f"| {s['t_s'] / 60:.0f} | " + " | ".join(cells)
            + f" | {sum(rss.values()):.1f} | {s['disk']['total'] / 1e6:.1f} |"
        )  # fmt: skip
    slopes = result["slopes_mib_per_hour"]
    lines += [
        "",
        f"RSS slope after minute {args.settle / 60:g} (MiB/h; goal < 1): "
        + ", ".join(f"{k} {v}" for k, v in slopes.items()),
        f"database growth after minute {args.settle / 60:g}: "
        f"{result['disk_growth_mb_per_hour']} MB/h",
        "",
        "| window (min) | probes | missed | late | CPU s | CPU ms / probe | vs first |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for w in result["windows"]:
        lines.append(
            f"| {w['from_min']:g}–{w['to_min']:g} | {w['probes']:,} | {w['missed']:,} | "
            f"{w['late']:,} | {w['cpu_s']:.1f} | {w['cpu_ms_per_probe']} | {w['vs_first']} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--backend", choices=["sqlite", "postgres"], default="sqlite")
    parser.add_argument("--targets", type=int, default=1000)
    parser.add_argument("--interval", type=float, default=5.0, help="seconds between probes")
    parser.add_argument("--duration", type=float, default=7200.0, help="seconds of soak")
    parser.add_argument("--sample", type=float, default=300.0, help="seconds between samples")
    parser.add_argument("--window", type=float, default=600.0, help="CPU-per-probe window, s")
    parser.add_argument("--settle", type=float, default=600.0, help="slopes start after, s")
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "slamon-soak")
    parser.add_argument("--json", type=Path, default=Path("/tmp/slamon-bench/steady_soak.json"))
    parser.add_argument("--keep", action="store_true", help="keep the database")
    parser.add_argument("--pg-database", default="slamon_bench_soak", help="prefix: <it>_fresh")
    parser.add_argument("--redis-url", default=slamon_side.REDIS_URL)
    parser.add_argument("--base-port", type=int, default=29000, help="targets' first port")
    parser.add_argument("--api-port", type=int, default=18957)
    args = parser.parse_args()
    # what ages.prepare reads: a fresh database, no failures planned, nothing reused
    args.failure_rate, args.blip_rate, args.outage_minutes = 0.0, 0.0, 5.0
    args.reuse, args.peer_jobs = False, 1
    if args.targets < 1 or args.interval <= 0 or args.duration < args.window:
        raise SystemExit("--targets and --interval above 0, --duration at least --window")
    shutil.rmtree(args.work / f"{args.backend}-fresh", ignore_errors=True)
    result = soak(args)
    print(render(result, args), flush=True)
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(result, indent=1))
    say(f"written to {args.json}")


if __name__ == "__main__":
    main()
