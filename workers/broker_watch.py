"""A worker or beat that has lost its broker for good exits non-zero, so that whatever runs it
(systemd, Kubernetes, `slamon run`) starts it again.

What Celery 5.7 does on its own, measured with workers/reconnect.py's 0.5-2 s between tries:

- a broker that refuses connections (Redis stopped, its host up): the worker tries
  ``broker_connection_max_retries`` (100) times, about 3 minutes, then stops with code 1 and
  a traceback; beat (workers/leader.py) logs each failed send and never stops;
- a broker that does not answer (its host gone, packets dropped, a frozen Redis): the
  worker's consumer waits on its socket for ever and notices nothing, and SIGTERM's warm
  shutdown waits for the broker too (it exited 0 when the broker came back, 13 minutes on).

So each worker and each ``slamon beat`` asks the broker itself, from a thread of its own:
every few seconds one connection with a timeout (``monitor.broker.check_broker``, what
/healthz asks). When nothing has answered for ``SLAMON_BROKER_GIVE_UP_AFTER`` seconds it
prints one ``broker given up`` line and stops with :data:`EXIT_CODE`: a worker warm (the tasks
it runs finish, it takes no new one), a beat as on SIGTERM (the lease is let go). Whatever is
stuck on the broker's socket is not waited for: the process ends :data:`STOP_GRACE_S` later
whatever it is doing. Celery's own count of retries is switched off (``connect``), so this
bound is the only one, whatever the broker's failure looks like.

A beat inside a worker (``slamon worker --beat``) is the worker's: the worker's watch covers
the process.
"""

from __future__ import annotations

import functools
import logging
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

from celery import Celery
from celery.signals import beat_init, worker_init, worker_shutdown

from monitor.broker import _redact, check_broker
from monitor.events.emitting import emit
from monitor.events.words import BROKER_GIVEN_UP, broker_given_up_text
from monitor.settings import Settings

log = logging.getLogger(__name__)

EXIT_CODE = os.EX_TEMPFAIL  # 75: "temporary failure, try again"; systemd and k8s restart it
STOP_GRACE_S = 10.0  # a clean stop after giving up, before the process is ended regardless
CHECK_EVERY_S = 5.0  # at most; a short bound is checked more often (CHECKS_PER_BOUND)
CHECKS_PER_BOUND = 5
NAME_VARIABLE = "SLAMON_PROCESS_NAME"  # `slamon run` names its children (workers/console.py)


class BrokerWatch:
    """Asks ``check`` (raises while the broker does not answer) every ``every`` seconds from a
    daemon thread; calls ``give_up(silent_s, reason)`` once, when nothing has answered for
    ``give_up_after`` seconds. ``clock`` is monotonic seconds."""

    def __init__(
        self,
        check: Callable[[], None],
        give_up_after: float,
        give_up: Callable[[float, str], None],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.check = check
        self.give_up_after = give_up_after
        self.every = min(CHECK_EVERY_S, give_up_after / CHECKS_PER_BOUND)
        self.give_up = give_up
        self.clock = clock
        self.answered_at = clock()
        self.reason = ""  # the last failure's, in the transport's words
        self.gave_up = False
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="slamon-broker-watch", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()

    def look(self) -> bool:
        """Ask the broker once; True when it is time to give up (and so only once)."""
        try:
            self.check()
        except Exception as exc:  # whatever the transport raises: it did not answer
            self.reason = _why(exc)
        else:
            self.answered_at = self.clock()
            return False
        silent_s = self.clock() - self.answered_at
        if self.gave_up or silent_s < self.give_up_after:
            return False
        self.gave_up = True
        self.give_up(silent_s, self.reason)
        return True

    def _run(self) -> None:
        while not self._stop.wait(self.every):
            if self.look():
                return


def _why(exc: BaseException) -> str:
    """The transport's own words, without check_broker's "broker <url> unreachable: "."""
    text = str(exc)
    return text.partition(" unreachable: ")[2] or text or type(exc).__name__


_watch: BrokerWatch | None = None


def gave_up() -> bool:
    """Whether this process gave its broker up (``run_beat`` then exits with EXIT_CODE)."""
    return _watch is not None and _watch.gave_up


def exit_code(code: int = 0) -> int:
    """``code``, or :data:`EXIT_CODE` once this process gave its broker up."""
    return EXIT_CODE if gave_up() else code


def connect(app: Celery, settings: Settings) -> None:
    """Watch the broker in every worker and standalone beat this app starts (once per
    process). The app must retry for ever on its own (``broker_connection_max_retries=None``):
    the watch decides when to give up."""

    def on_worker_init(**_: Any) -> None:
        _start(settings, _stop_worker)

    def on_beat_init(**_: Any) -> None:
        if threading.current_thread() is threading.main_thread():  # else inside a worker
            _start(settings, _stop_beat)

    worker_init.connect(on_worker_init, weak=False, dispatch_uid="slamon-broker-watch-worker")
    beat_init.connect(on_beat_init, weak=False, dispatch_uid="slamon-broker-watch-beat")
    worker_shutdown.connect(_on_shutdown, weak=False, dispatch_uid="slamon-broker-watch-stop")


def _start(settings: Settings, stop: Callable[[], None]) -> None:
    global _watch
    if _watch is not None:
        return
    broker = _redact(settings.broker_url)
    timeout = min(3.0, settings.broker_give_up_after / CHECKS_PER_BOUND)

    def give_up(silent_s: float, reason: str) -> None:
        where = os.environ.get(NAME_VARIABLE) or None
        emit(BROKER_GIVEN_UP, broker_given_up_text(broker, silent_s, reason, EXIT_CODE, where))
        stop()
        ending = threading.Timer(STOP_GRACE_S, _end)
        ending.daemon = True
        ending.start()

    check = functools.partial(check_broker, settings, timeout)
    _watch = BrokerWatch(check, settings.broker_give_up_after, give_up)
    _watch.start()


def _on_shutdown(**_: Any) -> None:
    if _watch is not None:
        _watch.stop()


def _stop_worker() -> None:
    """What SIGTERM does to a worker (a warm stop), with our exit code instead of 0."""
    from celery.worker import state

    state.should_stop = EXIT_CODE


def _stop_beat() -> None:
    """SIGTERM, Celery's way to stop a beat: the schedule closed (the lease let go), then
    SystemExit, which also breaks a send that waits on the broker's socket; ``run_beat`` then
    returns EXIT_CODE. Sent to the main thread: sent to the process, it would reach this
    thread, and the main thread's wait on the socket would go on."""
    main = threading.main_thread().ident
    assert main is not None
    signal.pthread_kill(main, signal.SIGTERM)


def _end() -> None:
    """The clean stop did not finish: something waits on the broker. End the process."""
    log.error("still stopping %g s after giving the broker up: ending now", STOP_GRACE_S)
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    os._exit(EXIT_CODE)
