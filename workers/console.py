"""Celery's side of the console: its logging set up the console's way
(`monitor/events/console.py`), its chatter kept below ``--log-level``, and the database or the
broker going away told once per episode, as one line without a traceback, instead of once per
failing task.

Celery reports these failures in several places, each of which would print every second
during an outage: a task that raises (``celery.app.trace``, with a traceback), a task that
retries (``task_retry``), the consumer reconnecting (``celery.worker.consumer``) and beat
failing to send (``celery.beat``). Each is routed here; the episode ends with the next task
that succeeds (the database) or the next message sent or connection made (the broker).
"""

from __future__ import annotations

import logging
import os
import threading
import time
import warnings
from collections.abc import Callable
from typing import Any

from celery import Celery
from celery.signals import (
    after_task_publish,
    beat_init,
    setup_logging,
    task_failure,
    task_retry,
    task_success,
)

from monitor.db.base import utcnow
from monitor.events.console import configure_console, level_number
from monitor.events.emitting import emit
from monitor.events.episodes import Episode
from monitor.events.words import (
    BROKER_BACK,
    BROKER_LOST,
    DATABASE_BACK,
    DATABASE_LOST,
    back_text,
    lost_text,
)

DATABASE, BROKER = "database", "broker"
WORDS = {
    DATABASE: (DATABASE_LOST, DATABASE_BACK),
    BROKER: (BROKER_LOST, BROKER_BACK),
}
NAME_VARIABLE = "SLAMON_PROCESS_NAME"  # `slamon run` names its children: main, feeds, probes-1
# lock waits are contention, not a lost database: the task's own retry deals with them
CONTENTION = ("database is locked", "deadlock detected", "lock timeout", "could not serialize")
CONSUMER_LOGGER = "celery.worker.consumer.consumer"
CONNECTED_LOGGER = "celery.worker.consumer.connection"
# Celery's start-up lines that are worth a line even when its chatter is hidden
READY = "%s ready."
LIFECYCLE = {("celery.apps.worker", READY), ("celery.beat", "beat: Starting...")}
# where Celery reports a failing task or beat send: once a second while the database is away
REPEATING = frozenset({"celery.app.trace", "celery.beat"})
QUIET_LEVEL = logging.WARNING
DATABASE_CHECK_S = 2.0  # how often a process that lost the database looks for it again


class Episodes:
    """This process's database and broker episodes (the worker's threads share them).

    ``check_database`` (raises while the database is away) is tried every few seconds during a
    database episode, so that its end is told when the database is back, not when this
    process next happens to run a task (the feeds worker may wait minutes for one)."""

    def __init__(
        self, where: str | None = None, check_database: Callable[[], None] | None = None
    ) -> None:
        self.where = where
        self.check_database = check_database
        self._episodes = {DATABASE: Episode(), BROKER: Episode()}
        self._lock = threading.Lock()

    def active(self, kind: str) -> bool:
        return self._episodes[kind].active

    def failed(self, kind: str, reason: object) -> None:
        """Print ``<kind> lost`` if this failure begins an episode; else nothing."""
        with self._lock:
            self._episodes[kind], began = self._episodes[kind].fail(utcnow())
        if began:
            emit(WORDS[kind][0], lost_text(text_of(reason), self.where))
            if kind == DATABASE and self.check_database is not None:
                watch = threading.Thread(target=self._watch_database, daemon=True)
                watch.start()

    def recovered(self, kind: str) -> None:
        """Print ``<kind> back after …`` if an episode was running; else nothing."""
        if not self._episodes[kind].active:  # the common case, without the lock
            return
        with self._lock:
            self._episodes[kind], lasted = self._episodes[kind].recover(utcnow())
        if lasted is not None:
            emit(WORDS[kind][1], back_text(lasted, self.where))

    def _watch_database(self) -> None:
        assert self.check_database is not None
        while self.active(DATABASE):
            time.sleep(DATABASE_CHECK_S)
            if self._database_answers(self.check_database):
                self.recovered(DATABASE)

    @staticmethod
    def _database_answers(check: Callable[[], None]) -> bool:
        try:
            check()
        except Exception:  # still away, whatever the driver calls it; look again later
            return False
        return True


def _ping_database() -> None:
    from monitor.db.engine import check_database
    from workers.runtime import runtime

    check_database(runtime().engine)


episodes = Episodes(os.environ.get(NAME_VARIABLE) or None, _ping_database)


def text_of(thing: object) -> str:
    """``str(thing)``, or its class name when even that fails (Celery's wrapper for an
    exception it could not pickle has a ``__str__`` that returns None)."""
    try:
        return str(thing)
    except Exception:
        return type(thing).__name__


def trouble(exc: BaseException | None) -> tuple[str, BaseException] | None:
    """``(DATABASE or BROKER, the error that says so)`` when ``exc`` or an exception it was
    raised from says that one is unreachable; None for anything else (a bug: it keeps its
    traceback)."""
    for _ in range(5):  # the chain is short: a wrapper or two around the driver's error
        if exc is None:
            return None
        kind = _kind(exc)
        if kind is not None:
            return kind, exc
        exc = exc.__cause__ or exc.__context__
    return None


def _kind(exc: BaseException) -> str | None:
    from kombu.exceptions import OperationalError as BrokerError
    from sqlalchemy.exc import DBAPIError
    from sqlalchemy.exc import OperationalError as DatabaseError

    if any(words in text_of(exc) for words in CONTENTION):
        return None
    if isinstance(exc, DatabaseError):
        return DATABASE
    if isinstance(exc, DBAPIError) and exc.connection_invalidated:  # a connection cut mid-query
        return DATABASE
    if isinstance(exc, BrokerError) or _is_redis_connection_error(exc):
        return BROKER
    # an exception Celery could not pickle arrives wrapped, named by its module and class
    module, name = getattr(exc, "exc_module", ""), getattr(exc, "exc_cls_name", "")
    if module.startswith("sqlalchemy") and name == "OperationalError":
        return DATABASE
    if module.startswith(("kombu", "redis")) and name in ("OperationalError", "ConnectionError"):
        return BROKER
    return None


def _is_redis_connection_error(exc: BaseException) -> bool:
    try:
        from redis.exceptions import ConnectionError as RedisConnectionError
        from redis.exceptions import TimeoutError as RedisTimeoutError
    except ImportError:  # pragma: no cover - celery[redis] installs it
        return False
    return isinstance(exc, RedisConnectionError | RedisTimeoutError)


def broker_trouble_in(record: logging.LogRecord) -> object | None:
    """The reason, when ``record`` is the consumer or beat saying the broker is unreachable
    (they log the error as an argument, not as the record's exception)."""
    from celery.worker.consumer.consumer import CONNECTION_ERROR, CONNECTION_RETRY

    args = record.args if isinstance(record.args, tuple) else ()
    if record.name == CONSUMER_LOGGER and record.msg == CONNECTION_ERROR and len(args) > 1:
        return args[1]
    if record.name == CONSUMER_LOGGER and args[:1] == (CONNECTION_RETRY,) and len(args) > 1:
        return args[1]
    if record.name == "celery.beat" and str(record.msg).startswith("beat: Connection error"):
        return args[0] if args else record.getMessage()
    return None


class ConsoleFilter(logging.Filter):
    """Routes each log record before it is printed: the database or broker failing becomes an
    episode, Celery's per-task and per-retry reports of it are dropped, known noise is dropped,
    and Celery's start-up lines are let through below the level."""

    def __init__(self, quiet: bool, seen: Episodes | None = None) -> None:
        super().__init__()
        self.quiet = quiet
        self.episodes = seen or episodes

    def filter(self, record: logging.LogRecord) -> bool:
        """True to print ``record``. Never raises: a filter's exception would reach the code
        that logged, inside Celery's consumer."""
        try:
            return self._route(record)
        except Exception:
            return True  # print it as it came

    def _route(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        found = trouble(exc)
        if found is not None:
            self.episodes.failed(*found)
            if record.name in REPEATING:
                return False  # a task or a beat send: it repeats every second while it lasts
            if found[1] is exc:  # the outage itself: its line says enough, without a traceback
                record.exc_info, record.exc_text = None, None
            return True  # else an error the outage led to (a bug?): its traceback stays
        reason = broker_trouble_in(record)
        if reason is not None:
            self.episodes.failed(BROKER, reason)
            return False
        if record.name == CONNECTED_LOGGER and str(record.msg).startswith("Connected to"):
            self.episodes.recovered(BROKER)
        if isinstance(record.msg, str) and (record.name, record.msg) in LIFECYCLE:
            record.console = True
            if record.msg == READY and self.episodes.where:  # which of `slamon run`'s workers
                record.msg = f"{self.episodes.where}: {READY}"
        return not (self.quiet and self.noise(record))

    def noise(self, record: logging.LogRecord) -> bool:
        message = str(record.msg) if record.name != "py.warnings" else record.getMessage()
        if record.name == "kombu.connection" and "No hostname was supplied" in message:
            return True  # the filesystem transport has no host; kombu says so per connection
        if record.name == "workers.timing" and self.episodes.active(DATABASE):
            return True  # "task timings not saved yet": the database line already said why
        # Celery's notes to its users' developers (e.g. a default that changes in Celery 6),
        # printed on every reconnect
        return record.name == "py.warnings" and "DeprecationWarning" in message


def configure(level: str | int) -> None:
    """This process's console: slamon's events always, Celery's own lines from ``level`` up.

    Also hides Celery's warning that the worker runs as root, below INFO: it is about
    accepting pickled messages as root, and slamon accepts JSON only; containers often run as
    root, and three workers would print it seven lines each."""
    configure_console(level, filters=[ConsoleFilter(quiet(level))])
    for name in {name for name, _ in LIFECYCLE} | {CONNECTED_LOGGER}:
        logging.getLogger(name).setLevel(min(logging.INFO, level_number(level)))
    if level_number(level) > logging.INFO:
        from celery.exceptions import SecurityWarning

        warnings.filterwarnings("ignore", category=SecurityWarning)


def quiet(level: str | int) -> bool:
    """Celery's banners are for ``--log-level info`` (or debug) only."""
    return level_number(level) > logging.INFO


def connect(app: Celery) -> None:
    """Hook the console into Celery's signals (once per process, whatever the app)."""
    setup_logging.connect(_on_setup_logging, weak=False, dispatch_uid="slamon-console-logging")
    task_failure.connect(_on_failure, weak=False, dispatch_uid="slamon-console-failure")
    task_retry.connect(_on_retry, weak=False, dispatch_uid="slamon-console-retry")
    task_success.connect(_on_success, weak=False, dispatch_uid="slamon-console-success")
    after_task_publish.connect(_on_published, weak=False, dispatch_uid="slamon-console-sent")
    beat_init.connect(_on_beat_init, weak=False, dispatch_uid="slamon-console-beat")


def _on_setup_logging(loglevel: Any = None, **_: Any) -> None:
    """Celery asks whoever answers this signal to set logging up, and then leaves it alone."""
    configure(loglevel or QUIET_LEVEL)


def _on_failure(exception: BaseException | None = None, **_: Any) -> None:
    found = trouble(exception)
    if found is not None:
        episodes.failed(*found)


def _on_retry(reason: Any = None, **_: Any) -> None:
    exc = getattr(reason, "exc", None)
    found = trouble(exc if isinstance(exc, BaseException) else None)
    if found is not None:
        episodes.failed(*found)


def _on_success(**_: Any) -> None:
    episodes.recovered(DATABASE)  # every slamon task reads or writes the database


def _on_published(**_: Any) -> None:
    episodes.recovered(BROKER)


def _on_beat_init(**_: Any) -> None:
    """A beat forked from its worker (``worker --beat`` in Celery's way) is a process of its
    own: its lines say so. A beat in a thread of the worker (``workers.embedded``) is not."""
    if threading.current_thread() is not threading.main_thread():
        return
    episodes.where = f"{episodes.where} beat" if episodes.where else "beat"
