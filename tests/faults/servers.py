"""Throwaway PostgreSQL and Redis servers on loopback that a fault test may stop, kill and
start again mid-test (the machine's shared servers are never touched), and slamon processes
with their logs kept for the assertions."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import sqlalchemy as sa

from monitor.feeds.catalog import CATALOG
from tests.support import slamon_command, unavailable

PG_BIN = Path("/usr/lib/postgresql")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def port_open(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(0.2)
        return sock.connect_ex(("127.0.0.1", port)) == 0


def wait_until(predicate: object, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():  # type: ignore[operator]
            return
        time.sleep(0.05)
    raise RuntimeError(f"{what} within {timeout} s")


def pg_bindir() -> Path | None:
    """The newest installed PostgreSQL server's bin folder (Debian's layout), or $PATH's."""
    versions = sorted(PG_BIN.glob("*/bin/initdb"), key=lambda p: int(p.parent.parent.name))
    if versions:
        return versions[-1].parent
    found = shutil.which("initdb")
    return Path(found).parent if found else None


@dataclass
class PostgresServer:
    """A PostgreSQL cluster in a temporary folder, run by the ``postgres`` OS user when we are
    root (initdb refuses root), trust auth, listening on 127.0.0.1:``port`` only."""

    bindir: Path
    root: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="slamon-fault-pg-")))
    port: int = field(default_factory=free_port)

    @property
    def data(self) -> Path:
        return self.root / "data"

    @property
    def log(self) -> Path:
        return self.root / "server.log"

    def url(self, database: str = "postgres") -> str:
        return f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/{database}"

    def _as_owner(self, *argv: str) -> list[str]:
        if os.geteuid() == 0:
            return ["runuser", "-u", "postgres", "--", *argv]
        return list(argv)

    def init(self) -> None:
        if os.geteuid() == 0:
            shutil.chown(self.root, "postgres", "postgres")
        subprocess.run(
            self._as_owner(
                str(self.bindir / "initdb"), "-D", str(self.data), "-U", "postgres",
                "--auth=trust", "--no-sync", "-E", "UTF8",
            ),
            check=True,
            capture_output=True,
        )  # fmt: skip

    def start(self) -> None:
        options = (
            f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c fsync=off "
            "-c synchronous_commit=off -c full_page_writes=off -c shared_buffers=32MB"
        )
        subprocess.run(
            self._as_owner(
                str(self.bindir / "pg_ctl"), "-D", str(self.data), "-l", str(self.log),
                "-o", options, "-w", "-t", "60", "start",
            ),
            check=True,
            capture_output=True,
        )  # fmt: skip

    def stop(self, mode: str = "fast") -> None:
        """``fast`` disconnects every client; ``immediate`` is a crash (no clean shutdown)."""
        subprocess.run(
            self._as_owner(
                str(self.bindir / "pg_ctl"), "-D", str(self.data), "-m", mode, "-w", "stop"
            ),
            check=False,
            capture_output=True,
        )  # fmt: skip

    def running(self) -> bool:
        return port_open(self.port)

    def create_database(self, name: str) -> str:
        admin = sa.create_engine(self.url(), isolation_level="AUTOCOMMIT")
        try:
            with admin.connect() as connection:
                connection.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
                connection.execute(sa.text(f'CREATE DATABASE "{name}"'))
        finally:
            admin.dispose()
        return self.url(name)

    def destroy(self) -> None:
        self.stop("immediate")
        shutil.rmtree(self.root, ignore_errors=True)


@dataclass
class RedisServer:
    """A ``redis-server`` without persistence on 127.0.0.1:``port``: a restart loses every
    queued message, as a crashed production Redis without AOF would."""

    binary: str
    root: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="slamon-fault-redis-")))
    port: int = field(default_factory=free_port)
    process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        argv = [self.binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", ""]
        argv += ["--appendonly", "no", "--dir", str(self.root)]
        with (self.root / "server.log").open("ab") as log:
            self.process = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT)
        wait_until(lambda: port_open(self.port), 20, "redis did not listen")

    def stop(self, sig: int = signal.SIGKILL) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(sig)
            self.process.wait(timeout=20)
        self.process = None
        wait_until(lambda: not port_open(self.port), 10, "redis still listened")

    def destroy(self) -> None:
        self.stop()
        shutil.rmtree(self.root, ignore_errors=True)


def start_postgres() -> PostgresServer:
    bindir = pg_bindir()
    if bindir is None or not (bindir / "pg_ctl").exists():
        unavailable("PostgreSQL server binaries (initdb, pg_ctl)", "not installed")
    assert bindir is not None
    server = PostgresServer(bindir)
    try:
        server.init()
        server.start()
    except (subprocess.CalledProcessError, OSError) as exc:
        server.destroy()
        unavailable("a throwaway PostgreSQL server", getattr(exc, "stderr", exc))
    return server


def start_redis() -> RedisServer:
    binary = shutil.which("redis-server")
    if binary is None:
        unavailable("redis-server", "not installed")
    assert binary is not None
    server = RedisServer(binary)
    try:
        server.start()
    except (RuntimeError, OSError) as exc:
        server.destroy()
        unavailable("a throwaway Redis server", exc)
    return server


@dataclass
class Slamon:
    """A running ``slamon`` subcommand whose output goes to a log file."""

    name: str
    process: subprocess.Popen[bytes]
    log: Path

    def alive(self) -> bool:
        return self.process.poll() is None

    def text(self) -> str:
        return self.log.read_text(errors="replace")

    def children(self) -> list[int]:
        """Pids of this process's direct children (a prefork worker's pool processes)."""
        found = []
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                fields = stat.read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == self.process.pid:
                found.append(int(stat.parent.name))
        return found

    def stop(self) -> int | None:
        """TERM, then KILL after a grace period; the exit code (None if it was already gone)."""
        if self.process.poll() is not None:
            return self.process.returncode
        self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            return None


@dataclass
class Processes:
    """Every slamon process a test starts, stopped (and reaped) when the test ends."""

    env: dict[str, str]
    cwd: Path
    started: list[Slamon] = field(default_factory=list)

    def start(self, name: str, *args: str, env: dict[str, str] | None = None) -> Slamon:
        """``slamon *args``; ``env`` adds to (or overrides) the shared environment."""
        log = self.cwd / f"{name}.log"
        with log.open("ab") as out:
            process = subprocess.Popen(
                [*slamon_command(), *args],
                env={**self.env, **(env or {})},
                cwd=self.cwd,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        running = Slamon(name, process, log)
        self.started.append(running)
        return running

    def stop_all(self) -> None:
        for running in self.started:
            running.stop()
            # pool children left behind by a killed parent share its process group
            with contextlib.suppress(ProcessLookupError):
                os.killpg(running.process.pid, signal.SIGKILL)


def write_config(path: Path, body: str, providers: str = "") -> Path:
    """The YAML config ``body``, with every catalog feed emptied (these tests reach loopback
    only) and ``providers`` (list items, one per line) added to the providers list."""
    slugs = [spec.slug for spec in CATALOG if spec.feeds]
    silenced = "".join(f"  - {{slug: {slug}, feeds: []}}\n" for slug in slugs)
    path.write_text(f"providers:\n{silenced}{providers}{body}")
    return path
