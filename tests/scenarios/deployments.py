"""slamon as users run it, in the two shapes docs/DESIGN.md names, started from the console script:

* ``embedded``: ``slamon run`` in a folder of its own (SQLite file, Celery's filesystem broker),
  with every ``SLAMON_*`` variable removed from its environment;
* ``production``: ``slamon migrate``, then ``slamon worker``, ``slamon beat`` and ``slamon api``
  as separate processes on a fresh PostgreSQL database and an emptied Redis database.

Both answer the same questions (base URL, tokens, logs, a command run against the same database)
and can be stopped and started again on the same database, port and broker.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import redis
import sqlalchemy as sa

from tests.faults.servers import Processes, free_port
from tests.support import REDIS_URL, recreate_pg_database, slamon_command, unavailable, wait_for

START_S = 120.0  # a cold start on a busy 2-core machine: imports, migrations, first beat
LOG_TAIL_CHARS = 6000


def clean_environment() -> dict[str, str]:
    """This process's environment without any ``SLAMON_*`` variable."""
    return {k: v for k, v in os.environ.items() if not k.startswith("SLAMON_")}


def _answers(url: str) -> bool:
    try:
        return httpx.get(url, timeout=2).status_code == 200
    except httpx.TransportError:
        return False


@dataclass
class Deployment:
    """A running slamon. ``kind`` is ``embedded`` or ``production``."""

    kind: str
    root: Path
    env: dict[str, str]
    port: int = field(default_factory=free_port)
    admin_token: str = ""
    read_token: str = ""
    processes: Processes = field(init=False)

    def __post_init__(self) -> None:
        self.processes = Processes(self.env, self.root)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def database_url(self) -> str:
        """The database the processes write (``./slamon.db`` on the embedded default)."""
        return self.env.get("SLAMON_DATABASE_URL") or f"sqlite:///{self.root / 'slamon.db'}"

    # ------------------------------------------------------------------ commands

    def command(self, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        """``slamon *args`` against this deployment's database and config; fails the test with
        its output when it exits non-zero."""
        done = subprocess.run(
            [*slamon_command(), *args],
            cwd=self.root,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        assert done.returncode == 0, (
            f"slamon {' '.join(args)} failed:\n{done.stdout}\n{done.stderr}"
        )
        return done

    def prepare(self) -> None:
        """Schema and two API tokens (admin and read), before anything runs."""
        self.command("migrate")
        self.admin_token = self.command(
            "token", "create", "scenarios-admin", "--scope", "admin"
        ).stdout.strip()
        self.read_token = self.command(
            "token", "create", "scenarios-read", "--scope", "read"
        ).stdout.strip()

    # ------------------------------------------------------------------ processes

    def start(self) -> None:
        if self.kind == "embedded":
            self.processes.start("slamon-run", "run", f"--port={self.port}")
        else:
            worker = self.processes.start("worker", "worker")
            # beat waits for the worker: started together, their start-up target syncs race
            # (tests/faults/test_concurrent_start.py)
            wait_for(lambda: " ready." in worker.text() or not worker.alive(), timeout=START_S)
            self.processes.start("beat", "beat")
            self.processes.start("api", "api", f"--port={self.port}")
        wait_for(lambda: self.crashed() or _answers(f"{self.base_url}/healthz"), timeout=START_S)
        assert not self.crashed(), f"slamon did not start:\n{self.log_tail()}"

    def crashed(self) -> list[str]:
        return [p.name for p in self.processes.started if not p.alive()]

    def stop(self) -> None:
        self.processes.stop_all()
        self.processes.started.clear()

    def restart(self) -> None:
        """Every process stopped (TERM, as a service manager does), then started again on the
        same database, broker, port and config."""
        self.stop()
        self.start()

    def log_tail(self, chars: int = LOG_TAIL_CHARS) -> str:
        parts = []
        for log in sorted(self.root.glob("*.log")):
            text = log.read_text(errors="replace")
            parts.append(f"----- {log.name} (last {chars} characters) -----\n{text[-chars:]}")
        return "\n".join(parts)


def embedded(root: Path) -> Deployment:
    """``slamon run`` in ``root``: ./slamon.yaml, ./slamon.db, ./.slamon (all defaults)."""
    return Deployment("embedded", root, clean_environment())


def production(root: Path, database: str) -> Deployment:
    """Separate processes on PostgreSQL database ``database`` (created afresh) and the test
    Redis database (emptied); skipped when either server does not answer."""
    try:
        url = recreate_pg_database(database)
    except sa.exc.OperationalError as exc:
        unavailable("PostgreSQL", exc.orig)
    client = redis.Redis.from_url(REDIS_URL, socket_connect_timeout=2)
    try:
        client.flushdb()
    except redis.exceptions.ConnectionError as exc:
        unavailable("Redis", exc)
    finally:
        client.close()
    (root / "state").mkdir()
    env = {
        **clean_environment(),
        "SLAMON_DATABASE_URL": url,
        "SLAMON_BROKER_URL": REDIS_URL,
        "SLAMON_CONFIG": str(root / "slamon.yaml"),
        "SLAMON_STATE_DIR": str(root / "state"),
        "SLAMON_VANTAGE": "scenarios",
    }
    return Deployment("production", root, env)
