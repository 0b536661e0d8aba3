"""The long-running commands: migrate, run, worker, beat, api (and `slamon run`'s preflight
child). `run` sizes its probe processes by ``capacity`` and keeps its children running with
``supervisor``."""

from __future__ import annotations

import logging
import os
import socket
import subprocess
import sys
from typing import TYPE_CHECKING, Any

import click

from monitor.cli.capacity import (
    PROBES_PER_PROCESS,
    configured_probe_rate,
    dedicated_probe_processes,
)
from monitor.events.console import configure_console, level_number
from monitor.supervision import supervise_in_place

if TYPE_CHECKING:
    from sqlalchemy import Engine

    from monitor.config import Config
    from monitor.settings import Settings

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8080
QUEUES = "default,feeds,probes,deliveries"
LOAD_PREFIX = "probe-load "  # the preflight child's one line for the supervisor
THREADS_CONCURRENCY = 16  # a threads-pool worker's default: most of its threads wait
# `slamon run`'s main process: feed polls (each bounded by its timeout) must leave threads for
# the dispatch, the alert evaluation and the deliveries
MAIN_THREADS = 24
LOG_LEVEL = click.option(
    "--log-level",
    "--loglevel",
    "log_level",
    type=click.Choice(["debug", "info", "warning", "error"], case_sensitive=False),
    default="warning",
    show_default=True,
    help="Celery's and uvicorn's own lines from this level up (info: banners, every task, "
    "every request). slamon's events (outages, incidents, alerts…) are printed at any level.",
)


def preflight(settings: Settings, *, migrate: bool = False) -> None:
    """Fail at start with one clear line when config, database, schema or broker are not ready."""
    from monitor.broker import check_broker
    from monitor.config import load_config
    from monitor.db.engine import check_database, make_engine
    from monitor.db.schema import stored_revision
    from monitor.errors import SlamonError

    config = load_config(settings.config, missing_ok=True)
    engine = make_engine(settings.database_url)
    try:
        check_database(engine)
        if migrate:
            from monitor.db.migrate import upgrade  # Alembic: only where the schema may change

            upgrade(engine)
        elif stored_revision(engine) is None:
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
@click.option(
    "--beat", "embed_beat", is_flag=True, help="Run the beat scheduler inside (in a thread)."
)
@click.option(
    "--api",
    "api_address",
    metavar="HOST:PORT",
    help="Serve the API, /metrics and the status page from this process too (in a thread).",
)
@click.option("--queues", default=QUEUES, show_default=True)
@LOG_LEVEL
def worker(
    vantage: str | None,
    concurrency: int | None,
    pool: str,
    embed_beat: bool,
    api_address: str | None,
    queues: str,
    log_level: str,
) -> None:
    """A Celery worker that polls feeds, probes targets and delivers alerts."""
    from monitor.settings import Settings
    from workers import console, embedded

    if vantage:
        os.environ["SLAMON_VANTAGE"] = vantage
    console.configure(log_level)  # before Celery's own start-up lines, not after them
    settings = Settings()
    preflight(settings)
    from workers.app import app, start_worker

    names = queues.split(",")
    if "probes" in names:
        names.append(f"probes.{settings.vantage}")  # shards sent to this vantage by name
    services: list[embedded.Service] = []
    if embed_beat:
        services.append(embedded.EmbeddedBeat(app))
        kick_off(app)
    if api_address:
        host, port = _address(api_address)
        chatty = level_number(log_level) <= logging.INFO
        services.append(embedded.EmbeddedApi(settings, host, port, log_level, access_log=chatty))
    embedded.run_beside(services)
    threads = concurrency or (THREADS_CONCURRENCY if pool == "threads" else None)
    code = start_worker(
        app,
        queues=names,
        pool=pool,
        concurrency=threads,
        hostname=f"slamon-{settings.vantage}-{os.getpid()}@%h",
        log_level=log_level,
        quiet=console.quiet(log_level),
    )
    sys.exit(code)


def _address(value: str) -> tuple[str, int]:
    host, _, port = value.rpartition(":")
    if not host or not port.isdigit():
        raise click.BadParameter(f"expected HOST:PORT, got {value!r}", param_hint="--api")
    return host.strip("[]"), int(port)


@click.command()
@LOG_LEVEL
def beat(log_level: str) -> None:
    """The beat scheduler: run any number, they elect one leader through a lease in the database."""
    from monitor.settings import Settings
    from workers import console

    console.configure(log_level)
    settings = Settings()
    preflight(settings)
    from workers.app import app, run_beat

    kick_off(app)
    sys.exit(run_beat(app, log_level=log_level, quiet=console.quiet(log_level)))


@click.command()
@click.option("--host", default=DEFAULT_HOST, show_default=True)
@click.option("--port", default=DEFAULT_PORT, show_default=True, type=int)
@LOG_LEVEL
def api(host: str, port: int, log_level: str) -> None:
    """The REST API, /healthz, /metrics and the status page."""
    import uvicorn

    from monitor.api.app import create_app
    from monitor.config import load_config
    from monitor.db.engine import check_database, make_engine
    from monitor.settings import Settings

    configure_console(log_level)
    settings = Settings()
    load_config(settings.config, missing_ok=True)
    check_database(make_engine(settings.database_url))
    chatty = level_number(log_level) <= logging.INFO
    # log_config=None: uvicorn's loggers print through the console's handler, not their own
    uvicorn.run(
        create_app(settings),
        host=host,
        port=port,
        log_level=log_level.lower(),
        log_config=None,
        access_log=chatty,  # a line per request only when asked for
    )


@click.command()
@click.option("--host", default=DEFAULT_HOST, show_default=True)
@click.option("--port", default=DEFAULT_PORT, show_default=True, type=int)
@click.option("--vantage", help="Name of the place this worker probes from.")
@click.option(
    "--probe-processes",
    type=click.IntRange(1, 64),
    default=None,
    help="Processes of their own that take probe shards [default: none while one core keeps "
    f"the configured schedule (the main process probes), else one per {PROBES_PER_PROCESS:,} "
    "probes a second, at most one per core].",
)
@LOG_LEVEL
def run(
    host: str, port: int, vantage: str | None, probe_processes: int | None, log_level: str
) -> None:
    """Worker with embedded beat and the API, together (the embedded default).

    Migrates the schema first. A child that dies is started again (after 2 s, then longer
    while it keeps dying; one that dies at once on every start stops the service, naming it);
    Ctrl-C or SIGTERM stops every child and waits for them.

    The checks, the migration and reading the config run in a one-shot child (``slamon
    preflight``), so the application is never loaded here; then this process becomes the
    supervisor (``monitor.supervision``, same process id), without the command line's imports.
    """
    configure_console(log_level)
    me = [sys.executable, "-m", "monitor.cli"]
    load = _preflight_in_child([*me, "preflight", "--migrate", f"--log-level={log_level}"])
    _check_port(host, port)
    a_worker = [*me, "worker", f"--log-level={log_level}", "--pool=threads"]
    # One process runs beat, the API and the light queues (feeds, alerts, deliveries), each
    # in threads: they mostly wait, and every extra process would load the application again.
    # Probes join it while one core keeps their schedule; past that they get processes of
    # their own (one probes about as fast as one core allows, the GIL), and the main process
    # keeps the dispatch that claims every slot clear of probe rounds.
    dedicated = probe_processes or dedicated_probe_processes(load, os.cpu_count() or 1)
    light = "default,deliveries,feeds" + ("" if dedicated else ",probes")
    main = [*a_worker, "--beat", f"--api={host}:{port}", f"--queues={light}"]
    main.append(f"--concurrency={MAIN_THREADS}")
    workers = {"main": main}
    probes = [*a_worker, "--queues=probes"]
    workers.update({f"probes-{n}": list(probes) for n in range(1, dedicated + 1)})
    if vantage:
        for argv in workers.values():
            argv.append(f"--vantage={vantage}")
    banner = f"slamon running: API on http://{host}:{port}/ (Ctrl-C stops)"
    children = [(f"worker {name}", argv) for name, argv in workers.items()]
    supervise_in_place(children, log_level, banner)


@click.command("preflight", hidden=True)
@click.option("--migrate", "do_migrate", is_flag=True, help="Upgrade the schema first.")
@LOG_LEVEL
def preflight_command(do_migrate: bool, log_level: str) -> None:
    """What `slamon run` checks before it starts its children, in a process of its own: print
    the configured probe load (probes a second) on stdout for the supervisor to size by."""
    from monitor.config import load_config
    from monitor.settings import Settings

    configure_console(log_level)
    settings = Settings()
    preflight(settings, migrate=do_migrate)
    config = load_config(settings.config, missing_ok=True)
    click.echo(f"{LOAD_PREFIX}{configured_probe_rate(config):.3f}")


def _preflight_in_child(argv: list[str]) -> float:
    """Run the preflight child; its failure (already explained on stderr) stops us with its
    exit code. The configured probe load it printed."""
    done = subprocess.run(argv, stdout=subprocess.PIPE, check=False)  # noqa: S603
    if done.returncode != 0:
        sys.exit(done.returncode)
    for line in done.stdout.decode(errors="replace").splitlines():
        if line.startswith(LOAD_PREFIX):
            return float(line.removeprefix(LOAD_PREFIX))
    return 0.0


def _check_port(host: str, port: int) -> None:
    """Fail at start with one line when the API's port is taken (else the API child would die
    and be restarted for ever)."""
    from monitor.errors import SlamonError

    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds
        try:
            probe.bind((host, port))
        except OSError as exc:
            raise SlamonError(f"cannot serve the API on {host}:{port}: {exc.strerror}") from None


COMMANDS = (migrate, run, worker, beat, api, preflight_command)
