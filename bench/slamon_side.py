"""slamon's side of the side-by-side benchmark: the real product (`slamon run`: a worker with
embedded beat, a feeds worker and the API, each its own process) over N HTTP targets, on the
embedded default (SQLite + filesystem broker) or on PostgreSQL + Redis.

CPU is every process of the `slamon run` tree. On PostgreSQL + Redis the servers' share is
reported apart: the postgres backends connected to the benchmark database (exactly ours), and
the whole shared redis-server process (its delta includes anyone else using that server).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import sqlalchemy as sa

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from measure import (
    Meter,
    cmdline_matches,
    count_window,
    named,
    per_probe,
    tree,
    wait_for,
)
from probe_tape import ProbeTape, window_start

from monitor.db.engine import make_engine
from monitor.db.models import ProbeResult

# The slamon measured: SLAMON_BIN, or the one beside this interpreter. A runtime-only install
# (`pip install .`, as the README's first command) is what users run; the dev venv adds
# packages (rich and pygments, for schemathesis) that httpx then imports in every process.
SLAMON_BIN = Path(os.environ.get("SLAMON_BIN") or Path(sys.executable).parent / "slamon")
API_PORT = 18955
PG_ADMIN = "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
REDIS_URL = "redis://127.0.0.1:6379/12"


def slamon_environment() -> dict[str, str]:
    """This process's environment for the slamon measured, less ``PYTHONPATH``: the harness may
    need it to import a checkout, but it would make ``SLAMON_BIN``'s interpreter import that
    checkout's ``monitor`` too, not the install it was pointed at."""
    return {name: value for name, value in os.environ.items() if name != "PYTHONPATH"}


def config_text(
    urls: list[str],
    interval_s: float,
    timeout_s: float,
    webhook_url: str | None = None,
    recovery_confirmations: int | None = None,
) -> str:
    """slamon.yaml (as JSON, which YAML reads) for http targets probed every ``interval_s``;
    ``recovery_confirmations`` None keeps the default (as many as ``confirmations``)."""
    extra = (
        {} if recovery_confirmations is None else {"recovery_confirmations": recovery_confirmations}
    )
    targets = [
        {
            "name": f"bench-{i}",
            "kind": "http",
            "url": url,
            "interval": interval_s,
            "timeout": timeout_s,
            "confirmations": 2,
            **extra,
        }
        for i, url in enumerate(urls)
    ]
    config: dict[str, Any] = {"probes": {"retry_interval": "1s"}, "targets": targets}
    if webhook_url is not None:
        config["channels"] = [
            {"name": "bench", "kind": "webhook", "url": webhook_url, "secret": "s"}
        ]
    return json.dumps(config, indent=1)


def fresh_postgres(name: str) -> str:
    """Drop and create database ``name``; its SQLAlchemy URL."""
    admin = sa.create_engine(PG_ADMIN, isolation_level="AUTOCOMMIT")
    with admin.connect() as c:
        c.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        c.execute(sa.text(f'CREATE DATABASE "{name}"'))
    admin.dispose()
    return PG_ADMIN.rsplit("/", 1)[0] + f"/{name}"


def drop_postgres(name: str) -> None:
    admin = sa.create_engine(PG_ADMIN, isolation_level="AUTOCOMMIT")
    with admin.connect() as c:
        c.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    admin.dispose()


def flush_redis(url: str) -> None:
    import redis

    client = redis.Redis.from_url(url)
    client.flushdb()
    client.close()


@dataclass
class Backend:
    """Where slamon keeps its data and queue: ``sqlite`` (embedded) or ``postgres`` (+ Redis)."""

    kind: str
    database: str = "slamon_bench_h3_probe"

    def environment(self, folder: Path) -> dict[str, str]:
        if self.kind == "sqlite":
            return {"SLAMON_DATABASE_URL": f"sqlite:///{folder / 'slamon.db'}"}
        flush_redis(REDIS_URL)
        return {
            "SLAMON_DATABASE_URL": fresh_postgres(self.database),
            "SLAMON_BROKER_URL": REDIS_URL,
        }


@dataclass
class SlamonRun:
    """`slamon run` in a temporary folder with a generated config; stopped with Ctrl-C."""

    config: str
    backend: Backend
    folder: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="slamon-side-")))
    process: subprocess.Popen[bytes] | None = None
    database_url: str = ""
    run_args: tuple[str, ...] = ()  # more `slamon run` options, e.g. --probe-processes 2

    def __enter__(self) -> SlamonRun:
        (self.folder / "slamon.yaml").write_text(self.config)
        env = slamon_environment() | self.backend.environment(self.folder)
        env |= {"SLAMON_CONFIG": str(self.folder / "slamon.yaml")}
        env |= {"SLAMON_STATE_DIR": str(self.folder / ".slamon")}
        # older `slamon run`s on Redis did not create the folder their beat schedule lives in
        (self.folder / ".slamon").mkdir(exist_ok=True)
        self.database_url = env["SLAMON_DATABASE_URL"]
        log = (self.folder / "slamon.log").open("wb")
        self.process = subprocess.Popen(
            [str(SLAMON_BIN), "run", "--port", str(API_PORT), *self.run_args],
            cwd=self.folder,
            stdout=log,
            stderr=subprocess.STDOUT,
            env=env,
        )
        return self

    def __exit__(self, exc_type: object, *_exc: object) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if exc_type is None:  # keep config, log and database for a post-mortem when it failed
            shutil.rmtree(self.folder, ignore_errors=True)

    def engine(self) -> sa.Engine:
        return make_engine(self.database_url)


def probed_targets(engine: sa.Engine) -> int:
    """Targets with at least one stored probe (0 while the schema is still being created)."""
    try:
        with engine.connect() as c:
            query = sa.select(sa.func.count(sa.distinct(ProbeResult.target_id)))
            return int(c.execute(query).scalar_one())
    except sa.exc.DBAPIError:
        return 0


def meter_groups(run: SlamonRun) -> dict[str, Any]:
    assert run.process is not None
    groups = {"slamon": tree(run.process.pid)}
    if run.backend.kind == "postgres":
        groups["postgres_backends"] = cmdline_matches("postgres:", f" {run.backend.database} ")
        groups["redis_server_shared"] = named("redis-server")
    return groups


def probe_cost(
    urls: list[str],
    interval_s: float,
    window_s: float,
    warmup_s: float,
    backend: Backend,
    timeout_s: float,
    probe_processes: int | None = None,
) -> dict[str, Any]:
    """Run slamon over ``urls`` with ``probe_processes`` probe workers (`slamon run
    --probe-processes`; one probes about 1,500 targets a second): CPU of every slamon process (and, on PostgreSQL, of the
    database backends and the shared redis-server), probes done, missed, late, peak RSS."""
    config = config_text(urls, interval_s, timeout_s)
    # no flag by default: `slamon run` sizes its probe processes from the configured load
    run_args = ("--probe-processes", str(probe_processes)) if probe_processes else ()
    with SlamonRun(config, backend, run_args=run_args) as run:
        engine = run.engine()
        wait_for(
            lambda: probed_targets(engine) >= len(urls),
            120 + warmup_s,
            "slamon first round",
            1.0,
        )
        time.sleep(warmup_s)
        meter = Meter(meter_groups(run))
        start = datetime.now(UTC)
        tape = ProbeTape(engine, window_start(start, interval_s))  # read before compaction
        tape.start()
        meter.start()
        time.sleep(window_s)
        readings, end = meter.stop(), datetime.now(UTC)
        time.sleep(3.0)  # results land after their probe time
        tape.stop()
        times = tape.times(window_start(start, interval_s), end)
        engine.dispose()
    window = (end - start).total_seconds()
    executed, late = count_window(times, start.timestamp(), end.timestamp(), interval_s)
    expected = round(len(urls) * window_s / interval_s)
    cpu = {name: round(r.cpu_s, 2) for name, r in readings.items()}
    servers = sum(v for k, v in cpu.items() if k != "slamon")
    return {
        "targets": len(urls),
        "interval_s": interval_s,
        "backend": backend.kind,
        "window_s": round(window, 2),
        "expected": expected,
        "executed": executed,
        "missed": max(0, expected - executed),
        "late": late,
        "probes_per_s": round(executed / window, 1),
        "cpu_s": cpu,
        "cpu_ms_per_probe": per_probe(cpu["slamon"] * 1000, executed, 3),
        "cpu_ms_per_probe_with_servers": per_probe((cpu["slamon"] + servers) * 1000, executed, 3),
        "peak_rss_mib": {name: round(r.peak_rss_mib, 1) for name, r in readings.items()},
        "processes": readings["slamon"].pids_seen,
        "probe_processes": probe_processes or "auto",
        "cpu_ms_per_probe_by_process": {
            name: per_probe(cpu_s * 1000, executed, 3)
            for name, cpu_s in readings["slamon"].cpu_s_by_process.items()
        },
        "peak_rss_mib_by_process": readings["slamon"].peak_rss_mib_by_process,
    }
