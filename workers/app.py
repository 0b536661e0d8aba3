"""The Celery app. Settings come from the environment; the beat schedule from the config."""

from __future__ import annotations

from typing import Any

from celery import Celery
from celery.concurrency import get_implementation
from celery.utils.nodenames import default_nodename, host_format

from monitor.config import load_config
from monitor.settings import Settings, get_settings
from workers import broker_watch, console, heap, timing
from workers.schedule import build_beat_schedule, task_routes

FILESYSTEM_POLL_S = 0.1


def broker_options(settings: Settings) -> dict[str, Any]:
    """Transport options; the filesystem transport needs its folders to exist."""
    if not settings.uses_filesystem_broker:
        return {"visibility_timeout": settings.broker_visibility_timeout}
    folder = settings.broker_folder.resolve()
    for sub in ("queue", "processed", "control"):
        (folder / sub).mkdir(parents=True, exist_ok=True)
    return {
        "data_folder_in": str(folder / "queue"),
        "data_folder_out": str(folder / "queue"),
        "processed_folder": str(folder / "processed"),
        "control_folder": str(folder / "control"),  # else Celery writes ./control in the cwd
        "store_processed": False,
        # how long an idle consumer sleeps between looks at the folder (kombu's default is 1 s,
        # which delayed every probe round by up to a second); a look is one directory listing
        "polling_interval": FILESYSTEM_POLL_S,
    }


def create_app(settings: Settings | None = None) -> Celery:
    settings = settings or get_settings()
    settings.state_dir.mkdir(parents=True, exist_ok=True)  # the filesystem broker's folders
    config = load_config(settings.config, missing_ok=True)
    # connections that retry every 0.5-2 s, not kombu's 2-30 s (workers/reconnect.py)
    # every task admitted by the database when the leading scheduler sent it (workers/fencing.py)
    app = Celery(
        "slamon",
        include=["workers.tasks"],
        amqp="workers.reconnect:SlamonAMQP",
        task_cls="workers.fencing:FencedTask",
    )
    app.conf.update(
        broker_url=settings.broker_url,
        broker_transport_options=broker_options(settings),
        # the filesystem transport with atomic writes (workers/fs_broker.py); others by URL
        broker_transport="workers.fs_broker:Transport" if settings.uses_filesystem_broker else None,
        broker_connection_retry_on_startup=True,
        # retry for ever: workers/broker_watch.py gives the broker up after a time, not a count
        broker_connection_max_retries=None,
        task_serializer="json",
        result_serializer="json",
        accept_content=["json"],
        task_ignore_result=True,
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        worker_prefetch_multiplier=1,
        worker_hijack_root_logger=False,
        task_default_queue="default",
        task_routes=task_routes(),
        timezone="UTC",
        enable_utc=True,
        beat_schedule=build_beat_schedule(config),
        # any number of schedulers, one leader by a lease in the database (workers/leader.py)
        beat_scheduler="workers.leader:LeaderScheduler",
    )
    timing.connect(app)
    console.connect(app)  # slamon's console lines; Celery's chatter below --log-level
    broker_watch.connect(app, settings)  # a broker lost for good: exit 75, to be restarted
    heap.connect()  # the startup heap out of the collector's way once ready (workers/heap.py)
    return app


def start_worker(
    app: Celery,
    *,
    queues: list[str],
    pool: str,
    concurrency: int | None,
    hostname: str,
    log_level: str,
    quiet: bool,
) -> int:
    """Run a worker in this process until it stops; its exit code.

    What `celery worker` does after parsing its options, without its command line: that
    loads every `celery` subcommand, `celery shell`'s prompt_toolkit among them, about
    10 MiB a worker process never uses."""
    worker = app.Worker(
        hostname=host_format(default_nodename(hostname)),
        pool_cls=get_implementation(pool),
        concurrency=concurrency,
        queues=queues,
        loglevel=log_level.upper(),
        logfile=None,
        pidfile=None,
        statedb=None,
        quiet=quiet,
        # workers need not know of each other: gossip and mingle only cost broker traffic and,
        # when the broker goes away, a traceback each from Celery's own stop (Gossip's)
        without_gossip=True,
        without_mingle=True,
    )
    worker.start()
    return broker_watch.exit_code(int(worker.exitcode or 0))


def run_beat(app: Celery, *, log_level: str, quiet: bool) -> int:
    """Run the beat scheduler in this process until it stops (as `celery beat` does, without
    its command line; see :func:`start_worker`); its exit code (75 when it gave the broker up)."""
    app.Beat(loglevel=log_level.upper(), quiet=quiet).run()
    return broker_watch.exit_code()


app = create_app()
