"""Services a worker can run beside its tasks, in threads of its own process: the beat
scheduler and the API. The embedded default (`slamon run`) so runs beat, the API and the light
queues in one process instead of three, each of which would load the application again.

Started when the worker is ready and stopped when it shuts down (Celery's signals). A service
that dies on its own (the API cannot bind its port, say) stops the worker with it, so that
`slamon run` restarts the whole process instead of leaving it half alive.
"""

from __future__ import annotations

import logging
import os
import signal
import threading
from dataclasses import dataclass, field
from typing import Any, Protocol

from celery import Celery
from celery.signals import worker_ready, worker_shutdown

log = logging.getLogger(__name__)
STOP_TIMEOUT_S = 10.0


class Service(Protocol):
    name: str

    def start(self) -> None: ...
    def stop(self) -> None: ...


@dataclass
class EmbeddedBeat:
    """Celery beat in a thread (Celery's ``EmbeddedService(thread=True)``), not the process
    ``worker --beat`` forks: the same schedule, without a second copy of the application."""

    app: Celery
    name: str = "beat"
    _thread: Any = None

    def start(self) -> None:
        from celery.beat import EmbeddedService

        self._thread = EmbeddedService(
            self.app,
            thread=True,
            scheduler_cls=self.app.conf.beat_scheduler,  # the leader-elected one: no file
        )
        self._thread.start()

    def stop(self) -> None:
        if self._thread is not None:
            self._thread.stop()
            self._thread.join(STOP_TIMEOUT_S)


@dataclass
class EmbeddedApi:
    """The API (uvicorn on its own event loop) in a thread. ``settings`` as ``slamon api``
    reads them; uvicorn installs no signal handlers off the main thread, so the worker's own
    handle Ctrl-C and SIGTERM."""

    settings: Any
    host: str
    port: int
    log_level: str
    access_log: bool = False
    name: str = "api"
    _server: Any = None
    _thread: threading.Thread | None = None
    _stopping: threading.Event = field(default_factory=threading.Event)

    def start(self) -> None:
        import uvicorn

        from monitor.api.app import create_app

        config = uvicorn.Config(
            create_app(self.settings),
            host=self.host,
            port=self.port,
            log_level=self.log_level.lower(),
            log_config=None,
            access_log=self.access_log,
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._serve, name="slamon-api", daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        try:
            self._server.run()
        except BaseException:  # SystemExit when the port cannot be bound, or a bug
            log.exception("the API stopped")
        if not self._stopping.is_set():
            log.error("the API stopped on its own: stopping this worker so it is restarted")
            os.kill(os.getpid(), signal.SIGTERM)

    def stop(self) -> None:
        self._stopping.set()
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(STOP_TIMEOUT_S)


def run_beside(services: list[Service]) -> None:
    """Start ``services`` once this process's worker is ready; stop them when it shuts down."""
    if not services:
        return

    def started(**_: Any) -> None:
        for service in services:
            service.start()

    def stopped(**_: Any) -> None:
        for service in reversed(services):
            service.stop()

    worker_ready.connect(started, weak=False, dispatch_uid="slamon-embedded-start")
    worker_shutdown.connect(stopped, weak=False, dispatch_uid="slamon-embedded-stop")
