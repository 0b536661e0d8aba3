"""slamon side by side with Prometheus + blackbox_exporter + Alertmanager: the one command.

    .venv/bin/python bench/compare.py                       # all four, 200 and 1,000 targets
    .venv/bin/python bench/compare.py --targets 200,1000,3000 --stress
    .venv/bin/python bench/compare.py --quick               # a smoke run in a few minutes
    .venv/bin/python bench/compare.py --only probe,detect   # any of probe,detect,storage,report

Runs each workload on the peer, then on slamon, one after the other (never at the same time),
prints a table metric | slamon | peer | ratio slamon/peer | goal | met?, and writes every figure
as JSON (``--json``, default /tmp/slamon-bench/latest.json). The peer comes from Debian's
packages (installed with apt-get when missing) and runs on loopback with configs written to a
temporary folder; slamon runs as the real `slamon run`. Not run by CI.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import platform
import subprocess
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import detection_latency
import peer
import report_month
import slamon_side
import storage
import targets_server

HERE = Path(__file__).resolve().parent
TARGETS_BASE_PORT = 28000  # 28000-30999: below the ephemeral range, clear of RabbitMQ (25672)
# and of the other benchmarks (probe_throughput 20000+, soak 26000+)
WORKLOADS = ("probe", "detect", "storage", "report")
STRESS = (3000, 1.0)  # targets, interval: "keeps schedule where the peer collapses"
PROBES_PER_PROCESS = 1500  # what one slamon probe process keeps up with on this box
RSS_GOAL_MIB = 150.0  # the whole `slamon run` tree at 1,000 targets every 5 s
ON_SCHEDULE = 0.99  # share of expected probes done on time to count as keeping schedule


class TargetsServer:
    """N local HTTP targets from TARGETS_BASE_PORT (nginx by default, as in the issue's known
    figures; ``--targets-server python`` for bench/targets_server.py); yields the target URLs."""

    server = "nginx"  # set from --targets-server

    def __init__(self, count: int) -> None:
        self.count = count
        self.process: subprocess.Popen[str] | None = None

    def __enter__(self) -> list[str]:
        nginx = self.server == "nginx"
        self.process = targets_server.start(TARGETS_BASE_PORT, self.count, nginx=nginx)
        return [f"http://127.0.0.1:{TARGETS_BASE_PORT + i}/healthz" for i in range(self.count)]

    def __exit__(self, *_exc: object) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=30)


def say(text: str) -> None:
    print(f"[{datetime.now(UTC):%H:%M:%S}] {text}", flush=True)


# --- workloads ------------------------------------------------------------------------------


def probe_case(
    n: int, interval_s: float, args: argparse.Namespace, backends: list[str]
) -> dict[str, Any]:
    timeout = peer.probe_timeout(interval_s)
    processes = None  # what `slamon run` picks for the load by itself, with no flag
    case: dict[str, Any] = {}
    with TargetsServer(n) as urls:
        say(f"probe cost: peer, {n} targets every {interval_s:g} s")
        case["peer"] = peer.probe_cost(urls, interval_s, args.window, args.warmup)
        for kind in backends:
            say(f"probe cost: slamon ({kind}), {n} targets every {interval_s:g} s")
            backend = slamon_side.Backend(kind)
            case[f"slamon_{kind}"] = slamon_side.probe_cost(
                urls, interval_s, args.window, args.warmup, backend, timeout, processes
            )
            if kind == "postgres":
                slamon_side.drop_postgres(backend.database)
    return case


def run_probe(args: argparse.Namespace) -> dict[str, Any]:
    results = {
        f"{n}@{args.interval:g}s": probe_case(n, args.interval, args, ["sqlite", "postgres"])
        for n in args.targets
    }
    if args.stress:
        n, interval = STRESS
        results[f"{n}@{interval:g}s"] = probe_case(n, interval, args, ["sqlite", "postgres"])
    return results


def run_detect(args: argparse.Namespace) -> dict[str, Any]:
    """The peer, slamon as shipped (two recovery confirmations), and slamon at the peer's rule
    (``recovery_confirmations: 1``), one after the other."""
    found = {}
    for side, recovery in (("peer", None), ("slamon", None), ("slamon_r1", 1)):
        say(f"detection latency: {side}, {args.repetitions} repetitions")
        found[side] = detection_latency.run(
            side.split("_")[0], args.repetitions, args.interval, recovery_confirmations=recovery
        )
    return found


def run_storage(args: argparse.Namespace) -> dict[str, Any]:
    with TargetsServer(args.storage_targets) as urls:
        say(f"storage: peer, {len(urls)} targets, a real minute tiled to an hour")
        peer_side = storage.peer_storage(urls, args.interval, args.warmup, 60)
        say(f"storage: slamon, {len(urls)} targets, a real minute tiled to an hour")
        slamon = storage.slamon_storage(urls, args.interval, args.warmup)
    return {"peer": peer_side, "slamon": slamon}


def run_report(args: argparse.Namespace) -> dict[str, Any]:
    say(f"report: {args.report_targets} targets, a month of 1-minute history on PostgreSQL")
    return report_month.run(
        args.report_targets, "2026-10", "slamon_bench_h3_report", args.report_raw_targets
    )


RUNNERS = {"probe": run_probe, "detect": run_detect, "storage": run_storage, "report": run_report}


# --- the table (pure: rows from results) ----------------------------------------------------


@dataclass(frozen=True, slots=True)
class Row:
    metric: str
    slamon: float | str | None
    peer: float | str | None
    goal: str = ""
    met: bool | None = None

    @property
    def ratio(self) -> float | None:
        if (
            isinstance(self.slamon, int | float)
            and isinstance(self.peer, int | float)
            and self.peer
        ):
            return self.slamon / self.peer
        return None


def at_most(ratio: float | None, limit: float) -> bool | None:
    return None if ratio is None else ratio <= limit


def probe_rows(key: str, case: dict[str, Any]) -> list[Row]:
    n, interval = key.split("@")
    p, lite, pg = case["peer"], case.get("slamon_sqlite"), case.get("slamon_postgres")
    rows = []
    graded = n == "1000" and interval == "5s"
    for label, side, field in (
        ("embedded SQLite, all slamon processes", lite, "cpu_ms_per_probe"),
        ("PG+Redis, slamon processes", pg, "cpu_ms_per_probe"),
        ("PG+Redis, + PG backends + shared redis-server", pg, "cpu_ms_per_probe_with_servers"),
    ):
        if side is None:
            continue
        row = Row(f"CPU ms/probe {key} ({label})", side[field], p["cpu_ms_per_probe"])
        if graded:
            row = Row(row.metric, row.slamon, row.peer, "≤ 0.5× peer", at_most(row.ratio, 0.5))
        rows.append(row)
    for label, side in (("SQLite", lite), ("PG+Redis", pg)):
        if side is None:
            continue
        rows.append(
            Row(
                f"probes/s {key} ({label}; offered {int(n) / float(interval[:-1]):g})",
                side["probes_per_s"],
                p["probes_per_s"],
            )
        )
        goal, met = "", None
        if key == f"{STRESS[0]}@{STRESS[1]:g}s":
            goal, met = f"slamon ≥ {ON_SCHEDULE:.0%} on time", on_schedule(side)
        rows.append(
            Row(
                f"missed+late of {side['expected']} {key} ({label})",
                side["missed"] + side["late"],
                p["missed"] + p["late"],
                goal,
                met,
            )
        )
    if lite is not None:
        rss = lite["peak_rss_mib"]["slamon"]
        rows.append(
            Row(
                f"peak RSS MiB {key} (SQLite, slamon tree)",
                rss,
                p["peak_rss_mib"],
                "slamon ≤ 150 MiB" if graded else "",
                rss <= RSS_GOAL_MIB if graded else None,
            )
        )
    for label, side in (("SQLite", lite), ("PG+Redis", pg)):
        for process, cost in sorted((side or {}).get("cpu_ms_per_probe_by_process", {}).items()):
            peak = side["peak_rss_mib_by_process"].get(process) if side else None
            rows.append(Row(f"  CPU ms/probe {key} ({label}, {process})", cost, None))
            rows.append(Row(f"  peak RSS MiB {key} ({label}, {process})", peak, None))
    return rows


def on_schedule(side: dict[str, Any]) -> bool:
    return (side["executed"] - side["late"]) >= ON_SCHEDULE * side["expected"]


def detect_rows(found: dict[str, Any]) -> list[Row]:
    """Detection at 2 confirmations on both; recovery as shipped (2) beside the peer's rule (1),
    where the goal is graded: at the same confirmations."""
    p = found["peer"]
    cases = [
        ("detection_s", "detection", found["slamon"], "2 confirmations", True),
        ("recovery_s", "recovery", found["slamon"], "slamon 2 confirmations, peer 1", False),
    ]
    if "slamon_r1" in found:
        cases.append(("recovery_s", "recovery", found["slamon_r1"], "1 confirmation", True))
    rows = []
    for name, label, s, settings, graded in cases:
        for stat in ("min", "median", "max"):
            row = Row(f"{label} s, {stat} (5 s interval, {settings})", s[name][stat], p[name][stat])
            if graded and stat == "median":
                row = Row(row.metric, row.slamon, row.peer, "≤ 1× peer", at_most(row.ratio, 1.0))
            rows.append(row)
        # without the wait for the next probe (a random phase, the same on both sides)
        after = name.replace("_s", "_after_probe_s")
        if after in s and after in p:
            where = "failing" if label == "detection" else "good"
            metric = f"{label} s after the first {where} probe, median ({settings})"
            rows.append(Row(metric, s[after]["median"], p[after]["median"]))
    return rows


def storage_rows(found: dict[str, Any]) -> list[Row]:
    s, p = found["slamon"], found["peer"]
    wal = p["wal_bytes_per_probe"]
    raw_tier = s["postgres_raw_bytes_per_probe"] + s.get(
        "postgres_minute_rollup_bytes_per_probe", 0
    )
    rows = [
        Row(
            "raw bytes/probe (PostgreSQL probe_results vs Prometheus WAL)",
            s["postgres_raw_bytes_per_probe"],
            wal,
        ),
        Row(
            "raw + minute-rollup bytes/probe (PostgreSQL; kept as long as raw)",
            round(raw_tier, 1),
            wal,
        ),
        Row(
            "raw bytes/probe (SQLite file growth vs Prometheus WAL)",
            s["sqlite_raw_bytes_per_probe"],
            wal,
        ),
        Row(
            "long-term bytes/probe (hour rollups+outages+windows vs compacted block)",
            s["postgres_long_term_bytes_per_probe"],
            p["compacted_bytes_per_probe"],
        ),
    ]
    goals = ["≤ 1× peer WAL", "≤ 1× peer WAL", "≤ 1× peer WAL", "≤ 0.1× peer"]
    limits = [1.0, 1.0, 1.0, 0.1]
    return [
        Row(r.metric, r.slamon, r.peer, goal, at_most(r.ratio, limit))
        for r, goal, limit in zip(rows, goals, limits, strict=True)
    ]


def report_rows(found: dict[str, Any]) -> list[Row]:
    n = found["targets"]
    scaled = "" if found["raw_targets"] == n else f", scaled from {found['raw_targets']}"
    return [
        Row(
            f"monthly report s, {n} targets (gather+assemble) vs count(*) floor{scaled}",
            found["report_s"],
            found["count_star_s_at_targets"],
            "< 2 s",
            found["report_s"] < 2.0,
        ),
        Row(f"monthly report + JSON render s, {n} targets", found["report_with_json_s"], None),
    ]


def rows_of(results: dict[str, Any]) -> list[Row]:
    rows = []
    for key, case in results.get("probe", {}).items():
        rows += probe_rows(key, case)
    if "detect" in results:
        rows += detect_rows(results["detect"])
    if "storage" in results:
        rows += storage_rows(results["storage"])
    if "report" in results:
        rows += report_rows(results["report"])
    return rows


def cell(value: object, digits: int = 3) -> str:
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "NO"
    if isinstance(value, float):
        return f"{value:.{digits}g}" if abs(value) < 1000 else f"{value:,.0f}"
    return str(value)


def table(rows: list[Row]) -> str:
    header = ("metric", "slamon", "peer", "ratio s/p", "goal", "met?")
    lines = [
        (r.metric, cell(r.slamon), cell(r.peer), cell(r.ratio, 2), r.goal or "—", cell(r.met))
        for r in rows
    ]
    widths = [max(len(x[i]) for x in [header, *lines]) for i in range(len(header))]

    def fmt(cols: tuple[str, ...]) -> str:
        return "| " + " | ".join(c.ljust(w) for c, w in zip(cols, widths, strict=True)) + " |"

    rule = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    return "\n".join([fmt(header), rule, *(fmt(line) for line in lines)])


# --- command line ---------------------------------------------------------------------------


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument(
        "--only", default=",".join(WORKLOADS), help="comma list of probe,detect,storage,report"
    )
    parser.add_argument("--targets", default="200,1000", help="probe-cost target counts")
    parser.add_argument("--interval", type=float, default=5.0)
    parser.add_argument("--window", type=float, default=60.0, help="measured seconds per run")
    parser.add_argument("--warmup", type=float, default=15.0)
    parser.add_argument(
        "--stress", action="store_true", help=f"also {STRESS[0]} targets every {STRESS[1]:g} s"
    )
    parser.add_argument("--repetitions", type=int, default=5)
    parser.add_argument("--storage-targets", type=int, default=1000)
    parser.add_argument("--report-targets", type=int, default=1000)
    parser.add_argument(
        "--report-raw-targets",
        type=int,
        default=None,
        help="raw rows for only this many (floor scaled)",
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="200 targets, 30 s windows, 3 reps, report at 100 targets",
    )
    parser.add_argument(
        "--targets-server",
        choices=("nginx", "python"),
        default="nginx",
        help="what serves the targets (nginx is installed from Debian's packages when missing)",
    )
    parser.add_argument("--json", type=Path, default=Path("/tmp/slamon-bench/latest.json"))
    parser.add_argument(
        "--table-from", type=Path, help="print the table of an earlier JSON; run nothing"
    )
    args = parser.parse_args(argv)
    if args.quick:
        args.targets, args.window, args.warmup, args.repetitions = "200", 30.0, 10.0, 3
        args.storage_targets, args.report_targets = 200, 100
    args.targets = [int(n) for n in args.targets.split(",")]
    args.only = [w.strip() for w in args.only.split(",")]
    unknown = set(args.only) - set(WORKLOADS)
    if unknown:
        parser.error(f"--only: unknown workload(s) {', '.join(sorted(unknown))}")
    return args


def machine() -> dict[str, Any]:
    cpu = next(
        (
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("model name")
        ),
        "?",
    )
    mem_kib = int(Path("/proc/meminfo").read_text().split()[1])
    return {
        "cpus": os.cpu_count(),
        "cpu_model": cpu,
        "ram_gib": round(mem_kib / 1024 / 1024, 1),
        "kernel": platform.release(),
        "python": platform.python_version(),
        "peer": peer.versions(),
        "slamon": importlib.metadata.version("slamon"),
        "slamon_bin": str(slamon_side.SLAMON_BIN),
        "commit": commit(),
    }


def commit() -> str:
    """The commit of the code this run measures (the benchmark's own checkout)."""
    done = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"],
        cwd=Path(__file__).resolve().parent,
        capture_output=True,
        text=True,
    )
    return done.stdout.strip() or "?"


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    if args.table_from:
        print(table(rows_of(json.loads(args.table_from.read_text()))))
        return
    if {"probe", "detect", "storage"} & set(args.only):
        peer.ensure_installed()
    TargetsServer.server = args.targets_server
    began = time.monotonic()
    results: dict[str, Any] = {
        "machine": machine(),
        "started": datetime.now(UTC).isoformat(timespec="seconds"),
        "targets_server": args.targets_server,
    }
    for workload in WORKLOADS:
        if workload in args.only:
            results[workload] = RUNNERS[workload](args)
            args.json.parent.mkdir(parents=True, exist_ok=True)
            args.json.write_text(json.dumps(results, indent=1, default=str))
    results["elapsed_s"] = round(time.monotonic() - began)
    args.json.write_text(json.dumps(results, indent=1, default=str))
    print()
    print(table(rows_of(results)))
    print(f"\nall figures: {args.json} ({results['elapsed_s']} s)")
    print(f"commit {results['machine']['commit']}, slamon {results['machine']['slamon_bin']}")


if __name__ == "__main__":
    main()
