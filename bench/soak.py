"""Soak: the real product (two ``slamon worker`` + ``slamon beat`` on PostgreSQL and Redis) probing
N local HTTP targets for a long time while faults are injected on a schedule, then the figures
that say whether anything was lost or grew.

    .venv/bin/python bench/soak.py                                  # 2,000 targets, 10 s, 30 min
    .venv/bin/python bench/soak.py --targets 500 --duration 300 --fault-every 120

Faults, every ``--fault-every`` seconds (each cycle, in this order):

* ``--fault-share`` of the targets (a fresh slice each cycle) answer 503 for ``--fault-length`` s
  (bench/soak_targets.py's control port): each must give one ``target_down`` firing and one
  resolved alert at the webhook receiver;
* the probe worker is killed with SIGKILL and restarted 5 s later (a second worker, for the
  light queues, lives the whole soak so its memory is seen over a long life);
* the webhook receiver stops for ``--fault-length`` s (deliveries must be retried, not lost).

With ``--ha`` the layout is the HA one (docs/operations.md): two ``slamon worker --beat`` (one
leads the schedulers through the lease, the other stands by) and two ``slamon api``; each cycle
a slice of targets answers 503 and the worker that leads is killed with SIGKILL (restarted
5 s later, as a standby). Printed besides: the takeover time of each kill (from the SIGKILL to
the lease held by the other worker), who led, the messages the workers refused (fenced: a
deposed leader's; repeated: a slot run already), and whether both APIs answered throughout.

    .venv/bin/python bench/soak.py --ha --targets 1000 --duration 1800 --fault-every 300

Printed at the end: probes scheduled vs executed (from ``probe_results``, read as they land:
bench/probe_tape.py) and missed slots,
schedule drift p50/p99/max (gap between consecutive probes of a target minus the interval),
RSS at start and end of each process, alerts expected vs delivered (unique Idempotency-Keys,
signatures verified), duplicates the receiver dropped. The database ``slamon_soak`` and Redis
database 8 are emptied first. Not run by CI.
"""

from __future__ import annotations

import argparse
import http.server
import json
import math
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

import redis
import sqlalchemy as sa
from probe_tape import ProbeTape

from monitor.alerts.channels.webhook import SIGNATURE_HEADER, verify_signature

SECRET = "soak-webhook-secret-0123456789"
RESTART_AFTER_S = 5.0
WARM_UP_S = 60.0


# --------------------------------------------------------------------------- the plan (pure)


@dataclass(frozen=True, slots=True)
class Fault:
    at: float  # seconds after the measured window opens
    kind: str  # targets_503 | kill_worker | receiver_down
    first: int = 0
    count: int = 0
    seconds: float = 0.0


def fault_plan(
    duration: float, every: float, share: float, length: float, n: int, ha: bool = False
) -> list[Fault]:
    """The faults of each cycle, spread over it; windows that would not close before the end
    are left out (their alerts could not be counted). In the HA layout the worker killed is
    the one that leads, while its targets are down, and the receiver stays up."""
    per_cycle = max(1, round(n * share))
    plan: list[Fault] = []
    cycle = 0
    while cycle * every < duration:
        start = cycle * every
        first = (cycle * per_cycle) % n  # a fresh slice each cycle: one outage per target
        plan.append(Fault(start + 0.1 * every, "targets_503", first, per_cycle, length))
        if ha:
            plan.append(Fault(start + 0.1 * every + length / 2, "kill_leader"))
        else:
            plan.append(Fault(start + 0.45 * every, "kill_worker"))
            plan.append(Fault(start + 0.6 * every, "receiver_down", seconds=length))
        cycle += 1
    return [f for f in plan if f.at + f.seconds < duration]


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


@dataclass
class ProbeFigures:
    rows: int = 0
    slots: int = 0  # probes on the schedule (confirmation retries excluded)
    retries: int = 0
    missed: int = 0  # slots with no probe while the worker was up: lost
    missed_worker_down: int = 0  # slots that fell while the worker was killed and restarting
    drift: list[float] = field(default_factory=list)
    drift_worker_up: list[float] = field(default_factory=list)


Window = tuple[datetime, datetime]


def overlaps(start: datetime, end: datetime, windows: list[Window]) -> bool:
    return any(start < w_end and w_start < end for w_start, w_end in windows)


def probe_figures(
    times: dict[int, list[tuple[datetime, bool | None]]],
    interval: float,
    worker_down: Sequence[Window] = (),
) -> ProbeFigures:
    """Drift and missed slots from each target's probes ``(at, ok)``. A probe under half an
    interval after a failed one (or failing itself) is a confirmation retry, not a slot. A gap
    counts as k missed slots once it reaches (k + 1) intervals less 10 % (a late probe is
    drift, not a loss). Gaps that overlap a window when the worker was down are counted apart."""
    figures = ProbeFigures()
    for probes in times.values():
        figures.rows += len(probes)
        last: tuple[datetime, bool | None] | None = None
        for at, ok in probes:
            if last is None:
                figures.slots += 1
                last = (at, ok)
                continue
            gap = (at - last[0]).total_seconds()
            if gap < interval / 2 and not (ok and last[1]):
                figures.retries += 1
                last = (last[0], ok)
                continue
            figures.slots += 1
            figures.drift.append(gap - interval)
            missed = max(0, math.floor((gap + 0.1 * interval) / interval) - 1)
            if overlaps(last[0], at, list(worker_down)):
                figures.missed_worker_down += missed
            else:
                figures.missed += missed
                figures.drift_worker_up.append(gap - interval)
            last = (at, ok)
    return figures


# --------------------------------------------------------------------------- the webhook receiver


class Receiver:
    """A local webhook receiver that can be stopped and started on the same port; it keeps
    every verified delivery by Idempotency-Key."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.lock = threading.Lock()
        self.by_key: dict[str, dict[str, object]] = {}
        self.duplicates = 0
        self.bad_signatures = 0
        self.server: http.server.ThreadingHTTPServer | None = None

    def start(self) -> None:
        owner = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                owner.record(self.headers, body)
                self.send_response(204)
                self.end_headers()

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
            self.server = None

    def record(self, headers: object, body: bytes) -> None:
        signature = headers.get(SIGNATURE_HEADER)  # type: ignore[attr-defined]
        key = headers.get("Idempotency-Key", "")  # type: ignore[attr-defined]
        with self.lock:
            if not verify_signature(SECRET, signature, body, datetime.now(UTC)):
                self.bad_signatures += 1
            elif key in self.by_key:
                self.duplicates += 1
            else:
                self.by_key[key] = json.loads(body)

    def target_alerts(self) -> set[tuple[str, str, str]]:
        """(target, event, started_at) of every target_down message received."""
        with self.lock:
            out = set()
            for message in self.by_key.values():
                alert = message["alert"]
                if alert["rule"] == "target_down":  # type: ignore[index]
                    target = alert["labels"]["target"]  # type: ignore[index]
                    out.add((target, message["event"], alert["started_at"]))  # type: ignore[index]
            return out


# --------------------------------------------------------------------------- processes


def rss_mb(pid: int) -> float | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


@dataclass
class Process:
    """One product process (restarts count as new incarnations for memory figures)."""

    name: str
    argv: list[str]
    env: dict[str, str]
    log: Path
    popen: subprocess.Popen[bytes] | None = None
    samples: list[list[tuple[float, float]]] = field(default_factory=list)

    def start(self) -> None:
        with self.log.open("ab") as out:
            self.popen = subprocess.Popen(
                self.argv,
                env=self.env,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        self.samples.append([])

    def kill(self) -> None:
        if self.popen is not None:
            os.killpg(self.popen.pid, signal.SIGKILL)
            self.popen.wait()

    def stop(self) -> None:
        if self.popen is None or self.popen.poll() is not None:
            return
        os.killpg(self.popen.pid, signal.SIGTERM)
        try:
            self.popen.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.kill()

    def sample(self, now: float) -> None:
        if self.popen is not None and self.popen.poll() is None:
            value = rss_mb(self.popen.pid)
            if value is not None:
                self.samples[-1].append((now, value))


# --------------------------------------------------------------------------- the HA layout


@dataclass
class HaLayout:
    workers: list[Process] = field(default_factory=list)
    apis: list[Process] = field(default_factory=list)
    ports: list[int] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Takeover:
    killed_at: datetime
    seconds: float  # from the SIGKILL until the lease is held by another scheduler
    old: str
    new: str
    victim: Process


def lease_holder(engine: sa.Engine) -> str:
    """The scheduler that holds the lease now ('' when none does)."""
    query = sa.text(
        "SELECT holder FROM scheduler_leases WHERE name = 'beat' AND expires_at > now()"
    )
    with engine.connect() as connection:
        return connection.execute(query).scalar() or ""


def kill_leader(engine: sa.Engine, workers: list[Process]) -> Takeover:
    """SIGKILL the worker that leads, and time until another one holds the lease."""
    old = lease_holder(engine)
    pid = int(old.rsplit(":", 1)[1])
    victim = next(w for w in workers if w.popen is not None and w.popen.pid == pid)
    victim.kill()
    killed, killed_at = time.monotonic(), datetime.now(UTC)
    while time.monotonic() - killed < 120:
        new = lease_holder(engine)
        if new and new != old:
            return Takeover(killed_at, time.monotonic() - killed, old, new, victim)
        time.sleep(0.05)
    raise SystemExit(f"nobody took the lease over from {old} within 120 s")


def api_answers(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=5) as answer:
            return bool(answer.status == 200)
    except OSError:
        return False


def report_ha(run: dict[str, object], engine_url: str) -> None:
    takeovers: list[Takeover] = run["takeovers"]  # type: ignore[assignment]
    seconds = [t.seconds for t in takeovers]
    print(
        f"leader kills                {len(takeovers)}; takeover "
        + ", ".join(f"{s:.2f} s" for s in seconds)
        + (f"  (max {max(seconds):.2f} s)" if seconds else "")
    )
    for t in takeovers:
        print(f"    {t.killed_at:%H:%M:%S}  {t.old} -> {t.new}")
    engine = sa.create_engine(engine_url)
    with engine.connect() as connection:
        fenced, repeated = connection.execute(
            sa.text(
                "SELECT coalesce(sum(fenced), 0), coalesce(sum(repeated), 0) FROM schedule_slots"
            )
        ).one()
    engine.dispose()
    print(f"messages refused            fenced {fenced}, repeated {repeated}")
    checks, failures = run["api_checks"]  # type: ignore[misc]
    print(f"API answers (both, 1/s)     {checks - failures} of {checks}")


# --------------------------------------------------------------------------- setup


def recreate_database(url: str) -> None:
    target = sa.make_url(url)
    admin = sa.create_engine(target.set(database="postgres"), isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        name = target.database
        connection.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        connection.execute(sa.text(f'CREATE DATABASE "{name}"'))
    admin.dispose()


def write_config(path: Path, args: argparse.Namespace) -> None:
    targets = [
        {
            "name": f"soak-{i:05d}",
            "kind": "http",
            "url": f"http://127.0.0.1:{args.base_port + i}/",
            "interval": args.interval,
            "timeout": min(3.0, args.interval),
        }
        for i in range(args.targets)
    ]
    config = {
        "targets": targets,
        "channels": [
            {
                "name": "soak",
                "kind": "webhook",
                "url": f"http://127.0.0.1:{args.receiver_port}/hook",
                "secret": SECRET,
            }
        ],
        "routes": [{"match": {}, "channels": ["soak"]}],
        "alerts": {"retry_base": 2.0, "retry_max": 20.0},
        "schedule": {"deliveries": 2.0},
    }
    path.write_text(json.dumps(config))  # JSON is YAML


def control(port: int, first: int, count: int, seconds: float) -> None:
    url = f"http://127.0.0.1:{port}/fail?first={first}&count={count}&seconds={seconds}"
    urllib.request.urlopen(urllib.request.Request(url, method="POST"), timeout=5).close()


def wait_for_targets(engine: sa.Engine, count: int, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with engine.connect() as connection:
            if connection.execute(sa.text("SELECT count(*) FROM targets")).scalar() == count:
                time.sleep(2)  # the worker's sync commits, then it starts consuming
                return
        time.sleep(1)
    raise SystemExit("the worker did not sync the targets; see the logs in the work folder")


def wait_for_first_probes(engine: sa.Engine, timeout: float) -> datetime:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with engine.connect() as connection:
            first = connection.execute(sa.text("SELECT min(at) FROM probe_results")).scalar()
        if first is not None:
            return first.replace(tzinfo=UTC) if first.tzinfo is None else first
        time.sleep(1)
    raise SystemExit("no probe results after the warm-up; see the logs in the work folder")


def first_probe_after(tape: ProbeTape, moment: datetime) -> datetime:
    """When the restarted worker stored its first probe (the end of its outage)."""
    stamps = [t for v in tape.times(moment, datetime.now(UTC)).values() for t in v[:1]]
    return datetime.fromtimestamp(min(stamps), UTC) if stamps else datetime.now(UTC)


# --------------------------------------------------------------------------- the run


def run(args: argparse.Namespace) -> None:
    work = Path(tempfile.mkdtemp(prefix="slamon-soak-"))
    recreate_database(args.database_url)
    redis.Redis.from_url(args.broker_url).flushdb()
    config_path = work / "slamon.yaml"
    # `slamon beat` does not create its state folder with a Redis broker (only the filesystem
    # transport's folders are made): without this it dies on its schedule file.
    (work / "state").mkdir()
    write_config(config_path, args)
    env = {
        **os.environ,
        "SLAMON_DATABASE_URL": args.database_url,
        "SLAMON_BROKER_URL": args.broker_url,
        "SLAMON_CONFIG": str(config_path),
        "SLAMON_STATE_DIR": str(work / "state"),
        "SLAMON_VANTAGE": "soak",
    }
    slamon = [str(Path(sys.executable).parent / "slamon")]
    targets = Process(
        "targets",
        [
            sys.executable,
            str(HERE / "soak_targets.py"),
            "--base-port",
            str(args.base_port),
            "--count",
            str(args.targets),
            "--control-port",
            str(args.control_port),
        ],
        env,
        work / "targets.log",
    )
    # The probe worker is the one killed each cycle; a second worker takes the light queues
    # (dispatch, deliveries, feeds) and lives the whole soak, so its memory is seen over it.
    worker = Process(
        "worker",
        [
            *slamon,
            "worker",
            "--pool=threads",
            f"--concurrency={args.concurrency}",
            "--queues=probes",
            f"--loglevel={args.loglevel}",
        ],
        env,
        work / "worker.log",
    )
    steady = Process(
        "steady",
        [
            *slamon,
            "worker",
            "--pool=threads",
            "--concurrency=8",
            "--queues=default,deliveries,feeds",
            f"--loglevel={args.loglevel}",
        ],
        env,
        work / "steady.log",
    )
    beat = Process("beat", [*slamon, "beat", "--loglevel=WARNING"], env, work / "beat.log")
    processes = [targets, worker, steady, beat]
    ha = HaLayout()
    if args.ha:  # two workers that both run beat, two APIs
        ha = HaLayout(
            workers=[
                Process(
                    f"worker-{x}",
                    [
                        *slamon,
                        "worker",
                        "--beat",
                        "--pool=threads",
                        f"--concurrency={args.concurrency}",
                        f"--loglevel={args.loglevel}",
                    ],
                    env,
                    work / f"worker-{x}.log",
                )
                for x in "ab"
            ],
            apis=[
                Process(
                    f"api-{x}", [*slamon, "api", "--port", str(port)], env, work / f"api-{x}.log"
                )
                for x, port in (("a", args.api_port), ("b", args.api_port + 1))
            ],
            ports=[args.api_port, args.api_port + 1],
        )
        worker = ha.workers[0]
        processes = [targets, *ha.workers, *ha.apis]
    receiver = Receiver(args.receiver_port)
    engine = sa.create_engine(args.database_url)
    print(f"work folder {work}", flush=True)
    try:
        subprocess.run([*slamon, "migrate"], env=env, check=True, capture_output=True)
        targets.start()
        receiver.start()
        time.sleep(2)
        worker.start()
        # Workers and beat all sync the config's targets at start; started together on an
        # empty database they race on the same inserts (the loser exits). The others wait.
        wait_for_targets(engine, args.targets, timeout=120)
        for process in processes:
            if process.popen is None and process is not targets:
                process.start()
        first = wait_for_first_probes(engine, timeout=120)
        time.sleep(args.interval)  # the first round is a burst of every target at once
        expected = soak(args, worker, processes, receiver, engine, ha)
    finally:
        # beat and the workers first: with the targets server gone first, the still-running
        # workers opened an outage (and alerts) for every target during the teardown
        for process in reversed(processes):
            process.stop()
        receiver.stop()
        engine.dispose()
    print(f"first probe at {first:%H:%M:%S}", flush=True)
    report(args, expected, processes, receiver)
    if args.ha:
        report_ha(expected, engine_url=args.database_url)


def soak(
    args: argparse.Namespace,
    worker: Process,
    processes: list[Process],
    receiver: Receiver,
    engine: sa.Engine,
    ha: HaLayout,
) -> dict[str, object]:
    """Run the fault plan over the measured window, drain the outbox, and gather figures."""
    plan = fault_plan(
        args.duration, args.fault_every, args.fault_share, args.fault_length, args.targets, args.ha
    )
    takeovers: list[Takeover] = []
    restarts: list[tuple[float, Process]] = []
    api_failures = api_checks = 0
    expected_targets: set[str] = set()
    kills: list[datetime] = []
    opened, opened_at = time.monotonic(), datetime.now(UTC)
    # the rollup deletes routine rows minutes after their probe: read them as they land
    tape = ProbeTape(engine, opened_at)
    tape.start()
    pending = list(plan)
    restart_at: float | None = None
    receiver_back_at: float | None = None
    while (elapsed := time.monotonic() - opened) < args.duration:
        while pending and pending[0].at <= elapsed:
            fault = pending.pop(0)
            print(f"[{elapsed:6.0f}s] {fault.kind} {fault.count or ''}", flush=True)
            if fault.kind == "targets_503":
                control(args.control_port, fault.first, fault.count, fault.seconds)
                expected_targets |= {
                    f"soak-{i:05d}" for i in range(fault.first, fault.first + fault.count)
                }
            elif fault.kind == "kill_worker":
                worker.kill()
                kills.append(datetime.now(UTC))
                restart_at = elapsed + RESTART_AFTER_S
            elif fault.kind == "kill_leader":
                takeover = kill_leader(engine, ha.workers)
                takeovers.append(takeover)
                kills.append(takeover.killed_at)
                restarts.append((elapsed + RESTART_AFTER_S, takeover.victim))
                print(
                    f"[{elapsed:6.0f}s]   {takeover.old} killed; {takeover.new} leads after "
                    f"{takeover.seconds:.2f} s",
                    flush=True,
                )
            else:
                receiver.stop()
                receiver_back_at = elapsed + fault.seconds
        if restart_at is not None and elapsed >= restart_at:
            worker.start()
            restart_at = None
        for due, process in [r for r in restarts if r[0] <= elapsed]:
            process.start()
            restarts.remove((due, process))
        for port in ha.ports:
            api_checks += 1
            api_failures += not api_answers(port)
        if receiver_back_at is not None and elapsed >= receiver_back_at:
            receiver.start()
            receiver_back_at = None
        for process in processes:
            process.sample(elapsed)
            waiting = process is worker or any(p is process for _, p in restarts)
            if not waiting and process.popen and process.popen.poll() is not None:
                raise SystemExit(f"{process.name} exited; see {process.log}")
        time.sleep(1)
    closed_at = datetime.now(UTC)
    if restart_at is not None:
        worker.start()
    if receiver_back_at is not None:
        receiver.start()
    want = {(t, e) for t in expected_targets for e in ("firing", "resolved")}
    drain_until = time.monotonic() + args.drain
    while time.monotonic() < drain_until:
        got = {(t, e) for t, e, _ in receiver.target_alerts()}
        if want <= got:
            break
        for process in processes:
            process.sample(time.monotonic() - opened)
        time.sleep(2)
    for _, process in restarts:
        process.start()
    tape.stop()
    times = tape.outcomes(opened_at, closed_at)
    down = [(k, first_probe_after(tape, k + timedelta(seconds=RESTART_AFTER_S))) for k in kills]
    if args.ha:  # the window a kill may cost: until the other worker leads, plus an interval
        down = [(t.killed_at, t.killed_at + timedelta(seconds=t.seconds + args.interval))
                for t in takeovers]  # fmt: skip
    return {
        "takeovers": takeovers,
        "api_checks": (api_checks, api_failures),
        "window_s": (closed_at - opened_at).total_seconds(),
        "worker_down": down,
        "figures": probe_figures(times, args.interval, down),
        "want": want,
        "faults": plan,
    }


def report(
    args: argparse.Namespace,
    run: dict[str, object],
    processes: list[Process],
    receiver: Receiver,
) -> None:
    figures: ProbeFigures = run["figures"]  # type: ignore[assignment]
    window = float(run["window_s"])  # type: ignore[arg-type]
    scheduled = int(args.targets * window / args.interval)
    want: set[tuple[str, str]] = run["want"]  # type: ignore[assignment]
    received = receiver.target_alerts()
    got = {(t, e) for t, e, _ in received}
    print(f"\n== soak: {args.targets} targets every {args.interval:g} s for {window:.0f} s ==")
    print(f"probes scheduled (N x T/i)  {scheduled}")
    print(
        f"probes executed (on slot)   {figures.slots}  ({100 * figures.slots / max(1, scheduled):.2f} %)"
    )
    print(f"  + confirmation retries    {figures.retries}")
    due = figures.slots + figures.missed + figures.missed_worker_down
    print(f"slots due (executed+missed) {due}")
    down: list[Window] = run["worker_down"]  # type: ignore[assignment]
    print(f"missed slots, worker up     {figures.missed}  (lost)")
    # in the HA layout "worker down" is a kill's window: SIGKILL to takeover, plus an interval
    gaps = [(end - start).total_seconds() for start, end in down]
    print(
        f"missed slots, worker down   {figures.missed_worker_down}  "
        f"({len(down)} kills, {sum(gaps):.0f} s from SIGKILL to the first probe after restart)"
    )
    if args.ha:  # the windows are the takeovers (plus an interval), not the restarts
        print("kill window (takeover + i)  " + ", ".join(f"{g:.1f} s" for g in gaps))
    else:
        print(
            "restart gap per kill        "
            + ", ".join(f"{g:.1f} s" for g in gaps)
            + f"  (restarted {RESTART_AFTER_S:g} s after the kill, as a service manager would)"
        )
    drift = figures.drift
    print(
        "schedule drift              "
        f"p50 {percentile(drift, 50):+.3f} s  p99 {percentile(drift, 99):+.3f} s  "
        f"max {max(drift, default=float('nan')):+.3f} s"
    )
    up = figures.drift_worker_up
    print(
        "  outside worker outages    "
        f"p50 {percentile(up, 50):+.3f} s  p99 {percentile(up, 99):+.3f} s  "
        f"max {max(up, default=float('nan')):+.3f} s"
    )
    for process in processes:
        for n, incarnation in enumerate(process.samples):
            # memory from a process's first minute is start-up (imports, pools), not growth
            samples = [(t, v) for t, v in incarnation if t >= incarnation[0][0] + WARM_UP_S]
            if len(samples) < 2 or samples[-1][0] - samples[0][0] < WARM_UP_S:
                print(f"RSS {process.name:<8}#{n + 1}      (ran too briefly to measure growth)")
                continue
            (t0, first), (t1, last) = samples[0], samples[-1]
            per_hour = (last - first) / max(1.0, t1 - t0) * 3600
            peak = max(v for _, v in samples)
            print(
                f"RSS {process.name:<8}#{n + 1}      {first:7.1f} MB -> {last:7.1f} MB over "
                f"{t1 - t0:5.0f} s ({last - first:+.1f} MB, {100 * (last - first) / first:+.1f} %, "
                f"{per_hour:+.1f} MB/h; peak {peak:.1f} MB)"
            )
            for minute in range(5, int((t1 - t0) / 60) + 1, 5):  # the curve, every 5 minutes
                at = t0 + minute * 60
                value = min(samples, key=lambda s: abs(s[0] - at))[1]
                print(f"    +{minute:>3} min after warm-up  {value:7.1f} MB")
    print(f"alerts expected             {len(want)}  ({len(want) // 2} outages x firing+resolved)")
    print(f"alerts delivered (unique)   {len(want & got)}")
    print(f"  missing                   {len(want - got)}")
    print(f"  unexpected                {len(got - want)}")
    print(f"  duplicate keys dropped    {receiver.duplicates}")
    print(f"  bad signatures            {receiver.bad_signatures}")
    faults = run["faults"]
    kinds = defaultdict(int)
    for fault in faults:  # type: ignore[attr-defined]
        kinds[fault.kind] += 1
    print("faults injected             " + ", ".join(f"{k} x{v}" for k, v in sorted(kinds.items())))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--targets", type=int, default=2000)
    parser.add_argument("--interval", type=float, default=10.0)
    parser.add_argument("--duration", type=float, default=1800.0)
    parser.add_argument("--fault-every", type=float, default=300.0)
    parser.add_argument("--fault-share", type=float, default=0.05)
    parser.add_argument("--fault-length", type=float, default=60.0)
    parser.add_argument("--drain", type=float, default=240.0, help="max wait for late alerts")
    parser.add_argument("--concurrency", type=int, default=8, help="worker threads")
    parser.add_argument("--loglevel", default="WARNING", help="the worker's (logs: work folder)")
    parser.add_argument(
        "--database-url", default="postgresql+psycopg://postgres@127.0.0.1:5432/slamon_soak"
    )
    parser.add_argument("--broker-url", default="redis://127.0.0.1:6379/8")
    parser.add_argument("--base-port", type=int, default=26000)
    parser.add_argument("--control-port", type=int, default=25998)
    parser.add_argument("--receiver-port", type=int, default=25997)
    parser.add_argument("--ha", action="store_true", help="two workers with beat, two APIs")
    parser.add_argument("--api-port", type=int, default=25990, help="--ha: the APIs' first port")
    run(parser.parse_args())


if __name__ == "__main__":
    main()
