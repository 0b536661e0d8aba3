"""The long-running commands: migrate, run, worker, beat, api."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from sqlalchemy import Engine

    from monitor.config import Config
    from monitor.settings import Settings

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8080
QUEUES = "default,feeds,probes,deliveries"
STOP_GRACE_S = 20.0
THREADS_CONCURRENCY = 16  # a threads-pool worker's default: most of its threads wait


def preflight(settings: Settings, *, migrate: bool = False) -> None:
    """Fail at start with one clear line when config, database, schema or broker are not ready."""
    from monitor.broker import check_broker
    from monitor.config import load_config
    from monitor.db.engine import check_database, make_engine
    from monitor.db.migrate import current_revision, upgrade
    from monitor.errors import SlamonError

    config = load_config(settings.config, missing_ok=True)
    engine = make_engine(settings.database_url)
    try:
        check_database(engine)
        if migrate:
            upgrade(engine)
        elif current_revision(engine) is None:
            raise SlamonError("the database has no slamon schema yet: run `slamon migrate` first")
        _sync_targets(engine, config)
    finally:
        engine.dispose()
    check_broker(settings)


def _sync_targets(engine: Engine, config: Config) -> None:
    """Config targets are probed from the first second, not after the first periodic sync."""
    from monitor.db.base import utcnow
    from monitor.db.engine import make_sessionmaker
    from monitor.targets import sync_config_targets

    with make_sessionmaker(engine)() as session, session.begin():
        sync_config_targets(session, config, utcnow())


def kick_off(app: Any) -> None:
    """Work that should not wait a full period after start: poll the feeds once now."""
    app.send_task("slamon.feeds.poll_all")


@click.command()
def migrate() -> None:
    """Create or upgrade the database schema."""
    from monitor.db.engine import check_database, make_engine
    from monitor.db.migrate import current_revision, upgrade
    from monitor.settings import Settings

    settings = Settings()
    engine = make_engine(settings.database_url)
    check_database(engine)
    upgrade(engine)
    revision = current_revision(engine)
    click.echo(f"schema at revision {revision} ({engine.url.render_as_string(hide_password=True)})")


@click.command()
@click.option("--vantage", help="Name of the place this worker probes from.")
@click.option(
    "--concurrency",
    type=int,
    default=None,
    help=f"Worker threads/processes [threads: {THREADS_CONCURRENCY}; prefork: CPU count].",
)
@click.option(
    "--pool",
    type=click.Choice(["prefork", "threads", "solo"]),
    default="threads",
    show_default=True,
    help="threads: probe shards wait for their slots on the probe loop, so a thread is cheap; "
    "prefork: one process per slot (for CPU-heavy work such as rendering reports).",
)
@click.option("--beat", "embed_beat", is_flag=True, help="Run the beat scheduler inside.")
@click.option("--queues", default=QUEUES, show_default=True)
@click.option("--loglevel", default="INFO", show_default=True)
def worker(
    vantage: str | None,
    concurrency: int | None,
    pool: str,
    embed_beat: bool,
    queues: str,
    loglevel: str,
) -> None:
    """A Celery worker that polls feeds, probes targets and delivers alerts."""
    from monitor.settings import Settings

    if vantage:
        os.environ["SLAMON_VANTAGE"] = vantage
    settings = Settings()
    preflight(settings)
    from workers.app import app

    if "probes" in queues.split(","):
        queues = f"{queues},probes.{settings.vantage}"  # shards sent to this vantage by name
    argv = ["worker", f"--loglevel={loglevel}", f"--queues={queues}", f"--pool={pool}"]
    argv += [f"--hostname=slamon-{settings.vantage}-{os.getpid()}@%h"]
    if concurrency or pool == "threads":
        argv.append(f"--concurrency={concurrency or THREADS_CONCURRENCY}")
    if embed_beat:
        argv += ["--beat", f"--schedule={settings.state_dir / 'beat-schedule'}"]
        kick_off(app)
    app.worker_main(argv)


@click.command()
@click.option("--loglevel", default="INFO", show_default=True)
def beat(loglevel: str) -> None:
    """The beat scheduler (run exactly one, or use a database-lease-safe setup)."""
    from monitor.settings import Settings

    settings = Settings()
    preflight(settings)
    from workers.app import app

    kick_off(app)
    app.start(["beat", f"--loglevel={loglevel}"])


@click.command()
@click.option("--host", default=DEFAULT_HOST, show_default=True)
@click.option("--port", default=DEFAULT_PORT, show_default=True, type=int)
def api(host: str, port: int) -> None:
    """The REST API, /healthz, /metrics and the status page."""
    import uvicorn

    from monitor.api.app import create_app
    from monitor.config import load_config
    from monitor.db.engine import check_database, make_engine
    from monitor.settings import Settings

    settings = Settings()
    load_config(settings.config, missing_ok=True)
    check_database(make_engine(settings.database_url))
    uvicorn.run(create_app(settings), host=host, port=port, log_level="info")


@click.command()
@click.option("--host", default=DEFAULT_HOST, show_default=True)
@click.option("--port", default=DEFAULT_PORT, show_default=True, type=int)
@click.option("--vantage", help="Name of the place this worker probes from.")
@click.option(
    "--probe-processes",
    type=click.IntRange(1, 64),
    default=1,
    show_default=True,
    help="Processes that take probe shards: one probes about 1,500 targets a second (one "
    "core); give more on more cores for more.",
)
def run(host: str, port: int, vantage: str | None, probe_processes: int) -> None:
    """Worker with embedded beat and the API, together (the embedded default).

    Migrates the schema first. Ctrl-C stops every child and waits for them.
    """
    from monitor.settings import Settings

    settings = Settings()
    preflight(settings, migrate=True)
    me = [sys.executable, "-m", "monitor.cli"]
    # Feeds get their own worker: a provider that hangs must not delay a probe round or an alert.
    main = [
        *me,
        "worker",
        "--beat",
        "--pool=threads",
        "--concurrency=8",
        "--queues=default,deliveries",
    ]
    feeds = [*me, "worker", "--pool=threads", "--concurrency=4", "--queues=feeds"]
    # Probes get processes of their own: one probes as fast as one core allows (the GIL), and
    # the dispatch that claims every slot must not queue behind probe rounds. Their threads
    # mostly wait for slots on the probe loop, so there are more of them than cores.
    probes = [*me, "worker", "--pool=threads", "--queues=probes"]
    workers = [main, feeds] + [list(probes) for _ in range(probe_processes)]
    if vantage:
        for argv in workers:
            argv.append(f"--vantage={vantage}")
    children = [_spawn(argv) for argv in workers]
    children.append(_spawn([*me, "api", f"--host={host}", f"--port={port}"]))
    click.echo(f"slamon running: API on http://{host}:{port}/ (Ctrl-C stops)", err=True)
    code = _supervise(children)
    sys.exit(code)


def _spawn(argv: list[str]) -> subprocess.Popen[bytes]:
    """A child in its own session (Ctrl-C reaches only us; we stop children in order) that
    dies with us even if we are killed."""
    return subprocess.Popen(argv, start_new_session=True, preexec_fn=_die_with_parent)  # noqa: S603


def _die_with_parent() -> None:
    if sys.platform.startswith("linux"):
        import ctypes

        pr_set_pdeathsig = 1
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(pr_set_pdeathsig, signal.SIGTERM)


def _supervise(children: list[subprocess.Popen[bytes]]) -> int:
    """Wait until a signal arrives or a child exits, then stop every child; our exit code."""
    stopping = {"signal": 0}

    def on_signal(signum: int, _frame: Any) -> None:
        stopping["signal"] = signum

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    while not stopping["signal"] and all(c.poll() is None for c in children):
        time.sleep(0.2)
    crashed = [c for c in children if c.poll() not in (None, 0)]
    _stop(children)
    if stopping["signal"]:
        click.echo("slamon stopped", err=True)
        return 0
    return 1 if crashed else 0


def _stop(children: list[subprocess.Popen[bytes]]) -> None:
    for child in children:
        if child.poll() is None:
            os.killpg(child.pid, signal.SIGTERM)
    deadline = time.monotonic() + STOP_GRACE_S
    for child in children:
        try:
            child.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            os.killpg(child.pid, signal.SIGKILL)
            child.wait()


COMMANDS = (migrate, run, worker, beat, api)
